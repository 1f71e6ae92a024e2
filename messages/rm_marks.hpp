#pragma once
// rm.marks — sent by the RM (the active one, with HA) to standbys and monitors: the operator's marks that
// outlive a round, as they stand: the nodes varied off (rmbus-admin vary-off) and those drained (rmbus-admin
// drain), which take no new work until cleared, through reconfigurations and, with HA, takeovers and handovers.
//
// Published whole when a mark changes and, with HA, every [ha] takeover_ms, so a standby that starts late
// holds them within one takeover time (the marks are few: the list is bounded by [limits] max_nodes). A standby
// makes its marks the active's (actors/eviction.cpp), so the one that takes over keeps them.

#include <string>
#include <string_view>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

struct rm_marks {
  std::vector<std::string> offline;  // varied off, sorted by name
  std::vector<std::string> drained;  // drained, sorted by name (optional key, absent when empty)

  friend bool operator==(const rm_marks&, const rm_marks&) = default;
};

std::string encode(const envelope& env, const rm_marks& msg);
// Refuses an empty node name and a name given twice in one list (field `offline` or `drained`).
result<rm_marks> decode_rm_marks(std::string_view topic, std::string_view body, const decode_limits& limits = {},
                                 envelope* env_out = nullptr);

}  // namespace rmbus::messages
