#pragma once
// How long the admin endpoint waits: for the answers of the pools (a pool that does not answer in time is
// named in the reply), and, within that, how long a fresh scheduler holds a query for its first round (it
// replaced another after a reconfiguration or a failure, and does not know the running work before it: an
// answer from it would show an empty cluster). Half the deadline, so that its answer, `restarting` when the
// round has not come, still reaches admin in time.

#include <algorithm>
#include <chrono>

#include "config/rm_config.hpp"

namespace rmbus::actors {

inline std::chrono::milliseconds admin_deadline(const config::rm_config& cfg) {
  return std::chrono::milliseconds(std::clamp<std::int64_t>(cfg.runtime.round_timeout_ms, 1000, 5000));
}

inline std::chrono::milliseconds first_round_wait(const config::rm_config& cfg) { return admin_deadline(cfg) / 2; }

// `status` gathers counts from the pools too, but stays quick: a pool slower than this is named, not waited for.
inline std::chrono::milliseconds status_deadline(const config::rm_config& cfg) {
  return std::min(admin_deadline(cfg), std::chrono::milliseconds(1000));
}

}  // namespace rmbus::actors
