#include "core/share_tree.hpp"

#include <algorithm>
#include <set>

namespace rmbus::core {

int share_tree::group_of(const std::string& user) const {
  const auto it = group_of_user.find(user);
  return it == group_of_user.end() ? -1 : it->second;
}

share_tree share_tree::of_class(const std::vector<share_group>& cfg, const std::string& class_name) {
  share_tree t;
  // Breadth-first from the class: parents are listed before their children, and a name is taken once, so a
  // configuration that slipped past validation cannot loop here.
  std::set<std::string> seen;
  std::vector<std::string> parents{class_name};
  std::vector<int> parent_index{-1};
  for (std::size_t level = 0; level < parents.size(); ++level) {
    for (const auto& g : cfg) {
      if (g.parent != parents[level] || seen.count(g.name) != 0 || g.name == class_name) continue;
      seen.insert(g.name);
      group rec;
      rec.name = g.name;
      rec.parent = parent_index[level];
      rec.depth = rec.parent < 0 ? 1 : t.groups[static_cast<std::size_t>(rec.parent)].depth + 1;
      rec.weight = std::max(1, g.weight);
      rec.priority = g.priority;
      const int index = static_cast<int>(t.groups.size());
      t.groups.push_back(rec);
      for (const auto& u : g.users) t.group_of_user.emplace(u, index);
      parents.push_back(g.name);
      parent_index.push_back(index);
    }
  }
  return t;
}

namespace {

// A consumer under one node of the tree: a group or a user.
struct consumer {
  bool is_group = false;
  int index = 0;  // into the tree's groups, or into the users
  int weight = 1;
  int priority = 0;
  const std::string* name = nullptr;
};

// The tie-break order among siblings (share_tree.hpp).
bool served_before(const consumer& a, const consumer& b) {
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.weight != b.weight) return a.weight > b.weight;
  if (*a.name != *b.name) return *a.name < *b.name;
  return a.is_group && !b.is_group;
}

void add_wanted(std::vector<std::pair<int, std::int64_t>>& into, const std::vector<std::pair<int, std::int64_t>>& more) {
  for (const auto& [order, n] : more) {
    auto it = std::lower_bound(into.begin(), into.end(), order,
                               [](const std::pair<int, std::int64_t>& e, int o) { return e.first < o; });
    if (it != into.end() && it->first == order) it->second += n;
    else into.insert(it, {order, n});
  }
}

free_blocks blocks_of(const std::vector<std::pair<int, std::int64_t>>& orders, const std::vector<std::int64_t>& given) {
  int top = 1;
  for (const auto& o : orders) top = std::max(top, o.first);
  free_blocks t(top);
  for (std::size_t s = 0; s < orders.size() && s < given.size(); ++s)
    if (given[s] > 0) t.add(orders[s].first, given[s]);
  return t;
}

struct tree_walk {
  const share_tree& tree;
  std::vector<apportion_entity>& users;
  std::vector<std::int64_t>& user_pfs;
  std::vector<share_tree_award>& awards;
  apportion_workspace& ws;
  std::vector<std::vector<consumer>> kids;  // [0]: the class; [g + 1]: group g
  std::vector<std::vector<std::pair<int, std::int64_t>>> user_wanted;  // as asked, before apportioning
  std::vector<apportion_entity> ents;

  // Serves node's consumers from `blocks`, priority by priority, then descends into its groups.
  void serve(std::size_t node, free_blocks& blocks, std::int64_t pfs) {
    const auto& ks = kids[node];
    if (ks.empty()) return;
    std::int64_t best_w = 0;
    for (const auto& k : ks)
      if (k.priority == ks.front().priority) best_w += k.weight;
    for (std::size_t b = 0; b < ks.size();) {
      std::size_t e = b;
      while (e < ks.size() && ks[e].priority == ks[b].priority) ++e;
      ents.assign(e - b, apportion_entity{});
      for (std::size_t k = b; k < e; ++k) {
        auto& ent = ents[k - b];
        ent.weight = ks[k].weight;
        ent.wanted = ks[k].is_group ? awards[static_cast<std::size_t>(ks[k].index)].wanted
                                    : user_wanted[static_cast<std::size_t>(ks[k].index)];
      }
      apportion_qshares(ents, blocks, ws);
      for (std::size_t k = b; k < e; ++k) {
        const std::int64_t share = b == 0 ? pfs * ks[k].weight / best_w : 0;
        if (ks[k].is_group) {
          auto& a = awards[static_cast<std::size_t>(ks[k].index)];
          a.given = std::move(ents[k - b].given);
          a.pure_fair_share_qshares = share;
        } else {
          users[static_cast<std::size_t>(ks[k].index)].given = std::move(ents[k - b].given);
          user_pfs[static_cast<std::size_t>(ks[k].index)] = share;
        }
      }
      b = e;
    }
    for (const auto& k : ks) {
      if (!k.is_group) continue;
      const auto& a = awards[static_cast<std::size_t>(k.index)];
      free_blocks mine = blocks_of(a.wanted, a.given);
      serve(static_cast<std::size_t>(k.index) + 1, mine, a.pure_fair_share_qshares);
    }
  }
};

}  // namespace

void apportion_share_tree(const share_tree& tree, const std::vector<int>& user_group,
                          const std::vector<const std::string*>& user_names, std::vector<apportion_entity>& users,
                          free_blocks& class_blocks, std::int64_t class_pfs, std::vector<std::int64_t>& user_pfs,
                          std::vector<share_tree_award>& groups_out, apportion_workspace& workspace) {
  groups_out.assign(tree.groups.size(), share_tree_award{});
  user_pfs.assign(users.size(), 0);
  tree_walk w{tree, users, user_pfs, groups_out, workspace, {}, {}, {}};
  w.kids.resize(tree.groups.size() + 1);
  w.user_wanted.resize(users.size());
  // Users under their groups, and what they want added to every group above them.
  for (std::size_t i = 0; i < users.size(); ++i) {
    w.user_wanted[i] = users[i].wanted;
    users[i].given.assign(users[i].wanted.size(), 0);
    const int g = user_group[i];
    w.kids[static_cast<std::size_t>(g + 1)].push_back({false, static_cast<int>(i), 1, 0, user_names[i]});
    for (int a = g; a >= 0; a = tree.groups[static_cast<std::size_t>(a)].parent) {
      auto& award = groups_out[static_cast<std::size_t>(a)];
      award.present = true;
      add_wanted(award.wanted, users[i].wanted);
    }
  }
  for (std::size_t g = 0; g < tree.groups.size(); ++g) {
    if (!groups_out[g].present) continue;
    const auto& def = tree.groups[g];
    w.kids[static_cast<std::size_t>(def.parent + 1)].push_back(
        {true, static_cast<int>(g), def.weight, def.priority, &def.name});
  }
  for (auto& ks : w.kids) std::sort(ks.begin(), ks.end(), served_before);
  for (auto& a : groups_out) a.given.assign(a.wanted.size(), 0);
  w.serve(0, class_blocks, class_pfs);
}

}  // namespace rmbus::core
