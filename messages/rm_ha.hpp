#pragma once
// rm.ha — sent by every rmbus process with HA on ([ha] enabled), every [ha] beacon_ms: who it is, which epoch
// it holds and whether it is the active RM. Standbys elect a new active from what they hear here
// (actors/ha_election.hpp); monitors show the active's instance and epoch.
//
// The epoch is the envelope's `epoch` key (messages/envelope.hpp), the same key the active's rm.state,
// rm.nodes, rm.cycle and rm.events carry: one fencing token, one name. On rm.ha it is required.
//   state  active    the sender publishes the schedule under `epoch`
//          standby   it listens, ready to take over; `epoch` is the highest it has seen
//          handover  the active steps down on purpose (rmbus-admin handover): `to` takes over at once
// `admin` is the sender's admin endpoint, so a standby can send a client to the active.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

enum class ha_state { active, standby, handover };

std::string_view to_string(ha_state s);
std::optional<ha_state> parse_ha_state(std::string_view s);

struct rm_ha {
  std::uint64_t epoch = 0;  // wire: the envelope's `epoch` key
  std::string instance;     // the sender's instance name (rmbus.<pid>.<start>), non-empty
  std::uint64_t rank = 0;   // [ha] rank: lower wins among equal epochs and among standbys taking over
  ha_state state = ha_state::standby;
  std::string admin;        // optional on the wire: its admin endpoint; empty = absent
  std::string to;           // optional on the wire: with `handover`, the instance that takes over

  friend bool operator==(const rm_ha&, const rm_ha&) = default;
};

// env.epoch is ignored: msg.epoch is written in its place.
std::string encode(const envelope& env, const rm_ha& msg);
// Refuses a body without `epoch`, with an empty `instance`, or an unknown `state`.
result<rm_ha> decode_rm_ha(std::string_view topic, std::string_view body, const decode_limits& limits = {},
                           envelope* env_out = nullptr);

}  // namespace rmbus::messages
