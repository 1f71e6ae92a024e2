// Shared rules of both configuration roads: see declarations.hpp. Order of checks follows the data:
// nodepools first (classes point at them), then classes (users point at them), then users.

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <string_view>

#include "config/detail/declarations.hpp"
#include "config/detail/values.hpp"

namespace rmbus::config::detail {

namespace {

std::string at(const source_loc& loc) {
  return loc.line > 0 ? loc.file + ":" + std::to_string(loc.line) : loc.file;
}

bool looks_like_ipv4(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!(c == '.' || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

// libstdc++'s regex compiler reads the number of a back-reference (\12) or a repeat count ({3,12}) into a long
// with no bound: twenty digits overflow it, which is undefined behaviour (found by fuzz_native_config), and a count
// of a million builds a million states. A node pattern needs neither, so such numbers are refused before the
// pattern is compiled. Returns the first number above max_pattern_number, or an empty string.
constexpr unsigned max_pattern_number = 1000;

std::string oversized_pattern_number(std::string_view p) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  bool in_class = false, in_count = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size() && !digit(p[i + 1])) {
      ++i;  // an escaped character: \{ is a brace, \\ a backslash
      continue;
    }
    if (c != '\\') {
      if (in_class) {
        in_class = c != ']';
        continue;
      }
      if (c == '[') in_class = true;
      if (c == '{') in_count = true;
      if (c == '}') in_count = false;
      if (c != '{' && !(c == ',' && in_count)) continue;
    }
    std::size_t end = i + 1;
    while (end < p.size() && digit(p[end])) ++end;
    const auto number = p.substr(i + 1, end - i - 1);
    if (number.size() > 4 || (!number.empty() && std::stoul(std::string(number)) > max_pattern_number))
      return std::string(number);
    i = end - 1;
  }
  return {};
}

// ---- nodepools -------------------------------------------------------------------------------------------

struct pool_index {
  std::map<std::string, std::size_t> by_name;  // first definition wins; later ones are errors
};

void check_pool_names(const site_decls& site, pool_index& index, error_list& errors) {
  if (site.nodepools.empty()) {
    errors.add(site.whole, "no nodepool is defined; at least one is required (the first top-level pool takes "
                           "every node no pool names)");
  }
  for (std::size_t i = 0; i < site.nodepools.size(); ++i) {
    const auto& pool = site.nodepools[i];
    auto [it, inserted] = index.by_name.emplace(pool.name, i);
    if (!inserted) {
      errors.add(pool.loc, "duplicate nodepool '" + pool.name + "' (first defined at " +
                               at(site.nodepools[it->second].loc) + ")");
    }
  }
}

// Missing parents and cycles. Returns true when the tree is sound enough to walk to the roots.
bool check_pool_parents(const site_decls& site, const pool_index& index, error_list& errors) {
  bool sound = true;
  for (const auto& pool : site.nodepools) {
    if (pool.parent && !index.by_name.contains(pool.parent->value)) {
      errors.add(pool.parent->loc, "nodepool '" + pool.name + "' names parent '" + pool.parent->value +
                                       "', which is not defined");
      sound = false;
    }
  }
  if (!sound) return false;
  std::set<std::size_t> reported;
  for (const auto& [name, start] : index.by_name) {
    std::vector<std::size_t> path;
    std::size_t current = start;
    while (true) {
      auto seen = std::find(path.begin(), path.end(), current);
      if (seen != path.end()) {
        std::vector<std::size_t> cycle(seen, path.end());
        std::size_t first = *std::min_element(cycle.begin(), cycle.end());
        if (reported.insert(first).second) {
          std::string chain;
          // Name the members starting from the earliest defined, in parent order.
          auto pos = std::find(cycle.begin(), cycle.end(), first);
          std::rotate(cycle.begin(), pos, cycle.end());
          for (auto member : cycle) chain += site.nodepools[member].name + " -> ";
          chain += site.nodepools[first].name;
          errors.add(site.nodepools[first].parent->loc, "cycle in nodepool parents: " + chain);
        }
        sound = false;
        break;
      }
      path.push_back(current);
      const auto& pool = site.nodepools[current];
      if (!pool.parent) break;
      current = index.by_name.at(pool.parent->value);
    }
  }
  return sound;
}

void check_pool_values(const site_decls& site, const pool_index& index, error_list& errors) {
  for (std::size_t i = 0; i < site.nodepools.size(); ++i) {
    const auto& pool = site.nodepools[i];
    if (pool.quantum_mb) {
      if (pool.quantum_mb->value == 0) {
        errors.add(pool.quantum_mb->loc, "nodepool '" + pool.name + "': the quantum must be greater than 0");
      }
      if (pool.parent) {
        errors.add(pool.quantum_mb->loc, "nodepool '" + pool.name +
                                             "': a quantum may be set on top-level nodepools only; nested pools "
                                             "use their top-level pool's quantum");
      }
    }
    for (const auto& pattern : pool.patterns) {
      if (const auto number = oversized_pattern_number(pattern.value); !number.empty()) {
        errors.add(pattern.loc, "nodepool '" + pool.name + "': bad regular expression '" + pattern.value +
                                    "': the number " + number + " of a back-reference or repeat count is above " +
                                    std::to_string(max_pattern_number));
        continue;
      }
      try {
        std::regex compiled(pattern.value, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        errors.add(pattern.loc, "nodepool '" + pool.name + "': bad regular expression '" + pattern.value +
                                    "': " + e.what());
      }
    }
  }
  const nodepool_decl* without_nodes = nullptr;
  for (std::size_t i = 0; i < site.nodepools.size(); ++i) {
    const auto& pool = site.nodepools[i];
    // A duplicate is already reported; judging it again would only repeat the same mistake in other words.
    if (pool.has_node_source || index.by_name.at(pool.name) != i) continue;
    if (without_nodes != nullptr) {
      errors.add(pool.loc, "nodepools '" + without_nodes->name + "' (" + at(without_nodes->loc) + ") and '" +
                               pool.name + "' both name no nodes; at most one pool may go without a nodefile");
    } else {
      without_nodes = &pool;
    }
  }
}

std::string effective_domain(const site_decls& site, const nodepool_decl& pool) {
  if (pool.domain) return pool.domain->value;
  if (!site.nodepools.empty() && site.nodepools.front().domain) return site.nodepools.front().domain->value;
  return {};
}

// A node may belong to one pool only. Short and qualified spellings are both indexed, as DUCC does, so
// "bm01" in one pool and "bm01.example.org" in another is an overlap.
void check_overlaps(const site_decls& site, error_list& errors) {
  struct owner {
    std::string pool;
    source_loc loc;
  };
  std::map<std::string, owner> owners;
  for (const auto& pool : site.nodepools) {
    std::string domain = effective_domain(site, pool);
    for (const auto& node : pool.nodes) {
      std::set<std::string> keys{node.value};
      auto dot = node.value.find('.');
      if (looks_like_ipv4(node.value)) {
        // An address is its own key.
      } else if (dot != std::string::npos) {
        keys.insert(node.value.substr(0, dot));
      } else if (!domain.empty()) {
        keys.insert(node.value + "." + domain);
      }
      bool reported = false;
      for (const auto& key : keys) {
        auto it = owners.find(key);
        if (it != owners.end() && it->second.pool != pool.name && !reported) {
          errors.add(node.loc, "node '" + node.value + "' is in nodepool '" + pool.name +
                                   "' and already in nodepool '" + it->second.pool + "' (" + at(it->second.loc) +
                                   "); nodepools may not overlap");
          reported = true;
        }
        owners.emplace(key, owner{pool.name, node.loc});
      }
    }
  }
}

std::vector<core::nodepool_def> build_pools(const site_decls& site, const core::scheduling_settings& settings) {
  std::vector<core::nodepool_def> pools;
  for (const auto& decl : site.nodepools) {
    core::nodepool_def def;
    def.name = decl.name;
    if (decl.parent) def.parent = decl.parent->value;
    if (!decl.parent) def.quantum_mb = decl.quantum_mb ? decl.quantum_mb->value : settings.quantum_mb;
    if (decl.search_order) def.search_order = decl.search_order->value;
    std::set<std::string> seen;
    for (const auto& node : decl.nodes) {
      if (seen.insert(node.value).second) def.nodes.push_back(node.value);
    }
    for (const auto& pattern : decl.patterns) def.node_patterns.push_back(pattern.value);
    def.domain = effective_domain(site, decl);
    pools.push_back(std::move(def));
  }
  return pools;
}

// ---- classes ---------------------------------------------------------------------------------------------

// A grace longer than a day would keep a preemption pending past any useful horizon; the bound keeps
// now + grace far from overflow.
constexpr std::int64_t max_reclaim_grace_ms = 86'400'000;

void check_class_values(const class_decl& c, error_list& errors) {
  auto where = [&](const auto& field) { return field->loc; };
  if (c.weight && c.weight->value <= 0) {
    errors.add(where(c.weight), "class '" + c.name + "': weight " + std::to_string(c.weight->value) +
                                    " is not allowed; a weight must be greater than 0");
  }
  if (c.priority && c.priority->value < 0) {
    errors.add(where(c.priority), "class '" + c.name + "': priority must be 0 or greater");
  }
  if (c.initialization_cap && c.initialization_cap->value < 0) {
    errors.add(where(c.initialization_cap),
               "class '" + c.name + "': initialization cap must be 0 (no initialization cap) or greater");
  }
  if (c.prediction_fudge_ms && c.prediction_fudge_ms->value < 0) {
    errors.add(where(c.prediction_fudge_ms), "class '" + c.name + "': prediction fudge must be 0 or greater");
  }
  if (c.max_processes && c.max_processes->value < 0) {
    errors.add(where(c.max_processes), "class '" + c.name + "': max processes must be 0 (no limit) or greater");
  }
  if (c.reclaim_grace_ms && (c.reclaim_grace_ms->value < 0 || c.reclaim_grace_ms->value > max_reclaim_grace_ms)) {
    errors.add(where(c.reclaim_grace_ms), "class '" + c.name + "': reclaim grace " +
                                              std::to_string(c.reclaim_grace_ms->value) + " ms is out of range 0.." +
                                              std::to_string(max_reclaim_grace_ms) + " (one day)");
  }
}

template <class T>
void inherit(std::optional<T>& child, const std::optional<T>& parent) {
  if (!child && parent) child = parent;
}

class class_resolver {
 public:
  class_resolver(const site_decls& site, error_list& errors) : site_(site), errors_(errors) {
    for (std::size_t i = 0; i < site.classes.size(); ++i) {
      auto [it, inserted] = by_name_.emplace(site.classes[i].name, i);
      if (!inserted) {
        errors.add(site.classes[i].loc, "duplicate class '" + site.classes[i].name + "' (first defined at " +
                                            at(site.classes[it->second].loc) + ")");
      }
    }
    state_.assign(site.classes.size(), state::fresh);
    merged_.resize(site.classes.size());
  }

  // The class with every key inherited from its ancestors (abstract/default are its own). `depth` bounds the
  // recursion: a file is untrusted, and a chain of a million classes must be an error, not a stack overflow.
  const class_decl& merged(std::size_t i, int depth = 0) {
    if (state_[i] == state::done) return merged_[i];
    const auto& decl = site_.classes[i];
    merged_[i] = decl;
    if (state_[i] == state::visiting) {
      errors_.add(decl.parent->loc, "cycle in class parents at class '" + decl.name + "'");
      merged_[i].parent.reset();
      return merged_[i];
    }
    state_[i] = state::visiting;
    if (decl.parent) {
      auto it = by_name_.find(decl.parent->value);
      if (it == by_name_.end()) {
        errors_.add(decl.parent->loc, "class '" + decl.name + "' inherits from class '" + decl.parent->value +
                                          "', which is not defined");
      } else if (depth >= max_inheritance_depth) {
        errors_.add(decl.parent->loc, "class '" + decl.name + "': inheritance deeper than " +
                                          std::to_string(max_inheritance_depth) + " levels");
      } else {
        class_decl parent = merged(it->second, depth + 1);
        auto& m = merged_[i];
        inherit(m.policy, parent.policy);
        inherit(m.priority, parent.priority);
        inherit(m.weight, parent.weight);
        inherit(m.nodepool, parent.nodepool);
        inherit(m.initialization_cap, parent.initialization_cap);
        inherit(m.expand_by_doubling, parent.expand_by_doubling);
        inherit(m.use_prediction, parent.use_prediction);
        inherit(m.prediction_fudge_ms, parent.prediction_fudge_ms);
        inherit(m.max_processes, parent.max_processes);
        inherit(m.users, parent.users);
        inherit(m.reclaim_grace_ms, parent.reclaim_grace_ms);
        inherit(m.probe_first, parent.probe_first);
      }
    }
    state_[i] = state::done;
    return merged_[i];
  }

 private:
  static constexpr int max_inheritance_depth = 64;
  enum class state { fresh, visiting, done };
  const site_decls& site_;
  error_list& errors_;
  std::map<std::string, std::size_t> by_name_;
  std::vector<state> state_;
  std::vector<class_decl> merged_;
};

int default_priority(core::policy p) {
  switch (p) {
    case core::policy::fair_share: return 10;
    case core::policy::fixed_share: return 5;
    case core::policy::reserve: return 1;
  }
  return 10;
}

std::vector<core::resource_class> build_classes(const site_decls& site, const pool_index& pools,
                                                const core::scheduling_settings& settings, error_list& errors) {
  for (const auto& decl : site.classes) check_class_values(decl, errors);
  class_resolver resolver(site, errors);
  std::vector<core::resource_class> classes;
  struct priority_owner {
    core::policy policy;
    std::string cls;
    source_loc loc;
  };
  std::map<int, priority_owner> priorities;
  std::map<core::policy, std::pair<std::string, source_loc>> defaults;
  std::set<std::string> emitted;
  for (std::size_t i = 0; i < site.classes.size(); ++i) {
    if (!emitted.insert(site.classes[i].name).second) continue;  // duplicate, already reported
    const class_decl& m = resolver.merged(i);
    if (m.is_abstract) continue;
    if (!m.policy) {
      errors.add(m.loc, "class '" + m.name + "' has no policy (required: FAIR_SHARE, FIXED_SHARE or RESERVE)");
      continue;
    }
    if (!m.nodepool) {
      errors.add(m.loc, "class '" + m.name + "' names no nodepool (required)");
    } else if (!pools.by_name.contains(m.nodepool->value)) {
      errors.add(m.nodepool->loc, "class '" + m.name + "' names nodepool '" + m.nodepool->value +
                                      "', which is not defined");
    }
    core::resource_class rc;
    rc.name = m.name;
    rc.policy = m.policy->value;
    rc.priority = m.priority ? m.priority->value : default_priority(rc.policy);
    rc.weight = m.weight ? m.weight->value : 100;
    rc.nodepool = m.nodepool ? m.nodepool->value : std::string{};
    rc.initialization_cap = m.initialization_cap ? m.initialization_cap->value : settings.initialization_cap;
    rc.expand_by_doubling = m.expand_by_doubling ? m.expand_by_doubling->value : settings.expand_by_doubling;
    rc.use_prediction = m.use_prediction ? m.use_prediction->value : settings.use_prediction;
    rc.prediction_fudge_ms = m.prediction_fudge_ms ? m.prediction_fudge_ms->value : settings.prediction_fudge_ms;
    rc.max_processes = m.max_processes ? m.max_processes->value : 0;
    rc.reclaim_grace_ms = m.reclaim_grace_ms ? m.reclaim_grace_ms->value : 0;
    rc.probe_first = m.probe_first && m.probe_first->value;
    if (rc.reclaim_grace_ms > 0 && rc.policy != core::policy::fair_share) {
      errors.add(m.reclaim_grace_ms->loc, "class '" + rc.name + "': reclaim grace applies to FAIR_SHARE classes only (" +
                                              "this class is " + std::string(policy_name(rc.policy)) + " and is never preempted)");
    }
    if (m.users) {
      for (const auto& user : m.users->value) {
        if (std::find(rc.users.begin(), rc.users.end(), user) == rc.users.end()) rc.users.push_back(user);
      }
    }
    if (rc.name == site.jd_host_class && !site.jd_host_user.empty() &&
        std::find(rc.users.begin(), rc.users.end(), site.jd_host_user) == rc.users.end()) {
      rc.users.push_back(site.jd_host_user);
    }
    rc.is_default = m.is_default && m.is_default->value;

    source_loc priority_loc = m.priority ? m.priority->loc : m.loc;
    auto [it, fresh] = priorities.emplace(rc.priority, priority_owner{rc.policy, rc.name, priority_loc});
    if (!fresh && it->second.policy != rc.policy) {
      errors.add(priority_loc, "class '" + rc.name + "' is " + std::string(policy_name(rc.policy)) +
                                   " at priority " + std::to_string(rc.priority) + ", but class '" +
                                   it->second.cls + "' (" + at(it->second.loc) + ") is " +
                                   std::string(policy_name(it->second.policy)) +
                                   " at that priority; all classes of one priority must share one policy");
    }
    if (rc.is_default) {
      auto [d, first] = defaults.emplace(rc.policy, std::make_pair(rc.name, m.is_default->loc));
      if (!first) {
        errors.add(m.is_default->loc, "class '" + rc.name + "' and class '" + d->second.first + "' (" +
                                          at(d->second.second) + ") are both the default " +
                                          std::string(policy_name(rc.policy)) + " class; only one may be");
      }
    }
    classes.push_back(std::move(rc));
  }
  return classes;
}

// ---- users -----------------------------------------------------------------------------------------------

std::vector<core::user_limit> build_users(const site_decls& site, const std::vector<core::resource_class>& classes,
                                          error_list& errors) {
  std::vector<core::user_limit> users;
  std::map<std::string, source_loc> seen;
  for (const auto& decl : site.users) {
    auto [it, fresh] = seen.emplace(decl.name, decl.loc);
    if (!fresh) {
      errors.add(decl.loc, "duplicate user '" + decl.name + "' (first defined at " + at(it->second) + ")");
      continue;
    }
    for (const auto& entry : decl.class_allotments_mb) {
      const auto& cls = entry.value.first;
      bool known = std::any_of(classes.begin(), classes.end(), [&](const auto& c) { return c.name == cls; });
      if (!known) {
        errors.add(entry.loc, "user '" + decl.name + "' sets an allotment for class '" + cls +
                                  "', which is not defined");
      }
    }
    core::user_limit limit;
    limit.user = decl.name;
    if (decl.max_allotment_mb) limit.max_allotment_mb = decl.max_allotment_mb->value;
    users.push_back(std::move(limit));
  }
  return users;
}

// ---- share groups ----------------------------------------------------------------------------------------

// A file is untrusted: a tree deeper than this is an error, not a long walk every round.
constexpr int max_group_depth = 16;

std::vector<core::share_group> build_groups(const site_decls& site, const std::vector<core::resource_class>& classes,
                                            error_list& errors) {
  std::vector<core::share_group> out;
  if (site.groups.empty()) return out;
  std::map<std::string, const core::resource_class*> class_by_name;
  for (const auto& c : classes) class_by_name.emplace(c.name, &c);
  const auto n = site.groups.size();
  std::map<std::string, std::size_t> by_name;
  std::vector<bool> first(n, false);  // the first definition of its name (later ones are reported)
  for (std::size_t i = 0; i < n; ++i) {
    const auto& g = site.groups[i];
    auto [it, fresh] = by_name.emplace(g.name, i);
    first[i] = fresh;
    if (!fresh) {
      errors.add(g.loc, "duplicate group '" + g.name + "' (first defined at " + at(site.groups[it->second].loc) + ")");
    } else if (class_by_name.contains(g.name)) {
      errors.add(g.loc, "group '" + g.name + "' has the name of a class; a parent names either, so group and class "
                        "names must differ");
    }
  }
  // Parents: a FAIR_SHARE class or another group.
  enum class up { none, cls, group };
  std::vector<up> parent_kind(n, up::none);
  std::vector<std::size_t> parent_group(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& g = site.groups[i];
    if (!first[i]) continue;
    if (g.weight && g.weight->value <= 0) {
      errors.add(g.weight->loc, "group '" + g.name + "': weight " + std::to_string(g.weight->value) +
                                    " is not allowed; a weight must be greater than 0");
    }
    if (!g.parent || g.parent->value.empty()) {
      errors.add(g.parent ? g.parent->loc : g.loc,
                 "group '" + g.name + "' names no parent (required: a FAIR_SHARE class or another group)");
      continue;
    }
    const auto& p = g.parent->value;
    if (auto c = class_by_name.find(p); c != class_by_name.end()) {
      if (c->second->policy != core::policy::fair_share) {
        errors.add(g.parent->loc, "group '" + g.name + "': class '" + p + "' is " +
                                      std::string(policy_name(c->second->policy)) +
                                      "; share groups apply to FAIR_SHARE classes only");
      } else {
        parent_kind[i] = up::cls;
      }
    } else if (auto o = by_name.find(p); o != by_name.end()) {
      parent_kind[i] = up::group;
      parent_group[i] = o->second;
    } else {
      errors.add(g.parent->loc, "group '" + g.name + "' names parent '" + p +
                                    "', which is neither a class nor a group (an abstract class has no groups)");
    }
  }
  // Each group's class and depth, walking up with memory so that the whole file costs one pass: a walk stops
  // at a class, at a group already settled, or at a group on its own path (a cycle).
  enum class mark { fresh, on_path, settled };
  std::vector<mark> marks(n, mark::fresh);
  std::vector<int> depth(n, 0);                  // 0: no class above (unknown parent or cycle)
  std::vector<std::string> root(n);
  for (std::size_t start = 0; start < n; ++start) {
    if (!first[start] || marks[start] != mark::fresh) continue;
    std::vector<std::size_t> path;
    std::size_t cur = start;
    int base = 0;  // the depth of what the path hangs from: 0 for the class (or for nothing)
    bool has_class = false;
    std::string base_root;
    while (true) {
      if (marks[cur] == mark::settled) {
        has_class = depth[cur] > 0;
        base = depth[cur];
        base_root = root[cur];
        break;
      }
      if (marks[cur] == mark::on_path) {
        std::string chain;
        for (auto it = std::find(path.begin(), path.end(), cur); it != path.end(); ++it)
          chain += site.groups[*it].name + " -> ";
        chain += site.groups[cur].name;
        errors.add(site.groups[cur].parent->loc, "cycle in group parents: " + chain);
        break;
      }
      marks[cur] = mark::on_path;
      path.push_back(cur);
      if (parent_kind[cur] == up::cls) {
        has_class = true;
        base_root = site.groups[cur].parent->value;
        break;
      }
      if (parent_kind[cur] != up::group) break;  // no parent, or an unknown one: reported above
      cur = parent_group[cur];
    }
    // Unwind: each group on the path is one level below the one it hangs from.
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      marks[*it] = mark::settled;
      if (!has_class) continue;
      depth[*it] = ++base;
      root[*it] = base_root;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (first[i] && depth[i] == max_group_depth + 1) {
      errors.add(site.groups[i].parent->loc, "group '" + site.groups[i].name + "' is " + std::to_string(depth[i]) +
                                                 " levels below class '" + root[i] + "'; at most " +
                                                 std::to_string(max_group_depth) + " are allowed");
    }
  }
  // Users: one group per class, and only users the class allows.
  std::map<std::pair<std::string, std::string>, std::size_t> home;  // (class, user) -> group
  for (std::size_t i = 0; i < n; ++i) {
    const auto& g = site.groups[i];
    if (!first[i]) continue;
    core::share_group def;
    def.name = g.name;
    if (g.parent) def.parent = g.parent->value;
    if (g.weight) def.weight = g.weight->value;
    if (g.priority) def.priority = g.priority->value;
    if (g.users) {
      for (const auto& user : g.users->value) {
        if (std::find(def.users.begin(), def.users.end(), user) != def.users.end()) continue;
        if (user.empty()) {
          errors.add(g.users->loc, "group '" + g.name + "': a user name must not be empty");
          continue;
        }
        def.users.push_back(user);
        if (depth[i] == 0) continue;
        const auto& cls = *class_by_name.at(root[i]);
        if (!cls.users.empty() && std::find(cls.users.begin(), cls.users.end(), user) == cls.users.end()) {
          errors.add(g.users->loc, "group '" + g.name + "' lists user '" + user + "', who may not use class '" +
                                       cls.name + "' (not in its users)");
        }
        auto [it, fresh] = home.emplace(std::make_pair(root[i], user), i);
        if (!fresh) {
          const auto& other = site.groups[it->second];
          errors.add(g.users->loc, "user '" + user + "' is in group '" + g.name + "' and already in group '" +
                                       other.name + "' (" + at(other.users->loc) + "), both under class '" + root[i] +
                                       "'; a user may be in one group of a class");
        }
      }
    }
    out.push_back(std::move(def));
  }
  return out;
}

}  // namespace

core::scheduler_config resolve_site(const site_decls& site, const core::scheduling_settings& settings,
                                    error_list& errors) {
  core::scheduler_config out;
  out.settings = settings;
  pool_index pools;
  check_pool_names(site, pools, errors);
  check_pool_parents(site, pools, errors);
  check_pool_values(site, pools, errors);
  check_overlaps(site, errors);
  out.nodepools = build_pools(site, settings);
  out.classes = build_classes(site, pools, settings, errors);
  out.users = build_users(site, out.classes, errors);
  out.groups = build_groups(site, out.classes, errors);
  return out;
}

}  // namespace rmbus::config::detail
