#include "config/config_changes.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "config/detail/values.hpp"

namespace rmbus::config {

namespace {

// The policy as the configuration files spell it.
std::string policy_name(core::policy p) { return std::string{detail::policy_name(p)}; }

template <class T>
void changed(std::vector<std::string>& parts, const char* what, const T& a, const T& b) {
  if (a == b) return;
  if constexpr (std::is_same_v<T, std::string>)
    parts.push_back(std::string{what} + " '" + a + "' -> '" + b + "'");
  else if constexpr (std::is_same_v<T, bool>)
    parts.push_back(std::string{what} + (b ? " on" : " off"));
  else
    parts.push_back(std::string{what} + " " + std::to_string(a) + " -> " + std::to_string(b));
}

std::string joined(const std::vector<std::string>& xs, const char* sep = ", ") {
  std::string out;
  for (const auto& x : xs) out += (out.empty() ? "" : sep) + x;
  return out;
}

template <class Item>
std::map<std::string, const Item*> by_name(const std::vector<Item>& items) {
  std::map<std::string, const Item*> out;
  for (const auto& i : items) out[i.name] = &i;
  return out;
}

void classes(std::vector<std::string>& out, const core::scheduler_config& a,
             const core::scheduler_config& b) {
  const auto before = by_name(a.classes), after = by_name(b.classes);
  for (const auto& [name, c] : before)
    if (!after.count(name)) out.push_back("class '" + name + "' removed");
  for (const auto& [name, c] : after) {
    auto it = before.find(name);
    if (it == before.end()) {
      out.push_back("class '" + name + "' added (" + policy_name(c->policy) + ", nodepool " + c->nodepool +
                    ", weight " + std::to_string(c->weight) + ")");
      continue;
    }
    const auto& o = *it->second;
    if (o == *c) continue;
    std::vector<std::string> parts;
    if (o.policy != c->policy)
      parts.push_back(std::string{"policy "} + policy_name(o.policy) + " -> " + policy_name(c->policy));
    changed(parts, "weight", o.weight, c->weight);
    changed(parts, "priority", o.priority, c->priority);
    changed(parts, "nodepool", o.nodepool, c->nodepool);
    changed(parts, "max_processes", o.max_processes, c->max_processes);
    changed(parts, "initialization_cap", o.initialization_cap, c->initialization_cap);
    changed(parts, "reclaim_grace_ms", o.reclaim_grace_ms, c->reclaim_grace_ms);
    changed(parts, "probe_first", o.probe_first, c->probe_first);
    changed(parts, "default", o.is_default, c->is_default);
    if (o.users != c->users) parts.push_back("users changed");
    if (parts.empty()) parts.push_back("other settings changed");
    out.push_back("class '" + name + "': " + joined(parts));
  }
}

void nodepools(std::vector<std::string>& out, const core::scheduler_config& a,
               const core::scheduler_config& b) {
  const auto before = by_name(a.nodepools), after = by_name(b.nodepools);
  for (const auto& [name, p] : before)
    if (!after.count(name)) out.push_back("nodepool '" + name + "' removed");
  for (const auto& [name, p] : after) {
    auto it = before.find(name);
    if (it == before.end()) {
      out.push_back(
          "nodepool '" + name + "' added (" + std::to_string(p->nodes.size()) + " nodes" +
          (p->node_patterns.empty() ? "" : ", " + std::to_string(p->node_patterns.size()) + " patterns") +
          ")");
      continue;
    }
    const auto& o = *it->second;
    if (o == *p) continue;
    std::vector<std::string> parts;
    changed(parts, "parent", o.parent, p->parent);
    changed(parts, "quantum_mb", o.quantum_mb, p->quantum_mb);
    changed(parts, "search_order", o.search_order, p->search_order);
    const std::set<std::string> was(o.nodes.begin(), o.nodes.end()), now(p->nodes.begin(), p->nodes.end());
    std::vector<std::string> nodes;
    for (const auto& n : now)
      if (!was.count(n)) nodes.push_back("+" + n);
    for (const auto& n : was)
      if (!now.count(n)) nodes.push_back("-" + n);
    if (!nodes.empty()) parts.push_back("nodes " + joined(nodes, " "));
    if (o.node_patterns != p->node_patterns) parts.push_back("node patterns changed");
    if (parts.empty()) parts.push_back("other settings changed");
    out.push_back("nodepool '" + name + "': " + joined(parts));
  }
}

void groups(std::vector<std::string>& out, const core::scheduler_config& a, const core::scheduler_config& b) {
  const auto before = by_name(a.groups), after = by_name(b.groups);
  for (const auto& [name, g] : before)
    if (!after.count(name)) out.push_back("group '" + name + "' removed");
  for (const auto& [name, g] : after) {
    auto it = before.find(name);
    if (it == before.end()) {
      out.push_back("group '" + name + "' added (under " + g->parent + ", weight " +
                    std::to_string(g->weight) + ")");
    } else if (!(*it->second == *g)) {
      std::vector<std::string> parts;
      changed(parts, "parent", it->second->parent, g->parent);
      changed(parts, "weight", it->second->weight, g->weight);
      changed(parts, "priority", it->second->priority, g->priority);
      if (it->second->users != g->users) parts.push_back("users changed");
      out.push_back("group '" + name + "': " + joined(parts));
    }
  }
}

}  // namespace

std::vector<std::string> describe_changes(const rm_config& before, const rm_config& after) {
  std::vector<std::string> out;
  const auto& a = before.scheduling;
  const auto& b = after.scheduling;
  classes(out, a, b);
  nodepools(out, a, b);
  groups(out, a, b);
  if (a.users != b.users) out.push_back("user allotments changed");
  if (!(a.settings == b.settings)) {
    std::vector<std::string> parts;
    changed(parts, "quantum_mb", a.settings.quantum_mb, b.settings.quantum_mb);
    changed(parts, "initialization_cap", a.settings.initialization_cap, b.settings.initialization_cap);
    changed(parts, "prediction", a.settings.use_prediction, b.settings.use_prediction);
    changed(parts, "defragmentation", a.settings.defragmentation, b.settings.defragmentation);
    if (a.settings.preemption_policy != b.settings.preemption_policy)
      parts.push_back("preemption_policy " +
                      std::string(detail::preemption_policy_name(a.settings.preemption_policy)) + " -> " +
                      std::string(detail::preemption_policy_name(b.settings.preemption_policy)));
    if (parts.empty()) parts.push_back("other settings changed");
    out.push_back("scheduling: " + joined(parts));
  }
  const auto& ra = before.runtime;
  const auto& rb = after.runtime;
  if (!(ra.ha == rb.ha)) {
    // The election keeps the settings it started with (rank, timing, the role itself): said, not hidden.
    std::vector<std::string> parts;
    changed(parts, "enabled", ra.ha.enabled, rb.ha.enabled);
    changed(parts, "rank", ra.ha.rank, rb.ha.rank);
    changed(parts, "beacon_ms", ra.ha.beacon_ms, rb.ha.beacon_ms);
    changed(parts, "takeover_ms", ra.ha.takeover_ms, rb.ha.takeover_ms);
    changed(parts, "advertise_admin", ra.ha.advertise_admin, rb.ha.advertise_admin);
    out.push_back("ha: " + joined(parts) + " (not applied: [ha] takes effect when the process restarts)");
  }
  auto ra_rest = ra;
  ra_rest.ha = rb.ha;
  if (!(ra_rest == rb)) {
    std::vector<std::string> parts;
    changed(parts, "log level", ra.log_level, rb.log_level);
    changed(parts, "heartbeat_interval_ms", ra.heartbeat_interval_ms, rb.heartbeat_interval_ms);
    changed(parts, "round_timeout_ms", ra.round_timeout_ms, rb.round_timeout_ms);
    if (parts.empty()) parts.push_back("other settings changed");
    out.push_back("runtime: " + joined(parts));
  }
  return out;
}

}  // namespace rmbus::config
