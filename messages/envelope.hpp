#pragma once
// The envelope every bus body carries, and the limits that bound decoding of untrusted bytes.
//
// A body is a MessagePack map with string keys. Besides its message fields it always holds
//   v      uint  schema version; this code speaks 1. The contract only grows by adding keys, so v stays 1.
//   seq    uint  the publisher's sequence number on this topic, starting at 1, +1 per message.
//   ts_ms  uint  the sender's wall clock, milliseconds since the Unix epoch.
//   src    str   the sender's name (non-empty); sequence numbers are tracked per (src, topic).
// and, optionally,
//   epoch  uint  with HA on: the epoch of the active RM that sent it (rm.state, rm.nodes, rm.cycle, rm.events,
//                rm.ha); absent with HA off, so nothing on the wire changes then (docs/protocol.md 4.8).
// decode_envelope reads only these keys, so the bus can account sequence numbers without decoding the
// whole message (and without knowing it).
//
// Uniform codec scheme of this folder: every message type T in messages/ comes with
//   std::string encode(const envelope&, const T&);
//   result<T> decode_<name>(std::string_view topic, std::string_view body,
//                           const decode_limits& = {}, envelope* env_out = nullptr);
// encode writes the envelope keys first, then T's keys in a fixed order, so equal inputs give equal bytes.
// decode_* checks the envelope too and, when env_out is given and decoding succeeded, stores it there.
// encode does not validate: it is the sender's job to use valid UTF-8, a non-empty src and names, and sizes
// within the receiver's decode_limits, or the receiver refuses the body.
//
// Thread-safety: free functions over values; safe from any thread.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "messages/result.hpp"

namespace rmbus::messages {

inline constexpr std::uint32_t schema_version = 1;

struct envelope {
  std::uint32_t v = schema_version;
  std::uint64_t seq = 0;
  std::uint64_t ts_ms = 0;
  std::string src;
  std::optional<std::uint64_t> epoch{};  // HA's fencing token; written only when set

  friend bool operator==(const envelope&, const envelope&) = default;
};

// Bounds applied before and during unpacking. Every one is checked on the bytes as they arrive, so a
// 5-byte body announcing a 2^31-element array is refused without allocating for it.
struct decode_limits {
  std::size_t max_body_bytes = 16u * 1024u * 1024u;  // whole body; checked before unpacking
  std::size_t max_string_bytes = 64u * 1024u;        // any str, bin or ext value (and map key)
  std::size_t max_array_len = 1'000'000;             // elements of any one array
  std::size_t max_map_len = 4096;                    // entries of any one map
  std::size_t max_depth = 16;                        // container nesting; the body's own map is depth 1
};

// Decodes only v/seq/ts_ms/src/epoch. Unknown keys (all message fields) are skipped, but the body is unpacked and
// bounded exactly as a full decode would, so a body accepted here is at least well-formed MessagePack.
result<envelope> decode_envelope(std::string_view topic, std::string_view body, const decode_limits& limits = {});

// decode_envelope for a body whose last top-level key is `tail_key`: only the entries before that key's value
// are read and checked (as decode_envelope checks a whole body, the body's size included); the value is left
// to its message's own decoder, which reads and checks all of it. A body whose last key is another is read
// whole. For the work map, whose `work` is nearly all of its 16 MB at 50,000 nodes.
result<envelope> decode_envelope_before(std::string_view topic, std::string_view body, std::string_view tail_key,
                                        const decode_limits& limits = {});

// Encodes a body holding the envelope alone (no message fields): useful for tests and for internal pings.
std::string encode(const envelope& env);

}  // namespace rmbus::messages
