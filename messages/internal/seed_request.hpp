#pragma once
// rm.internal.seedreq — a fresh pool scheduler -> publication: "send me the last schedule published for my
// pool". Publication answers on rm.internal.seed.<pool> with that schedule (an rm_state: the last one it
// published, or, in a standby, the last one it heard the active publish; empty when there is none).
//
// A fresh scheduler (a replacement after a hang or a throw, one started by a reconfiguration, one of a new
// HA active) starts from that schedule: every share it lists occupies its node until a work map shows the
// process ended or a later schedule withdraws it (docs/reliability.md, "In-flight grants").
//
// `generation` orders the schedulers of one pool (the wall clock of the scheduler's creation, in ms, made
// strictly increasing by its spawner): from the request on, publication takes no plan of an older
// generation, so a replaced scheduler that answers late can never have its grants published beside its
// successor's.

#include <cstdint>
#include <string>
#include <string_view>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

struct seed_request {
  std::string pool;
  std::uint64_t generation = 0;

  friend bool operator==(const seed_request&, const seed_request&) = default;
};

std::string encode(const envelope& env, const seed_request& msg);
result<seed_request> decode_seed_request(std::string_view topic, std::string_view body,
                                         const decode_limits& limits = {}, envelope* env_out = nullptr);

}  // namespace rmbus::messages
