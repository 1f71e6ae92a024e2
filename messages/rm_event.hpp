#pragma once
// rm.events — sent by the RM to monitors whenever something a person may want to know happens.
//
// `kind` is an open set (new kinds may be added; consumers ignore kinds they do not know), so it is a string,
// with the current kinds named below. `detail` is a flat map of strings; the keys each kind guarantees:
//   node_up, node_missing, node_down   node
//   evict, preempt                     job, share, node, reason
//   refused                            job, reason
//   bad_message                        topic, error (and src, field when known)
//   health                             instance, level (info | warn), rss_bytes, round_lag_ms, epoch_ms,
//                                      log_dir, disk_free_bytes, disk_free_percent, mailbox.<actor> each
//   job_done                           job, kind, user, class, group, ended, quanta_seconds, processes,
//                                      preemptions, evictions, submitted_ms, started_ms, finished_ms

#include <map>
#include <string>
#include <string_view>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

namespace event_kinds {
inline constexpr std::string_view node_up = "node_up";
inline constexpr std::string_view node_missing = "node_missing";
inline constexpr std::string_view node_down = "node_down";
inline constexpr std::string_view evict = "evict";
inline constexpr std::string_view preempt = "preempt";
inline constexpr std::string_view refused = "refused";
inline constexpr std::string_view bad_message = "bad_message";
inline constexpr std::string_view limit = "limit";  // a configured bound refused input (detail: what, limit, refused)
inline constexpr std::string_view health = "health";      // the process's own health, every heartbeat interval
inline constexpr std::string_view job_done = "job_done";  // a finished job's accounting record
inline constexpr std::string_view bus_refused = "bus_refused";  // CURVE: a sender's roles may not publish a topic
// Nodes down longer than [limits] forget_down_ms left the node table (detail: count, nodes, forget_down_ms).
inline constexpr std::string_view node_forgotten = "node_forgotten";
// HA (docs/protocol.md 4.8): this process became the active RM (instance, epoch, silence_ms, previous, reason),
// stepped down on hearing a higher epoch (instance, epoch, heard_epoch, by, reason), or handed over (instance,
// epoch, to).
inline constexpr std::string_view ha_takeover = "ha_takeover";
inline constexpr std::string_view ha_demoted = "ha_demoted";
inline constexpr std::string_view ha_handover = "ha_handover";
// HA: another candidate has this process's rank, so the two could coin the same epoch (instance, rank, peer,
// peer_admin): a configuration error, reported by both.
inline constexpr std::string_view ha_rank_conflict = "ha_rank_conflict";
// HA, the takeover handshake: a new active grants nothing new until the orchestrator echoes its epoch (epoch,
// reason), then does (epoch, waited_ms); or the orchestrator echoes no rm_epoch at all, and it grants at once
// (epoch).
inline constexpr std::string_view ha_echo_wait = "ha_echo_wait";
inline constexpr std::string_view ha_echo_accepted = "ha_echo_accepted";
inline constexpr std::string_view ha_echo_absent = "ha_echo_absent";
// A pool's plan would have put nodes above their order; its last good plan was published instead (detail:
// pool, cycle, nodes, shares).
inline constexpr std::string_view invariant_violation = "invariant_violation";
// A node the work map showed above its order (a process started late, work recovered onto a node heard
// smaller) was brought back under it by preemption, least invested first (detail: pool, node, held, order,
// cycle, shares).
inline constexpr std::string_view over_order_repaired = "over_order_repaired";
// A pool's scheduler was replaced again before answering in time: its round timeout backs off (detail: pool,
// round_timeout_ms, replacements), or returns to the configured one (replacements 0).
inline constexpr std::string_view scheduler_backoff = "scheduler_backoff";
// Delta work maps (docs/protocol.md 4.2.1): a delta could not follow the last map (detail: src, seq, base_seq,
// reason), or contradicted it or could not be read (src, seq, base_seq when read, error, field): the RM waits
// for a full map; an orchestrator that sends deltas answers with one at once.
inline constexpr std::string_view workmap_resync = "workmap_resync";
inline constexpr std::string_view workmap_delta_refused = "workmap_delta_refused";
// Another RM drives this bus by mistake: one without HA beside HA candidates (detail: instance, ha, reason).
inline constexpr std::string_view foreign_rm = "foreign_rm";
// Why the RM runs no rounds, every report period while it runs none (messages/not_scheduling.hpp): its
// start-up window, no work map, or a round overdue.
inline constexpr std::string_view not_scheduling = "not_scheduling";
}  // namespace event_kinds

struct rm_event {
  std::string kind;
  std::map<std::string, std::string> detail;  // ordered, so encoding is deterministic

  friend bool operator==(const rm_event&, const rm_event&) = default;
};

// The bad_message event for a decode failure: detail {topic, field, error} (field only when non-empty).
rm_event make_bad_message_event(const decode_error& error);

std::string encode(const envelope& env, const rm_event& msg);
result<rm_event> decode_rm_event(std::string_view topic, std::string_view body, const decode_limits& limits = {},
                                 envelope* env_out = nullptr);

}  // namespace rmbus::messages
