// Nodepool membership of a node and the top-level pool above a pool (declared in nodepool_scheduler.hpp).
// DUCC's order: a regular-expression rule first, then the node name (short or qualified), then the ip;
// a node nobody names goes to the first top-level pool.
#include <regex>

#include "core/nodepool_scheduler.hpp"

namespace rmbus::core {

namespace {
std::string short_of(const std::string& n) { return n.substr(0, n.find('.')); }
}  // namespace

std::string find_nodepool(const scheduler_config& cfg, const std::string& name, const std::string& ip) {
  for (const auto& p : cfg.nodepools) {
    for (const auto& pat : p.node_patterns) {
      try {
        const std::regex re(pat, std::regex::ECMAScript);
        if (std::regex_match(name, re) || std::regex_match(short_of(name), re) || (!ip.empty() && std::regex_match(ip, re)))
          return p.name;
      } catch (const std::regex_error&) {
        // config/ validates patterns; a bad one simply matches nothing here.
      }
    }
  }
  for (const auto& p : cfg.nodepools)
    for (const auto& n : p.nodes)
      if (n == name || short_of(n) == short_of(name)) return p.name;
  if (!ip.empty())
    for (const auto& p : cfg.nodepools)
      for (const auto& n : p.nodes)
        if (n == ip) return p.name;
  for (const auto& p : cfg.nodepools)
    if (p.parent.empty()) return p.name;
  return "";
}

std::string top_level_of(const scheduler_config& cfg, const std::string& pool) {
  std::string cur = pool;
  for (std::size_t guard = 0; guard <= cfg.nodepools.size(); ++guard) {
    const nodepool_def* d = nullptr;
    for (const auto& p : cfg.nodepools)
      if (p.name == cur) d = &p;
    if (d == nullptr) return "";
    if (d->parent.empty()) return d->name;
    cur = d->parent;
  }
  return "";  // a cycle: config/ rejects these
}

std::uint64_t quantum_of(const scheduler_config& cfg, const std::string& top_pool) {
  for (const auto& d : cfg.nodepools)
    if (d.name == top_pool && d.quantum_mb > 0) return d.quantum_mb;
  return cfg.settings.quantum_mb > 0 ? cfg.settings.quantum_mb : 1024;
}

}  // namespace rmbus::core
