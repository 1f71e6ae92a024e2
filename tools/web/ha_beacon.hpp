#pragma once
// The RM's high-availability beacon (topic rm.ha), as far as a monitor needs it: which RM instance speaks,
// its fencing epoch, its rank and its role. The topic is being added to the contract by the HA work; until it
// is documented in docs/protocol.md the monitor reads it leniently: every key is optional, a key of the wrong
// type is ignored (and counted), and an unknown key is ignored, so the page shows what is there and never
// breaks on what is not. The same optional `epoch` may appear on rm.state; read_epoch() takes it from a
// decoded value tree.
//
// Thread-safety: plain values and functions.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "messages/result.hpp"
#include "messages/value.hpp"

namespace rmbus::web {

inline constexpr std::string_view ha_topic = "rm.ha";

struct ha_beacon {
  std::optional<std::uint64_t> epoch;
  std::string instance;
  std::optional<std::uint64_t> rank;
  std::string state;            // the role as the RM words it (e.g. active, standby)
  std::string admin;            // the sender's admin endpoint (messages/rm_ha.hpp), empty when absent
  std::uint64_t wrong_types = 0;  // keys present with a type we did not expect (ignored)
};

// Reads the beacon's keys out of a decoded body; a body that is not a map gives an error.
messages::result<ha_beacon> read_ha_beacon(const messages::value& body);

}  // namespace rmbus::web
