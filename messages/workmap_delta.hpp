#pragma once
// orchestrator.workmap, delta form (docs/protocol.md 4.2.1): between full maps an orchestrator may publish
// the CHANGES since its previous map (the ZeroMQ guide's Clone pattern): items added, items changed (each
// given whole, as in a full map) and ids removed, naming with `base_seq` the envelope seq of the map (full or
// delta) it builds on. Same topic and seq stream as the full maps: a body with `base_seq` is a delta, one
// without it a full map, so an orchestrator that never sends deltas changes nothing.
//
// Unlike a full map, a delta is all or nothing: one malformed item rejects it whole (a delta that is half
// applied would leave the RM with a map the orchestrator never had). The RM then waits for a full map.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"
#include "messages/workmap.hpp"

namespace rmbus::messages {

struct workmap_delta {
  std::uint64_t base_seq = 0;        // envelope seq of the map this delta applies to (required, > 0)
  std::vector<work_item> added;      // ids the base map does not hold
  std::vector<work_item> changed;    // ids the base map holds: each replaces the item whole
  std::vector<std::string> removed;  // ids the base map holds: the work left the map
  std::optional<std::uint64_t> rm_epoch;  // HA fencing echo, exactly as in a full map (docs/protocol.md 4.8)
  std::optional<std::uint64_t> rm_cycle;  // HA: the cycle of the last rm.state acted on, as in a full map

  friend bool operator==(const workmap_delta&, const workmap_delta&) = default;
};

// At most this many ids in one delta (added + changed + removed): a delta larger than that is not a change
// but a map, and should be sent as one.
inline constexpr std::size_t workmap_delta_max_entries = 100'000;

std::string encode(const envelope& env, const workmap_delta& msg);
// Rejects: a bad envelope, base_seq missing or 0, an entry malformed, an id empty or named twice in the
// delta (in any of the three lists), more than workmap_delta_max_entries entries.
result<workmap_delta> decode_workmap_delta(std::string_view topic, std::string_view body,
                                           const decode_limits& limits = {}, envelope* env_out = nullptr);

// The delta that turns `before` into `after` (maps by item id), naming `base_seq`: for orchestrators. An item
// in both that differs in any field is `changed` (sent whole). Ids in id order.
workmap_delta make_workmap_delta(std::uint64_t base_seq, const std::map<std::string, work_item>& before,
                                 const std::map<std::string, work_item>& after);

// Whether an orchestrator.workmap body is a delta: its top-level map has `base_seq` and no `work` before it
// (a full map has `work`; the walk stops there, so a full map's items are never skipped over). No decode.
bool is_workmap_delta(std::string_view body);

}  // namespace rmbus::messages
