#pragma once
// A cheap look into a MessagePack body without unpacking it: the string value of one key of the top-level map,
// or the bytes of its last value. For the bus forwarder, which sheds a node's repeated heartbeats by their node name
// at hundreds of thousands of messages a second and must not pay a full decode for each (docs/bus.md
// "Shedding repeats"), and for work-map differencing, which sees that a map repeats the last one unchanged.
//
// It validates nothing beyond what it reads: every length is checked against the bytes left, so a malformed
// or hostile body gives nullopt (never a read past its end), and the scan does at most one step per byte.
// Nested values before the key are skipped by counting, not by recursion.
//
// Thread-safety: a free function over its arguments.

#include <cstdint>
#include <optional>
#include <string_view>

namespace rmbus::messages::detail {

// The value of `key` in the top-level map of `body` when it is a string; nullopt when the body is not a map,
// has no such key, the value is not a string, or the bytes end early. The view points into `body`.
std::optional<std::string_view> peek_top_level_str(std::string_view body, std::string_view key);

// The value of `key` in the top-level map of `body` when it is an unsigned integer; nullopt otherwise (as above).
std::optional<std::uint64_t> peek_top_level_uint(std::string_view body, std::string_view key);

// Which of the keys `a` and `b` comes first in the top-level map of `body`: 1 for `a`, 2 for `b`, 0 when
// neither is there (or the bytes are not a readable map). The walk stops at the first of them, so a large
// value after it is never skipped over.
int peek_first_top_level_key(std::string_view body, std::string_view a, std::string_view b);

// When `key` is the last key of the top-level map of `body` (every key before it a string): the bytes from
// its value to the end of the body, without reading them; nullopt otherwise. Only the entries before it are
// walked, so the cost is theirs, not the value's. The value is NOT checked: bytes equal to a view taken from a
// body that decoded fully are that same value with nothing after it. Into `body`.
std::optional<std::string_view> peek_last_top_level_value(std::string_view body, std::string_view key);

}  // namespace rmbus::messages::detail
