#pragma once
// rm.internal.recovered — work-map differencing -> heartbeat intake: nodes that live processes of the first
// work map after a start or a reconfiguration run on. The intake watches them from then on, as if heard
// once, so a node that never comes back goes missing and down like any other (DUCC's fast recovery).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

struct recovered_node {
  std::string node;
  std::uint64_t memory_mb = 0;  // from the processes' node_memory_mb (0: unknown)

  friend bool operator==(const recovered_node&, const recovered_node&) = default;
};

struct recovered_nodes {
  std::vector<recovered_node> nodes;

  friend bool operator==(const recovered_nodes&, const recovered_nodes&) = default;
};

std::string encode(const envelope& env, const recovered_nodes& msg);
result<recovered_nodes> decode_recovered_nodes(std::string_view topic, std::string_view body,
                                               const decode_limits& limits = {}, envelope* env_out = nullptr);

}  // namespace rmbus::messages
