#pragma once
// rm.internal.forgotten — the scheduler of one top-level nodepool -> heartbeat intake: its answer to the
// intake's `forget` operations (node_ops.hpp). A machine that still holds shares (an unmanaged reservation on
// a down node, a share whose eviction the orchestrator has not confirmed) or carries an admin mark is kept;
// the intake keeps such a node in its table and asks again later. Only the scheduler knows what a machine
// holds, hence the round trip.

#include <string>
#include <string_view>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

struct machines_forgotten {
  std::string pool;                    // the top-level nodepool that answers
  std::vector<std::string> forgotten;  // removed from the pool, or never known there
  std::vector<std::string> kept;       // still holding something: not forgotten

  friend bool operator==(const machines_forgotten&, const machines_forgotten&) = default;
};

std::string encode(const envelope& env, const machines_forgotten& msg);
result<machines_forgotten> decode_machines_forgotten(std::string_view topic, std::string_view body,
                                                     const decode_limits& limits = {}, envelope* env_out = nullptr);

}  // namespace rmbus::messages
