#pragma once
// The nodes the configuration names (nodepool node lists and nodefiles; regular expressions name none), with
// the top-level nodepool and the nodepool each is in: what admin lists as `never seen` until the node reports,
// and where a mark set on such a node before it boots is sent. A reported name matches the configuration's when
// equal, or when their short names (up to the first dot) are: a configuration may list "n01" for an agent
// reporting "n01.example.com", or the other way round.
//
// Thread-safety: const after construction.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/policy.hpp"

namespace rmbus::actors {

struct expected_node {
  std::string node;      // as the configuration spells it
  std::string pool;      // top-level nodepool
  std::string nodepool;  // the nodepool listing it
};

class expected_nodes {
 public:
  expected_nodes() = default;
  explicit expected_nodes(const core::scheduler_config& cfg);

  // The configuration's entry for a node named `reported`; nullptr when the configuration does not name it.
  const expected_node* find(std::string_view reported) const;
  // Every named node, by name.
  const std::vector<expected_node>& all() const { return nodes_; }

 private:
  std::vector<expected_node> nodes_;
  std::map<std::string, std::size_t, std::less<>> by_name_, by_short_name_;
};

}  // namespace rmbus::actors
