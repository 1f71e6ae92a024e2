#pragma once
// How Much for non-preemptable work: each FIXED_SHARE process counted on a definite machine
// (fixed_share_count.cpp), each RESERVE job given whole machines, earmarked for it (reserve_count.cpp).
// Both take what they count out of the round's count_tables and stop at the user's allotment. Internal to
// How Much (how_much.hpp gives the rules); one round, one owner.

#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/count_tables.hpp"

namespace rmbus::core {

class nonpreemptable_counter {
 public:
  explicit nonpreemptable_counter(count_tables& tables)
      : t_(tables), m_(tables.m), fixed_idx_(tables.m.pools.size()) {}

  // Each writes the job's count (given) and, when it gets less than it wants, its reason.
  void count_fixed(job_rec& j);
  void count_reserve(job_rec& j);

 private:
  // --- FIXED_SHARE (fixed_share_count.cpp) ---
  // A non-preemptable process is counted on a definite machine: the one What Of will use. Counting it
  // on the abstract tables instead (DUCC) makes the tables of the next round, when the process holds
  // its machine, differ in shape from this round's, and the fair-share counts drift with an unchanged
  // input. Choice: spread first (no share of the same service or job there), then a machine where it
  // fits now without preemption, then the smallest non-preemptable free space (best fit), then name.
  //
  // Found without scanning every machine (that cost processes x machines x shares per round): the
  // candidates of a pool are kept ordered by (non-preemptable free, name rank), once in all and once per
  // amount of free space now; the few machines in conflict (this job's and its service's) are listed
  // from the job's side and skipped. Machine keys only change in designate() and when a reservation
  // earmarks a machine, which re-index it.
  // Sorted vectors, not trees: a round builds the index of every machine for a few dozen picks, and moves
  // fewer than a hundred keys (a tree cost some 20,000 node allocations a round; a key moved in a vector
  // of 10,000 costs a memmove of a few tens of KB).
  using key = std::pair<int, int>;
  using key_list = std::vector<key>;  // ascending, no duplicates
  struct fixed_index {
    bool built = false;
    key_list by_npf;                // (np free, rank) of candidates
    std::vector<key_list> by_free;  // [free now] -> (np free, rank)
  };
  int free_now(int mi) const;
  bool fixed_candidate(int mi) const;
  // Call before and after changing a machine's np_free, counted_q or earmark.
  void fixed_unindex(int mi);
  void fixed_index_machine(int mi);
  void build_fixed_index(int pool);
  int pick_fixed_machine(const job_rec& j, int pool);
  void designate(job_rec& j, int mi);

  // --- RESERVE (reserve_count.cpp) ---
  // Machines a reservation may take, per pool and order, in three lists by state (0: empty, 1: holding
  // only shares on their way out, 2: holding live fair-share work), each by live use then name: the order
  // in which reservations take them. A pool's lists of an order are made when a reservation first asks for
  // that order in the round, from the pool's schedulable machines of the order (count_tables); a cursor
  // per list skips machines taken meanwhile.
  struct reserve_list {
    std::vector<std::pair<std::int64_t, int>> keyed;  // (live use, name rank) and the machine
    std::size_t sorted = 0;  // keyed[0, sorted) are in walk order, the rest not yet (order_more)
    std::size_t skip = 0;    // the machines before it are no longer candidates this round
    bool built = false;
  };
  bool reserve_candidate(int mi) const;
  void build_reserve_lists(int pool, int order);
  void order_more(reserve_list& list);
  // The machine at walk position k of the list (-1: the list is shorter).
  int machine_at(reserve_list& list, std::size_t k);
  // Machines of `pool` alone whose order is within [lo, hi], any state (count_machines_of_order).
  int machines_of_order(int pool, int lo, int hi) const;

  count_tables& t_;
  cluster_model& m_;
  std::vector<fixed_index> fixed_idx_;  // per pool, built on the first pick of the round
  std::vector<int> machine_of_rank_;
  std::map<std::uint64_t, std::vector<int>> service_jobs_;  // service id -> live jobs (built with the index)
  bool service_jobs_built_ = false;
  std::vector<int> conflict_scratch_;                                    // pick_fixed_machine's
  std::vector<std::vector<std::array<reserve_list, 3>>> reserve_lists_;  // [pool][order][state]
};

}  // namespace rmbus::core
