#include "config/node_placement.hpp"

namespace rmbus::config {

namespace {

bool is_address(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!(c == '.' || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

}  // namespace

std::string_view node_placement::short_name(std::string_view name) {
  if (is_address(name)) return name;
  return name.substr(0, name.find('.'));
}

node_placement::node_placement(const core::scheduler_config& cfg) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < cfg.nodepools.size(); ++i) {
    names_.push_back(cfg.nodepools[i].name);
    index.emplace(cfg.nodepools[i].name, i);
  }
  bool default_found = false;
  for (std::size_t i = 0; i < cfg.nodepools.size(); ++i) {
    // Walk to the root; bounded by the number of pools in case the REQUIRES clause was broken.
    std::size_t current = i;
    for (std::size_t steps = 0; steps < cfg.nodepools.size() && !cfg.nodepools[current].parent.empty(); ++steps) {
      auto it = index.find(cfg.nodepools[current].parent);
      if (it == index.end()) break;
      current = it->second;
    }
    top_level_.push_back(cfg.nodepools[current].name);
    if (!default_found && cfg.nodepools[i].parent.empty()) {
      default_pool_ = i;
      default_found = true;
    }
  }
  for (std::size_t i = 0; i < cfg.nodepools.size(); ++i) {
    const auto& pool = cfg.nodepools[i];
    for (const auto& pattern : pool.node_patterns) {
      rules_.push_back({std::regex(pattern, std::regex::ECMAScript | std::regex::optimize), i});
    }
    for (const auto& node : pool.nodes) {
      // First listing wins, so the answer never depends on anything but definition order.
      // Listed spellings are indexed as DUCC indexes them: as written, the short form of a qualified name,
      // and a short name qualified with the pool's domain.
      exact_.emplace(node, i);
      if (is_address(node)) continue;
      if (node.find('.') != std::string::npos) {
        exact_.emplace(std::string(short_name(node)), i);
      } else if (!pool.domain.empty()) {
        exact_.emplace(node + "." + pool.domain, i);
      }
    }
  }
}

placement node_placement::of_pool(std::size_t pool) const { return {top_level_.at(pool), names_.at(pool)}; }

placement node_placement::place(std::string_view name, std::string_view ip) const {
  if (names_.empty()) return {};
  std::string_view short_form = short_name(name);
  for (const auto& r : rules_) {
    // libstdc++'s regex matcher recurses per character, so a 64 KiB name from a hostile heartbeat could exhaust
    // the stack; no real host name or address is longer than DNS's 253 characters, so longer text never matches.
    auto matches = [&](std::string_view text) {
      return !text.empty() && text.size() <= max_matched_length &&
             std::regex_match(text.begin(), text.end(), r.pattern);
    };
    if (matches(name) || matches(short_form) || matches(ip)) return of_pool(r.pool);
  }
  if (auto it = exact_.find(name); it != exact_.end()) return of_pool(it->second);
  if (auto it = exact_.find(short_form); !short_form.empty() && it != exact_.end()) return of_pool(it->second);
  if (auto it = exact_.find(ip); !ip.empty() && it != exact_.end()) return of_pool(it->second);
  return of_pool(default_pool_);
}

}  // namespace rmbus::config
