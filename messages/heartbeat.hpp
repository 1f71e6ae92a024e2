#pragma once
// agent.heartbeat — sent by every node agent to the RM, periodically.
//
// It tells the RM that a node is alive and how much memory it offers for work. The RM turns memory_mb into
// quanta (sizes on the wire are MB, 1 GB = 1024 MB); a node that misses heartbeats goes missing, then down.
// `quiesced` means the agent is draining: the node takes no new work but nothing on it is evicted.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

struct heartbeat {
  std::string node;                              // node name, unique on the bus
  std::string ip;                                // the node's address, informational
  std::uint64_t memory_mb = 0;                   // memory the node offers for work
  std::optional<std::uint64_t> memory_total_mb;  // physical memory, informational
  std::optional<bool> quiesced;                  // draining: no new work, nothing evicted
  std::optional<std::uint64_t> cpus;             // informational

  friend bool operator==(const heartbeat&, const heartbeat&) = default;
};

std::string encode(const envelope& env, const heartbeat& msg);
// A body of the usual shape (one flat map: string keys; unsigned integers, strings and booleans in their
// usual forms) is read in one pass over its bytes, with no object tree: 50,000 nodes send 5,000 of these a
// second and more. Any other body is decoded in full, which says what is wrong with it; both ways give the
// same heartbeat, or the same error.
result<heartbeat> decode_heartbeat(std::string_view topic, std::string_view body, const decode_limits& limits = {},
                                   envelope* env_out = nullptr);

namespace detail {
// The two ways of decode_heartbeat, apart, so that tests hold one against the other. The one pass: the
// heartbeat, or nullopt for a body it does not take (never an error of its own).
std::optional<heartbeat> decode_plain_heartbeat(std::string_view body, const decode_limits& limits,
                                                envelope* env_out);
// The full decode, through the object tree.
result<heartbeat> decode_heartbeat_tree(std::string_view topic, std::string_view body, const decode_limits& limits,
                                        envelope* env_out);
}  // namespace detail

// The node name of a heartbeat body without decoding it (the bus forwarder sheds a node's repeats by it):
// the string under "node" in the body's top-level map, or nullopt. Validates nothing else; a view into body.
std::optional<std::string_view> peek_heartbeat_node(std::string_view body);

}  // namespace rmbus::messages
