#pragma once
// rm.internal.worksync — a pool scheduler -> work-map differencing: "my copy of this pool's work map is not
// the one your slices build on; send me a full slice". A scheduler sends it when a change slice names a base
// it does not hold (a slice lost on the bus between processes, or the scheduler is fresh: a replacement, a
// new process) and ignores change slices until a full one comes (actors/slice_chain.hpp).
//
// Differencing answers at once with a full slice for the round `cycle` when that round is still waiting for
// the pool (so the round is not lost to a timeout), and otherwise makes the pool's next slice a full one.

#include <cstdint>
#include <string>
#include <string_view>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

struct work_sync_request {
  std::string pool;
  std::uint64_t cycle = 0;  // the round whose slice could not be applied

  friend bool operator==(const work_sync_request&, const work_sync_request&) = default;
};

std::string encode(const envelope& env, const work_sync_request& msg);
result<work_sync_request> decode_work_sync_request(std::string_view topic, std::string_view body,
                                                   const decode_limits& limits = {},
                                                   envelope* env_out = nullptr);

}  // namespace rmbus::messages
