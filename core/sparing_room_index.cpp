#include "core/sparing_room_index.hpp"

#include <algorithm>

namespace rmbus::core {

sparing_room_index::sparing_room_index(const cluster_model& m, const std::vector<char>& candidate,
                                       const std::vector<int>& spare, const std::vector<int>& reach)
    : m_(m), where_(m.machines.size()), spare_(spare), reach_(reach) {
  std::vector<int> by_name(m.machines.size());
  for (std::size_t mi = 0; mi < m.machines.size(); ++mi)
    by_name[static_cast<std::size_t>(m.machine_rank[mi])] = static_cast<int>(mi);
  for (int mi : by_name) {
    if (candidate[static_cast<std::size_t>(mi)] == 0) continue;
    const auto& mc = m.machines[static_cast<std::size_t>(mi)];
    auto g = std::find_if(groups_.begin(), groups_.end(),
                          [&](const group& x) { return x.pool == mc.pool && x.order == mc.order; });
    if (g == groups_.end()) {
      groups_.push_back({mc.pool, mc.order, 1, {}, {}});
      g = groups_.end() - 1;
    }
    g->machines.push_back(mi);
  }
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    auto& g = groups_[gi];
    while (g.width < g.machines.size()) g.width *= 2;
    g.tree.assign(2 * g.width, node{});
    for (std::size_t i = 0; i < g.machines.size(); ++i) {
      where_[static_cast<std::size_t>(g.machines[i])] = {static_cast<int>(gi), static_cast<int>(i)};
      const auto mi = static_cast<std::size_t>(g.machines[i]);
      g.tree[g.width + i] = leaf_node(spare[mi], reach[mi]);
    }
    for (std::size_t at = g.width - 1; at >= 1; --at) g.tree[at] = joined(g.tree[2 * at], g.tree[2 * at + 1]);
  }
}

void sparing_room_index::set(int machine, int spare, int reach) {
  spare_[static_cast<std::size_t>(machine)] = spare;
  reach_[static_cast<std::size_t>(machine)] = reach;
  put(machine, spare, reach);
}

void sparing_room_index::put(int machine, int spare, int reach) {
  const place p = where_[static_cast<std::size_t>(machine)];
  if (p.group < 0) return;  // not a candidate
  auto& g = groups_[static_cast<std::size_t>(p.group)];
  std::size_t at = g.width + static_cast<std::size_t>(p.leaf);
  g.tree[at] = leaf_node(spare, reach);
  for (at /= 2; at >= 1; at /= 2) g.tree[at] = joined(g.tree[2 * at], g.tree[2 * at + 1]);
}

int sparing_room_index::best(int order, int pool) const {
  const auto better = [&](int a, int b) {  // machine a before b by name; -1 is last
    return b < 0 || m_.machine_rank[static_cast<std::size_t>(a)] < m_.machine_rank[static_cast<std::size_t>(b)];
  };
  const auto usable = [&](const group& g) { return g.order >= order && m_.in_subtree(g.pool, pool); };
  // No cost: the first by name whose spare alone holds the process.
  int best_machine = -1;
  for (const auto& g : groups_) {
    if (!usable(g)) continue;
    const int leaf = first_fitting(g, 1, order);
    if (leaf >= 0 && better(g.machines[static_cast<std::size_t>(leaf)], best_machine))
      best_machine = g.machines[static_cast<std::size_t>(leaf)];
  }
  if (best_machine >= 0) return best_machine;
  // Otherwise every spare is short of `order`: the largest one whose victims could make up the rest.
  int best_key = -1;
  for (const auto& g : groups_) {
    if (!usable(g)) continue;
    int key = -1, leaf = -1;
    search_short(g, 1, order, key, leaf);
    if (leaf < 0) continue;
    const int mi = g.machines[static_cast<std::size_t>(leaf)];
    if (key > best_key || (key == best_key && better(mi, best_machine))) {
      best_key = key;
      best_machine = mi;
    }
  }
  return best_machine;
}

int sparing_room_index::first_fitting(const group& g, std::size_t at, int order) const {
  if (g.tree[at].spare < order) return -1;
  while (at < g.width) at = g.tree[2 * at].spare >= order ? 2 * at : 2 * at + 1;
  return static_cast<int>(at - g.width);
}

void sparing_room_index::search_short(const group& g, std::size_t at, int order, int& key, int& leaf) const {
  const node& n = g.tree[at];
  // A later leaf (by name) must do strictly better than the best so far. Below `order`, a leaf qualifies only
  // if its reach exceeds its spare, so the largest such spare bounds what a subtree can offer.
  if (n.reach < order || n.short_spare <= key) return;
  if (at >= g.width) {
    key = n.short_spare;
    leaf = static_cast<int>(at - g.width);
    return;
  }
  search_short(g, 2 * at, order, key, leaf);
  search_short(g, 2 * at + 1, order, key, leaf);
}

void sparing_room_index::pass_over(int machine) {
  passed_.push_back(machine);
  put(machine, -1, -1);
}

void sparing_room_index::restore() {
  for (int mi : passed_) put(mi, spare_[static_cast<std::size_t>(mi)], reach_[static_cast<std::size_t>(mi)]);
  passed_.clear();
}

}  // namespace rmbus::core
