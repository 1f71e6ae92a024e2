#include "actors/expected_nodes.hpp"

#include <algorithm>

#include "core/nodepool_scheduler.hpp"

namespace rmbus::actors {

namespace {
std::string_view short_name(std::string_view name) { return name.substr(0, name.find('.')); }
}  // namespace

expected_nodes::expected_nodes(const core::scheduler_config& cfg) {
  std::map<std::string, expected_node> named;  // the first pool naming a node wins, as placement decides
  for (const auto& p : cfg.nodepools)
    for (const auto& n : p.nodes)
      if (!named.count(n)) named.emplace(n, expected_node{n, core::top_level_of(cfg, p.name), p.name});
  for (auto& [name, e] : named) {
    by_name_.emplace(name, nodes_.size());
    by_short_name_.emplace(std::string{short_name(name)}, nodes_.size());
    nodes_.push_back(std::move(e));
  }
}

const expected_node* expected_nodes::find(std::string_view reported) const {
  if (auto it = by_name_.find(reported); it != by_name_.end()) return &nodes_[it->second];
  if (auto it = by_short_name_.find(short_name(reported)); it != by_short_name_.end()) return &nodes_[it->second];
  return nullptr;
}

}  // namespace rmbus::actors
