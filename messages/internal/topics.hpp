#pragma once
// The topics of the RM's own actor-to-actor messages (rm.internal.*). Inside one process they name what an
// actor subscribes to at the router; when roles are split over processes they are real bus topics. Each
// message has a struct and a codec of its own in this folder; payload.hpp gathers them.

#include <string>
#include <string_view>

namespace rmbus::messages::internal_topics {

inline constexpr std::string_view node_prefix = "rm.internal.node.";    // + top-level pool: node_ops
inline constexpr std::string_view node_changes = "rm.internal.nodestate";  // node_changes
inline constexpr std::string_view node_snapshot = "rm.internal.nodesnap";  // node_snapshot
inline constexpr std::string_view node_sync = "rm.internal.nodesync";      // node_sync_request
inline constexpr std::string_view work_prefix = "rm.internal.work.";    // + top-level pool: work_slice
inline constexpr std::string_view work_sync = "rm.internal.worksync";  // work_sync_request
inline constexpr std::string_view round = "rm.internal.round";          // round_start
inline constexpr std::string_view plan = "rm.internal.plan";            // pool_plan
inline constexpr std::string_view plan_sync = "rm.internal.plansync";  // plan_sync_request
inline constexpr std::string_view done = "rm.internal.done";            // round_done
inline constexpr std::string_view query_prefix = "rm.internal.query.";  // + top-level pool: admin_query
inline constexpr std::string_view answer = "rm.internal.answer";        // admin_answer
inline constexpr std::string_view vary = "rm.internal.vary";            // vary_request
// admin -> eviction: an admin_query about the nodes (status, qoccupancy: nodes never seen, the admin marks).
inline constexpr std::string_view marks_query = "rm.internal.marks";
inline constexpr std::string_view recovered = "rm.internal.recovered";  // recovered_nodes
inline constexpr std::string_view reconfigure = "rm.internal.reconfigure";  // reconfigure_request
inline constexpr std::string_view forgotten = "rm.internal.forgotten";  // machines_forgotten
inline constexpr std::string_view seed_request = "rm.internal.seedreq";  // seed_request
// + top-level pool: publication's answer to a seed_request, the last schedule published (an rm_state).
inline constexpr std::string_view seed_prefix = "rm.internal.seed.";
// A process's last message before it stops (its bus publisher drained up to here); only its envelope.
// Other processes ignore it.
inline constexpr std::string_view flush = "rm.internal.flush";

inline std::string node_topic(std::string_view pool) { return std::string{node_prefix} + std::string{pool}; }
inline std::string work_topic(std::string_view pool) { return std::string{work_prefix} + std::string{pool}; }
inline std::string query_topic(std::string_view pool) { return std::string{query_prefix} + std::string{pool}; }
inline std::string seed_topic(std::string_view pool) { return std::string{seed_prefix} + std::string{pool}; }

}  // namespace rmbus::messages::internal_topics
