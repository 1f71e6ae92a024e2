#pragma once
// The admin channel — rmbus-admin (or any client) -> the RM's admin endpoint (ZeroMQ REQ/REP), and back.
//
// Unlike bus messages, a request and a reply are ONE frame each (no topic frame): a MessagePack map with
// string keys whose envelope keys (v, seq, ts_ms, src) are OPTIONAL — a one-off client need not keep
// sequence numbers — but type-checked when present. `epoch` is not an admin envelope key: in a request it is
// an argument, in a reply a result (status's HA epoch); envelope::epoch is neither read nor written here.
//   request: `cmd` (str) plus the command's arguments as further top-level keys;
//   reply:   `ok` (bool), `error` (str; required and non-empty when ok is false, else omitted) plus the
//            results as further top-level keys.
// Arguments and results vary by command, so they are kept as a bounded value tree (messages/value.hpp);
// map_view gives typed, error-naming access. The commands are listed in admin_commands below and, with their
// arguments and results, in docs/protocol.md.

#include <string>
#include <string_view>

#include "messages/envelope.hpp"
#include "messages/result.hpp"
#include "messages/value.hpp"
#include "messages/workmap.hpp"

namespace rmbus::messages {

namespace admin_commands {
inline constexpr std::string_view vary_off = "vary_off";        // nodes: array of str
inline constexpr std::string_view vary_on = "vary_on";          // nodes: array of str
inline constexpr std::string_view qload = "qload";              // pool: str, optional
inline constexpr std::string_view qoccupancy = "qoccupancy";    // pool, state, node (a pattern): str, optional
inline constexpr std::string_view explain = "explain";          // job: str
inline constexpr std::string_view whatif = "whatif";            // work: a work item map (as in the work map)
inline constexpr std::string_view handover = "handover";        // to: str, optional (HA: the standby to take over)
inline constexpr std::string_view reconfigure = "reconfigure";  // (no arguments)
inline constexpr std::string_view status = "status";            // (no arguments)
inline constexpr std::string_view drain = "drain";              // nodes: array of str
inline constexpr std::string_view undrain = "undrain";          // nodes: array of str
inline constexpr std::string_view jobs = "jobs";                // user, class, state: str, optional
inline constexpr std::string_view users = "users";              // user, class, state: str, optional
}  // namespace admin_commands

struct admin_request {
  std::string cmd;
  // Every top-level key except `cmd` and the envelope keys. encode() skips entries under those reserved
  // names rather than writing a duplicate key.
  value::map args;

  friend bool operator==(const admin_request&, const admin_request&) = default;
};

struct admin_reply {
  bool ok = true;
  std::string error;  // why not ok; empty when ok
  // Every top-level key except `ok`, `error` and the envelope keys (same skipping rule as requests).
  value::map results;

  friend bool operator==(const admin_reply&, const admin_reply&) = default;
};

// encode() always writes the envelope keys (uniform with the bus messages); decoding accepts bodies
// without them, leaving the envelope at its defaults.
std::string encode(const envelope& env, const admin_request& msg);
std::string encode(const envelope& env, const admin_reply& msg);
result<admin_request> decode_admin_request(std::string_view topic, std::string_view body,
                                           const decode_limits& limits = {}, envelope* env_out = nullptr);
result<admin_reply> decode_admin_reply(std::string_view topic, std::string_view body,
                                       const decode_limits& limits = {}, envelope* env_out = nullptr);

// Typed access to a request's arguments; errors carry topics::admin and the argument's key.
map_view arguments(const admin_request& req);
// Typed access to a reply's results; errors carry topics::admin and the result's key.
map_view results(const admin_reply& rep);

// The `work` argument of `whatif`, decoded with the same rules as a work-map item (field paths start with
// "work.").
result<work_item> whatif_work(const admin_request& req, const decode_limits& limits = {});

}  // namespace rmbus::messages
