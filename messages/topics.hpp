#pragma once
// The topic strings of the bus (frame 1 of every message). They are part of the external contract: other
// languages subscribe to them by prefix, so they never change; new topics are only ever added.
// docs/protocol.md lists the sender, receiver and body of each.

#include <string_view>

namespace rmbus::messages::topics {

inline constexpr std::string_view heartbeat = "agent.heartbeat";     // agent -> RM
inline constexpr std::string_view workmap = "orchestrator.workmap";  // orchestrator -> RM
inline constexpr std::string_view rm_state = "rm.state";             // RM -> orchestrator
inline constexpr std::string_view rm_nodes = "rm.nodes";             // RM -> monitors
inline constexpr std::string_view rm_cycle = "rm.cycle";             // RM -> monitors
inline constexpr std::string_view rm_events = "rm.events";           // RM -> monitors
inline constexpr std::string_view rm_ha = "rm.ha";                   // RM -> RMs, monitors (HA election)
inline constexpr std::string_view rm_marks = "rm.marks";             // RM -> standbys, monitors (admin marks)
// RM -> orchestrators, monitors (opt-in): the schedule as numbered changes against a periodic full one. Not
// under the `rm.state` prefix, so that a subscriber of rm.state never receives it.
inline constexpr std::string_view rm_schedule_changes = "rm.schedule.changes";

// Prefix of the RM's own actor-to-actor topics when they cross processes; same envelope as every body.
inline constexpr std::string_view rm_internal_prefix = "rm.internal.";

// Not a pub/sub topic: the admin channel is request/reply with a single frame. This is the name its decode
// errors carry in decode_error::topic.
inline constexpr std::string_view admin = "admin";

}  // namespace rmbus::messages::topics
