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

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
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

// An array header at the front of `bytes`: its element count, and the bytes after the header. nullopt when
// `bytes` does not start with an array header, or announces more elements than bytes follow (each takes one).
struct array_head {
  std::uint64_t elements = 0;
  std::string_view rest;
};
std::optional<array_head> peek_array_head(std::string_view bytes);

// The map at the front of `bytes`, when its keys are all strings and `key` has a string value (its first
// entry): that value and the map's own bytes, views into `bytes`. nullopt otherwise, or when the bytes end
// early. Values are skipped, not checked: the map is known only to be well-formed MessagePack of that shape.
struct keyed_map {
  std::string_view key_value;
  std::string_view bytes;
};
std::optional<keyed_map> peek_keyed_map(std::string_view bytes, std::string_view key);

// One entry of a flat map (read_flat_map), which writes the key, the type and that type's field. No member
// initializers: an array of them is scratch for each heartbeat, and zeroing it cost a third of the decode.
struct flat_entry {
  enum class kind : std::uint8_t { uint, str, boolean };
  std::string_view key;
  kind type;
  std::uint64_t uint;    // kind::uint; kind::boolean as 0 or 1
  std::string_view str;  // kind::str, into the body
};

// The entries of `body`, in order, when the body is exactly one map (nothing after it) of at most out.size()
// entries whose keys are strings and whose values are unsigned integers (positive fixint, uint 8 to 64),
// strings or booleans, no string longer than max_string_bytes: their count. nullopt for anything else,
// which is the caller's cue to decode the body fully (that decode says what is wrong, if anything). Checks
// no UTF-8 and no key twice: the entries are what the bytes say.
std::optional<std::size_t> read_flat_map(std::string_view body, std::span<flat_entry> out,
                                         std::size_t max_string_bytes);

}  // namespace rmbus::messages::detail
