#pragma once
// rm.internal.plansync — publication -> the scheduler of one pool: "your change plans do not follow the last
// plan of yours I took; send me a full plan". Publication sends it when a change plan names a base it did not
// take (a plan lost on the bus between processes, a late plan, a chain it cleared on an HA step-down) or after
// it refused a plan of the pool (the overbooking guard: its table stays at the last good plan, on which the
// scheduler's chain no longer builds), and ignores the pool's change plans until a full one comes.
//
// The pool's scheduler of `generation` (or a newer one) answers at once with a full plan of its last round;
// a scheduler that has not planned yet sends a full plan first anyway.

#include <cstdint>
#include <string>
#include <string_view>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

struct plan_sync_request {
  std::string pool;
  std::uint64_t generation = 0;  // the scheduler generation whose chain broke

  friend bool operator==(const plan_sync_request&, const plan_sync_request&) = default;
};

std::string encode(const envelope& env, const plan_sync_request& msg);
result<plan_sync_request> decode_plan_sync_request(std::string_view topic, std::string_view body,
                                                   const decode_limits& limits = {},
                                                   envelope* env_out = nullptr);

}  // namespace rmbus::messages
