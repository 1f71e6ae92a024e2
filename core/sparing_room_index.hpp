#pragma once
// Where a claimed process may find room under the sparing policy (preemption_policy.hpp, R1), as an index over
// the candidate machines instead of a walk over all of them for every claimed process.
//
// R1 gives a process of order `o` the machine where it fits with the fewest quanta preempted, max(0, o - spare),
// then the first by name, among the machines its class may use (order >= o, in the class's pool or one below
// it) where the victims can make room. Whether they can is the policy's to say (its plan for the machine);
// this index holds per candidate its spare quanta and `reach`, an upper bound on the quanta it could offer (its
// spare plus its takeable victims' quanta), and offers machines in R1's order, only those whose reach is at
// least `o`. At 10,000 nodes most claims find no machine at all: the walk tried each of some 5,000 candidates
// for each of them, the index answers from the roots of a few trees.
//
// Candidates are grouped by (pool, order); each group is a tournament tree over its machines in name order
// holding the largest spare and the largest reach below each node, searched left to right for the largest
// min(spare, o) among leaves with reach >= o (left first, so ties go to the first by name).
// Not thread-safe: one per round's preemption stage, over a model that does not change meanwhile (machines,
// pools and names; spare and reach change only through set()).

#include <algorithm>
#include <vector>

#include "core/cluster_model.hpp"

namespace rmbus::core {

class sparing_room_index {
 public:
  // `candidate`: per machine slot, whether it is one. Every candidate starts with spare and reach 0.
  // REQUIRES: m.machine_rank is up to date.
  sparing_room_index(const cluster_model& m, const std::vector<char>& candidate);

  // A candidate's figures now. REQUIRES: 0 <= spare <= reach.
  void set(int machine, int spare, int reach);

  // The candidate R1 ranks first for a process of `order` whose class's pool is `pool`: the largest
  // min(spare, order), then the first by name, among candidates of order >= `order` in `pool` or below it
  // with reach >= `order` and not passed over; -1 when there is none. REQUIRES: order >= 1.
  int best(int order, int pool) const;

  // Leaves `machine` out of best() until restore() (its plan could not make room for this process).
  void pass_over(int machine);
  void restore();

 private:
  struct node {  // the largest below (-1: no machine)
    int spare = -1;
    int reach = -1;
    int short_spare = -1;  // spare, over the leaves whose reach exceeds it (victims could add to it)
  };
  static node leaf_node(int spare, int reach) { return {spare, reach, reach > spare ? spare : -1}; }
  static node joined(const node& a, const node& b) {
    return {std::max(a.spare, b.spare), std::max(a.reach, b.reach), std::max(a.short_spare, b.short_spare)};
  }
  struct group {
    int pool = 0;
    int order = 0;
    std::size_t width = 1;       // leaves (a power of two)
    std::vector<int> machines;   // by name
    std::vector<node> tree;      // [1] is the root; leaf i is [width + i]
  };
  struct place {
    int group = -1;
    int leaf = -1;
  };

  void put(int machine, int spare, int reach);
  // The first leaf below `at` whose spare is at least `order`; -1 if none.
  int first_fitting(const group& g, std::size_t at, int order) const;
  // When no spare is `order` or more: left to right below `at`, improves (key, leaf) where key is the spare of
  // a leaf with reach >= order (strictly: ties go to the first by name).
  void search_short(const group& g, std::size_t at, int order, int& key, int& leaf) const;

  const cluster_model& m_;
  std::vector<group> groups_;
  std::vector<place> where_;  // per machine slot
  std::vector<int> spare_, reach_;  // per machine slot: the figures set() gave
  std::vector<int> passed_;
};

}  // namespace rmbus::core
