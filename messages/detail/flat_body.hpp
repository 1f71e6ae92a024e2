#pragma once
// Bodies of the usual flat shape (a heartbeat's: one map of string keys whose values are unsigned integers,
// strings or booleans), read straight off their bytes (read_flat_map) instead of unpacked into msgpack's
// object tree. Only what the full decode would accept is taken here, and taken as it would read it; any
// other body is left to the full decode, which says what is wrong with it. Nothing here reports an error.

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "messages/detail/peek.hpp"
#include "messages/envelope.hpp"

namespace rmbus::messages::detail {

// Room for a flat body's entries: an envelope's five keys, a heartbeat's six, and some to spare.
inline constexpr std::size_t max_flat_entries = 16;

// The entries of `body`, into `out`, when the body is flat and within every bound the full decode applies
// (unpack_body: its size, the entries of a map, the bytes of a string, the depth): their count, or nullopt.
std::optional<std::size_t> read_flat_body(std::string_view body, const decode_limits& limits,
                                          std::span<flat_entry> out);

// The envelope among a flat body's entries, when the full decode (read_envelope) would accept it: v, seq,
// ts_ms, src and epoch each at most once and of its type, the first four there, v this decoder's version,
// src valid UTF-8 and not empty. Other keys are passed over. Written into *out when one is given.
bool read_flat_envelope(std::span<const flat_entry> entries, envelope* out);

}  // namespace rmbus::messages::detail
