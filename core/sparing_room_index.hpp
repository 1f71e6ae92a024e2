#pragma once
// Where a claimed process may find room under the sparing policy (preemption_policy.hpp, R1), as an index over
// the candidate machines instead of a walk over all of them for every claimed process.
//
// R1 gives a process of order `o` the machine where it fits with the fewest quanta preempted, max(0, o - spare),
// then the first by name, among the machines its class may use (order >= o, in the class's pool or one below
// it) where the victims can make room. Whether they can is the policy's to say (its plan for the machine);
// this index holds per candidate its spare quanta and `reach`, an upper bound on the quanta it could offer (its
// spare plus its takeable victims' quanta), and offers machines in R1's order, only those whose reach is at
// least `o`. At 10,000 nodes the walk this replaces tried a plan on most of some 5,000 candidates for each
// claimed process, 99% of them in vain.
//
// Candidates are grouped by (pool, order); each group is a tournament tree over its machines in name order
// holding, below each node, the largest spare, the largest reach, and the largest spare of a machine whose
// reach exceeds its spare. A query first looks for the first machine by name whose spare alone holds the
// process (no cost); failing that, the largest spare among machines with reach >= o, left to right: a machine
// with less spare than o qualifies only through its victims, so the third figure bounds a subtree exactly
// enough that machines with spare but nothing to take, common where processes are being preempted, do not
// send the search down to them.
// Not thread-safe: one per round's preemption stage, over a model that does not change meanwhile (machines,
// pools and names; spare and reach change only through set()).

#include <algorithm>
#include <vector>

#include "core/cluster_model.hpp"

namespace rmbus::core {

class sparing_room_index {
 public:
  // Per machine slot: whether it is a candidate, and a candidate's figures (as set() takes them).
  // REQUIRES: m.machine_rank is up to date.
  sparing_room_index(const cluster_model& m, const std::vector<char>& candidate, const std::vector<int>& spare,
                     const std::vector<int>& reach);

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
