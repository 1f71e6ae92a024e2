#pragma once
// rm.nodes — sent by the RM to monitors after every scheduling round and on every node state change.
//
// One entry per node the RM knows, with the top-level nodepool (`pool`) it is scheduled in and the nodepool
// (possibly nested) it belongs to, its state, and its memory in MB and in quanta.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

enum class node_state { up, missing, down, varied_off, quiesced, blacklisted };

std::string_view to_string(node_state s);
std::optional<node_state> parse_node_state(std::string_view s);

struct node_report {
  std::string node;
  std::string pool;      // top-level nodepool
  std::string nodepool;  // the nodepool it is in (may be nested)
  node_state state = node_state::up;
  std::uint64_t memory_mb = 0;
  std::uint64_t quanta = 0;
  std::uint64_t free_quanta = 0;
  std::uint64_t missed = 0;  // heartbeats missed in a row

  friend bool operator==(const node_report&, const node_report&) = default;
};

struct rm_nodes {
  std::vector<node_report> nodes;
  // Not on the wire: each node's entry as encode() packs it (encode_node_entry), kept by a sender that keeps
  // the report between publications (publication), so that only the entries of nodes that changed are packed
  // again. Either empty or one per node, in the order of `nodes`; encode() then copies these bytes. Not
  // compared.
  std::vector<std::string> encoded_nodes;

  friend bool operator==(const rm_nodes& a, const rm_nodes& b) { return a.nodes == b.nodes; }
};

std::string encode(const envelope& env, const rm_nodes& msg);
// One node entry exactly as encode() packs it into `nodes`.
std::string encode_node_entry(const node_report& n);
result<rm_nodes> decode_rm_nodes(std::string_view topic, std::string_view body, const decode_limits& limits = {},
                                 envelope* env_out = nullptr);

}  // namespace rmbus::messages
