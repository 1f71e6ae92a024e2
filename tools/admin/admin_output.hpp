#pragma once
// What rmbus-admin prints and how it exits, from the RM's reply (docs/admin.md): compact tables for people
// (one row per node for qoccupancy, one per class and order for qload, as DUCC's rm_qoccupancy / rm_qload),
// per-node results for vary-off / vary-on, the details behind a flag, and the reply as JSON for scripts.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <string>
#include <string_view>

#include "messages/admin.hpp"

namespace rmbus::tools::admin {

// Full success, partial success (the RM did part of what was asked: some nodes varied, some pools answered),
// refusal (the RM answered with an error and did nothing), or a pool restarting (a fresh scheduler has not
// scheduled a round yet: what it would show lacks the running work; ask again).
enum class outcome { success, partial, refused, restarting };
outcome outcome_of(std::string_view cmd, const messages::admin_reply& reply);

// The exit codes of docs/admin.md. The others: 2 usage, 3 no answer, 4 key refused (CURVE).
inline constexpr int exit_success = 0;
inline constexpr int exit_refused = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_no_answer = 3;
inline constexpr int exit_key_refused = 4;
inline constexpr int exit_partial = 5;
inline constexpr int exit_restarting = 6;
int exit_code(outcome o);

// The reply as one JSON object: `ok`, `error` when not ok, and the results as further keys; MessagePack maps
// become objects, arrays arrays, str strings, integers numbers, bool booleans, nil null. Ends with '\n'.
std::string json_of(const messages::admin_reply& reply);
// What --json prints when no reply came (exit 3 or 4): {"ok": false, "error": ..., "reached": false}.
std::string json_of_client_error(const std::string& error);

// The reply for people. `cmd` is the wire command (vary_off, qload, ...); `details` lists every share under
// the qoccupancy table; `now_ms` (ms since the epoch) decides whether a time shown carries its date. Errors
// are not in it: the caller prints them (outcome_of, reply.error). qload lists share groups (when configured)
// after the classes. Nothing while a pool is restarting.
std::string text_of(std::string_view cmd, const messages::admin_reply& reply, bool details, std::int64_t now_ms);

// A size in GB as people read it: "8 GB", "1.5 GB", "512 MB" below one GB.
std::string gb_text(std::uint64_t mb);

}  // namespace rmbus::tools::admin
