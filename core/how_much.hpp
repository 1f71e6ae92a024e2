#pragma once
// how_much: how many processes each job should hold (DUCC howMuchFixed / howMuchReserve /
// howMuchFairShare), on an idealised cluster where all fair-share space is up for grabs.
//
// Priority groups are served best (lowest number) first; each deducts what it was counted from the
// per-pool free tables, so worse groups see only the rest.
//  * FIXED_SHARE: oldest first, own pool only. A service/AP/reservation gets exactly one allocation; a job
//    gets min(cap, what the user's allotment allows), never more than exists free in its pool. Each
//    process is counted on a definite machine (spread, fits now, best fit, name) that What Of then uses,
//    so that the tables of the next round look the same once it is placed (no drift, no churn).
//  * RESERVE: whole machines of exactly the requested order (an unmanaged reservation may take up to
//    ducc.rm.reserve_overage more); a free machine first, else one holding only fair-share work, which is
//    earmarked and cleared by preemption.
//  * Allotment (non-preemptable only): per user, global across classes AND top-level pools (the other
//    pools' holdings come in round_input), MB converted to this pool's quanta.
//  * FAIR_SHARE: apportion_qshares at class, user and job level; a class with share groups splits its
//    award down its share tree (share_tree.hpp) instead of among its users directly. Nested pools:
//    classes of the deepest pools are counted first against their own subtree, then each ancestor's
//    classes against what is left of the ancestor's whole subtree. A subpool's residents therefore come
//    before squatters from above, and what they do not use stays available to the parent's classes
//    (DUCC discarded the subpool class's win at the ancestor level and left capacity idle,
//    shared/ducc-rm.md 6.1 #3).
// Each job's count, pure fair share and reason are written into its job_rec.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "core/cluster_model.hpp"
#include "core/schedule_plan.hpp"

namespace rmbus::core {

struct machine_walk;  // count_tables.hpp

struct how_much_result {
  std::vector<class_load> classes;  // demand and awards by order, for the view
  std::vector<group_load> groups;   // share groups with work (only when groups are configured)
};

// What How Much keeps from round to round so as not to redo a fair-share class's split among its users and
// jobs when nothing it reads changed: with delta work maps a round follows one arrival or completion, and
// the classes it does not touch keep their award (when their class-level share does not move) and their
// jobs. A kept split is used only when every input it was computed from is equal (the class's award and
// demand by order, its pure fair share, the largest machine order of its pool, and each of its jobs' rank,
// slot, order, cap, user and share group). In a class split again, a user's split among its jobs is taken
// as kept when the user's award and its jobs' orders and caps, in the order they are served, are equal. In
// such a class without share groups, the users none of whose jobs came, went or changed since keep their
// jobs' order from the kept split (the model's log of index changes tells which jobs changed their age or
// user), so that a change's round sorts only the jobs of the users it touched, not every job of the class. So
// it decides nothing: tests/core/test_incremental.cpp schedules with and without it. Copyable (a what-if runs
// on a copy): kept splits are never changed, only replaced.
struct how_much_cache {
  struct class_split;                                       // how_much.cpp
  // The last walk of the machines for How Much's tables, taken again while no machine changed.
  std::shared_ptr<const machine_walk> machines;
  std::vector<std::shared_ptr<const class_split>> by_class;  // per class slot of the model
  std::uint64_t splits_reused = 0;  // over the cache's life: class splits taken as kept
  std::uint64_t users_reused = 0;   // and users' splits among their jobs, in classes split again
  std::uint64_t splits_edited =
      0;  // classes split again whose jobs were put in order from their kept split's
  // Per class slot, cluster_model::job_set_changes when its kept split was last made or taken as this
  // round's: the model's log after it names every job that came, went or changed its age or user since.
  std::vector<std::optional<std::uint64_t>> job_set_seen;
  std::vector<std::size_t> jobs_per_class;  // last round's count of each class's jobs (a capacity, no input)
  // Per job slot, what How Much last wrote into a fair-share job's record: its count, its pure fair share,
  // and the key of its "counted nothing" text (0: it was counted something, or its cap is 0). The sweep
  // writes it back into the record (which the stages after How Much change), and the split of the job's
  // class writes the record again only when the job's outcome may differ. `known` false: write it.
  struct outcome {
    std::int64_t pfs_qshares = 0;
    std::uint64_t nothing_key = 0;
    int given = 0;
    bool known = false;
  };
  std::vector<outcome> outcomes;
};

// Fills every live job's cap first (refresh_job_cap). `cache`: null, or the same pool's cache of earlier
// rounds (the model's classes never change under it).
how_much_result how_much(cluster_model& m, const round_input& in, how_much_cache* cache = nullptr);

// Machines of `pool` alone (not its children) whose order is within [lo, hi], any state.
int count_machines_of_order(const cluster_model& m, int pool, int lo, int hi, bool subtree);

}  // namespace rmbus::core
