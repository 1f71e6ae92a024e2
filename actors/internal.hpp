#pragma once
// The RM's own actor-to-actor messages (topics rm.internal.*) and their conversions, without CAF.
//
// Location transparency rests on one rule: actors never hand each other C++ objects, only encoded bodies
// under a topic. Inside one process the router delivers those bytes straight to the subscribed actors; when
// the roles are split over processes the very same bytes travel the bus (and each process drops its own
// echoes by `src`). So every internal message has the bus envelope (v, seq, ts_ms, src) and a MessagePack map
// with string keys, built here from messages::value trees. docs/architecture.md lists every topic and field.
//
// This file also holds the conversions between the wire structs (messages/) and the core's values (core/),
// which the thin actor shells would otherwise each repeat.
//
// Thread-safety: free functions over values.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/schedule_plan.hpp"
#include "core/work.hpp"
#include "messages/envelope.hpp"
#include "messages/rm_state.hpp"
#include "messages/value.hpp"
#include "messages/workmap.hpp"

namespace rmbus::actors {

using messages::value;

namespace topics {
// Heartbeat intake -> scheduler of the node's pool, and eviction -> scheduler: one machine operation.
inline constexpr std::string_view node_prefix = "rm.internal.node.";      // + top-level pool name
// Heartbeat intake -> eviction, publication: a node's liveness changed or was refreshed.
inline constexpr std::string_view node_state = "rm.internal.nodestate";
// Differencing -> scheduler of a pool: the pool's slice of the work map plus the round's input.
inline constexpr std::string_view work_prefix = "rm.internal.work.";      // + top-level pool name
// Differencing -> publication, admin: a round started (which pools must answer, what was refused).
inline constexpr std::string_view round = "rm.internal.round";
// Scheduler -> publication, differencing: a pool's answer for a round.
inline constexpr std::string_view plan = "rm.internal.plan";
// Publication -> differencing: the round is published (or timed out); the next may start.
inline constexpr std::string_view done = "rm.internal.done";
// Admin -> scheduler of a pool (qload, qoccupancy, explain, whatif); answers come back on `answer`.
inline constexpr std::string_view query_prefix = "rm.internal.query.";    // + top-level pool name
inline constexpr std::string_view answer = "rm.internal.answer";
// Admin -> eviction: vary_off / vary_on (answered on `answer`).
inline constexpr std::string_view vary = "rm.internal.vary";
// Differencing -> intake: nodes named by live processes in the first map after start or reconfiguration, so
// the watchdog counts them even before their first heartbeat (DUCC's fast recovery registers them alike).
inline constexpr std::string_view recovered = "rm.internal.recovered";
// Admin or SIGHUP -> every process: reload the configuration.
inline constexpr std::string_view reconfigure = "rm.internal.reconfigure";
}  // namespace topics

std::string node_topic(std::string_view pool);
std::string work_topic(std::string_view pool);
std::string query_topic(std::string_view pool);

// An internal message once decoded: its envelope and the remaining fields.
struct internal_message {
  messages::envelope env;
  value::map fields;
};

// Encodes `fields` plus the envelope keys as one MessagePack map.
std::string encode_internal(const messages::envelope& env, value::map fields);
messages::result<internal_message> decode_internal(std::string_view topic, std::string_view body,
                                                   const messages::decode_limits& limits = {});

// Per-topic sequence numbers for one sender (src), as the envelope contract wants.
class envelope_stamper {
 public:
  explicit envelope_stamper(std::string src) : src_(std::move(src)) {}
  messages::envelope next(std::string_view topic);
  const std::string& src() const { return src_; }

 private:
  std::string src_;
  std::map<std::string, std::uint64_t, std::less<>> seq_;
};

std::int64_t wall_clock_ms();

// ---- field access with defaults (internal messages come from our own code, but possibly another process
// of another version: a missing field reads as its default, never as a crash).
std::string str_of(const value::map& m, std::string_view key);
std::uint64_t uint_of(const value::map& m, std::string_view key);
bool bool_of(const value::map& m, std::string_view key);
const value::array* array_of(const value::map& m, std::string_view key);
const value::map* map_of(const value::map& m, std::string_view key);

// ---- wire <-> core ------------------------------------------------------------------------------
core::work_item to_core(const messages::work_item& w);

// A wire work item as a value tree (to embed in an internal message) and back.
value to_value(const messages::work_item& w);
messages::result<messages::work_item> work_item_of(std::string_view topic, const value& v);

// A job's plan as a value tree shaped like an rm.state job entry, plus `given` and `order`.
value to_value(const core::job_plan& p);
messages::job_schedule job_schedule_of(const value& v);

// Per-user megabytes (the allotment bookkeeping) as a value map and back.
value to_value(const std::map<core::user_id, std::uint64_t>& mb);
std::map<std::string, std::uint64_t> user_mb_of(const value* v);

}  // namespace rmbus::actors
