#pragma once
// share_tree: How Much's user level for a FAIR_SHARE class whose users are grouped (IBM EGO's consumer tree,
// shared/seeds/002): groups between the class and its users, nested to any depth.
//
// Without groups How Much splits a class's award among its users by apportion_qshares, weight 1 each. With
// groups the class's award is walked down the tree instead: at each node (the class, then each group) the
// consumers below it (its groups with work, and its users with work) are served by share priority, lower
// numbers first: the consumers of the best priority are apportioned what the node has, by weight, and what
// they cannot use (the free-block model apportion_qshares leaves) goes to the next priority, and so on.
// Each group's award, as blocks of exactly the orders it was given, is then split among its own consumers
// the same way, down to the users. Water-filling is apportion_qshares's own: a consumer wants no more than
// the sum of what the jobs beneath it want, and what it cannot use stays with its siblings.
//
// Siblings are ordered by (priority ascending, weight descending, name, a group before a user of the same
// name): the tie-break order apportion_qshares hands rounding leftovers in. A user weighs 1 and has share
// priority 0.
//
// Pure fair share (before bonus shares and before demand): the consumers of a node's best priority present
// this round divide the node's pure fair share by weight; consumers of worse priorities get 0 (EGO's "the
// highest-priority child 100%, all others 0%").
//
// With one level of equal groups (each user its own group of weight 1, or one group holding every user),
// the counts are exactly those of the class > user split (tests/core/test_share_tree.cpp checks it on random
// workloads). The tree is built once per scheduler from the configuration; apportion_share_tree allocates
// its working lists per call and is only called for classes that have groups.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/apportion.hpp"
#include "core/free_blocks.hpp"
#include "core/policy.hpp"

namespace rmbus::core {

// The groups of one class, resolved to indices.
struct share_tree {
  struct group {
    std::string name;
    int parent = -1;  // index into groups; -1: directly under the class
    int depth = 1;    // 1: directly under the class
    int weight = 1;
    int priority = 0;
    int plan_index = -1;  // its place in cluster_model::group_names (set by the scheduler)
  };
  std::vector<group> groups;               // parents before children
  std::map<std::string, int> group_of_user;  // user name -> its innermost group (lookup only)

  bool empty() const { return groups.empty(); }
  // The user's innermost group, -1 when the user stands directly under the class.
  int group_of(const std::string& user) const;
  // The groups of `cfg` whose tree hangs from class `class_name` (config/ validated names and cycles).
  static share_tree of_class(const std::vector<share_group>& cfg, const std::string& class_name);
};

// What one group was counted this round.
struct share_tree_award {
  bool present = false;                             // some user with work is beneath it
  std::vector<std::pair<int, std::int64_t>> wanted;  // (order, nshares) its users' jobs want, ascending order
  std::vector<std::int64_t> given;                   // nshares given, same positions as `wanted`
  std::int64_t pure_fair_share_qshares = 0;
};

// Splits `class_blocks` (the class's award) among `users` along `tree`.
// REQUIRES: users[i] holds user i's wanted (its `given` is written, its `wanted` may be consumed), in user
// name order; user_group[i] is its innermost group (-1: none); user_names[i] its name.
// Writes user_pfs[i] (each user's pure fair share, quanta) and groups_out[g] for every group g.
void apportion_share_tree(const share_tree& tree, const std::vector<int>& user_group,
                          const std::vector<const std::string*>& user_names, std::vector<apportion_entity>& users,
                          free_blocks& class_blocks, std::int64_t class_pfs, std::vector<std::int64_t>& user_pfs,
                          std::vector<share_tree_award>& groups_out, apportion_workspace& workspace);

}  // namespace rmbus::core
