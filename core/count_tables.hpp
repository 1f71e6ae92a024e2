#pragma once
// The space How Much counts against in one round, shared by its counters: the fair-share split
// (how_much.cpp) and the counting of FIXED_SHARE and RESERVE work (nonpreemptable_count.hpp). Each
// priority group takes what it is counted out of these tables, so worse groups see only the rest.
// Also the reason texts that more than one counter writes. Internal to How Much; one round, one owner.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/cluster_model.hpp"
#include "core/free_blocks.hpp"
#include "core/reason_text.hpp"

namespace rmbus::core {

// What the tables take from one walk over the machines as a round starts, before any counting: kept from
// round to round (how_much_cache), it is taken again as long as no machine changed
// (cluster_model::machine_changes), instead of walking 50,000 machine records every round.
struct machine_walk {
  std::vector<free_blocks> local;                   // per pool: free space not held by non-preemptable work
  std::vector<int> max_local;                       // per pool: largest machine order (any state)
  std::vector<std::vector<int>> machines_by_order;  // [pool][order]: how many machines of the pool alone
  // [pool][order]: the pool's schedulable machines of that order, by slot
  std::vector<std::vector<std::vector<int>>> schedulable_by_order;
  std::vector<int> np_free;  // per machine: quanta not held by non-preemptable work (-1: not schedulable)

  // The model's machine_changes, machine count and largest order when walked: equal ones, equal walk.
  std::uint64_t machine_changes = 0;
  std::size_t machines = 0;
  int max_order = -1;
  bool walked_as(const cluster_model& m) const {
    return machine_changes == m.machine_changes && machines == m.machines.size() &&
           max_order == m.max_order && local.size() == m.pools.size();
  }
};

struct count_tables : machine_walk {
  // From the model's machines as the round starts (refreshes the model's machine ranks). `kept`: null, or
  // the walk of an earlier round of the same model, taken when it stands and replaced when it does not.
  explicit count_tables(cluster_model& model, std::shared_ptr<const machine_walk>* kept = nullptr);

  cluster_model& m;
  std::vector<char> earmarked;             // per machine: earmarked for a reservation this round
  std::map<user_id, std::uint64_t> np_mb;  // per user: non-preemptable MB held or counted
  std::vector<int> max_subtree;            // per pool: largest machine order in its subtree (any state)
  std::vector<int> counted_q;              // per machine: quanta of fixed processes counted on it now
  std::vector<int> rank;                   // per machine: position by name

  // The user's allotment of non-preemptable memory (its own limit, else the global one; none: unlimited).
  std::optional<std::uint64_t> limit_mb(const user_id& u) const;
  const std::string& pool_name(int p) const { return m.pools[static_cast<std::size_t>(p)].name; }
  // An order's memory as a part of a reason text ("48 GB"): orders read in people's units.
  memory_size size_of(int order) const {
    return {static_cast<std::uint64_t>(order < 0 ? 0 : order) * m.quantum_mb};
  }

  void allotment_reason(job_rec& j, std::uint64_t limit) const;
  // Work larger than every machine of its pool says so, with the sizes: it can run only if a larger
  // machine joins. `largest`: the pool's largest machine order (0: it has none).
  void no_machine_reason(job_rec& j, int pool, int largest) const;
  // No room left for it in `pool` (with its children when `subtree`): too large, or held by
  // non-preemptable work.
  void no_space_reason(job_rec& j, int pool, bool subtree) const;

 private:
  void walk_machines();
};

}  // namespace rmbus::core
