#pragma once
// The scheduler's model of one top-level nodepool: its nodepool tree, classes, machines, shares and jobs.
//
// Plain vectors addressed by small integer indices (machines are removed only by
// nodepool_scheduler::forget_machines, which renumbers them; share and job slots are
// reused through free lists), plus hash maps used ONLY for id lookup, never iterated where the order
// decides an outcome. Every stage of the cycle (how_much, what_of, plan_preemptions, defragment) is a
// function over this value. The model is a value type: copying it gives an independent scenario (whatif).
//
// Invariants (checked by the tests and the random property tests):
//   machine.used == sum of the orders of the live shares on it (a share holds its space until the
//   orchestrator confirms the process gone, also while being preempted or evicted), and machine.removing
//   the same over those being preempted or evicted;
//   a live share is listed exactly once in its job's and its machine's share lists.

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/ids.hpp"
#include "core/job_cap.hpp"
#include "core/policy.hpp"
#include "core/schedule_plan.hpp"
#include "core/share_tree.hpp"
#include "core/work.hpp"

namespace rmbus::core {

struct pool_rec {
  std::string name;
  int parent = -1;            // -1 for the top-level pool (index 0)
  std::vector<int> children;  // by search order, then name (the expansion order)
  int depth = 0;              // top-level pool = 0
  int search_order = 100;
};

struct class_rec {
  resource_class def;
  int pool = -1;  // index into pools, -1 when the class's pool is not in this tree
};

struct machine_rec {
  machine_id name;
  std::string ip;
  std::uint64_t memory_mb = 0;
  int order = 0;
  int pool = 0;
  bool down = false;
  bool varied_off = false;
  bool quiesced = false;
  bool drained = false;  // admin drain: nothing new is placed, what runs stays (the agent's quiesce, by admin)
  bool admin_blacklisted = false;
  int used = 0;                  // quanta held by live shares (including those being removed)
  int removing = 0;              // of which by shares being preempted or evicted
  int blacklisted_shares = 0;    // live shares of refused (reconfigured away) work on it
  int nonpreemptable_used = 0;   // quanta held by fixed (non-preemptable) shares
  int reclaiming = 0;            // quanta held by shares awaiting their reclaim deadline (still running)
  // A machine of another top-level pool, known here only because work of this pool still runs on it (its
  // node moved to that pool in a reconfiguration): its shares are accounted and published, nothing is
  // placed on it, and it counts nowhere as this pool's capacity.
  bool foreign = false;
  // Processes of OTHER top-level pools' work running on this machine (the same move seen from the node's new
  // pool): the machine is blacklisted until they end, so it is never double-booked.
  int foreign_processes = 0;
  // Named by a recovered process before its first heartbeat, with no size (the work map carried no
  // node_memory_mb): a restarted RM has merely not heard it yet. Its recovered shares are accounted and
  // published where they run, never chosen as preemption victims (nothing could be placed in their space),
  // and nothing is placed on it; it counts nowhere as capacity. Its first heartbeat sizes it (update_machine);
  // a node that never speaks goes down after node_stability heartbeat intervals and its work is evicted.
  bool unheard = false;
  std::vector<int> shares;       // live share slots

  int free() const { return order - used; }  // may be negative after a shrink or recovery
  bool blacklisted() const { return admin_blacklisted || blacklisted_shares > 0 || foreign_processes > 0; }
  bool schedulable() const {
    return !foreign && !unheard && !down && !varied_off && !quiesced && !drained && !blacklisted();
  }
};

struct share_rec {
  bool live = false;
  share_id id;
  std::uint64_t seq = 0;  // creation sequence; higher = younger. Recovered shares: 0
  int job = -1;
  int machine = -1;
  int order = 0;
  share_status status = share_status::new_share;
  bool fixed = false;        // non-preemptable
  bool blacklisted = false;  // its work was refused after a reconfiguration: space accounted only
  bool published = false;    // false while created in the current round (defrag may still hand it over)
  // Its preemption or eviction went out in a plan. Until then a share the work map never showed holds its
  // space: the orchestrator knows it only as `new` and may be starting it.
  bool removal_published = false;
  std::uint64_t removal_cycle = 0;  // the round whose plan published the removal (0: unnumbered)
  bool awaiting_ack = false;        // listed in nodepool_scheduler's awaiting_ack_
  bool seen = false;         // the work map has shown its process at least once
  std::uint64_t mark = 0;    // reconcile epoch in which the work map last listed it
  bool initialized = false;
  std::int64_t init_ms = 0;
  std::int64_t run_ms = 0;
  // Chosen for preemption under its class's reclaim grace: preempted at this time (ms, the round's now) if
  // the need still stands; 0 = no deadline.
  std::int64_t reclaim_at_ms = 0;

  bool removing() const { return status == share_status::preempt || status == share_status::evict; }
};

inline constexpr std::int64_t no_time = INT64_MIN / 4;  // a time long before any round

// The fields every stage reads or writes every round come first, packed, so that a sweep over every job
// (How Much, What Of, preemption, defragmentation, the plan keeper) touches the first two cache lines of a
// fair-share job's record instead of seven; the work item and the texts follow.
struct alignas(64) job_rec {
  // Flags, a bit each: as a byte each they left no room in the first two cache lines for held_q.
  bool live : 1 = false;
  bool refused : 1 = false;
  bool done : 1 = false;   // a service/AP whose single allocation ended: never re-allocated
  bool needy : 1 = false;  // on the defragmentation needy list (served first in What Of)
  // `cap` and `demand` were computed from what the job is now (How Much then keeps them): cleared by every
  // change of an input of the cap (job_caps.hpp), that is of its work item's fields, its class, its
  // refusal or end, and its shares' counts, and by drop_indexes.
  bool cap_current : 1 = false;
  // reserve_machines or fixed_machines may hold machines (false: both are empty), so that the sweeps of
  // every round over all jobs (How Much, What Of, preemption, defragmentation) read this line, not theirs.
  bool earmarks : 1 = false;
  // Its work item lists no hosts (set where the scheduler writes the item; false: not known, item.hosts is
  // read), so that the walks over the waiting jobs (What Of's texts) read this line, not the item's.
  bool no_hosts : 1 = false;
  reason_code reason = reason_code::none;  // per round (rebuilt by schedule())
  reason_code refusal = reason_code::none;
  int cls = -1;
  int order = 0;
  int user_slot = -1;  // index into cluster_model::users (set by index_job)
  // current() and confirmed(), kept as counts by the share bookkeeping (count_share / uncount_share)
  // instead of a walk over the job's shares at every call (several calls per job per round).
  int held = 0;     // shares not being removed and not blacklisted
  int held_q = 0;   // their quanta (orders summed): How Much's non-preemptable holdings, without the shares
  int running = 0;  // of which the work map has confirmed (status running)
  // Initialization of its live shares, kept the same way, for the job cap's prediction and defragmentation
  // (which otherwise read every share of every job every round).
  int initialized = 0;          // live shares whose process has initialized
  int timed_init = 0;           // of which the initialization time is known (init_ms > 0)
  int reclaiming = 0;           // live shares carrying a reclaim deadline (cluster_model::set_reclaim)
  std::int64_t init_ms_sum = 0; // their initialization times
  // Sparing preemption (preemption_policy.hpp): quanta it claims as a starved claimant (What Of serves it
  // first).
  int claim_q = 0;
  int given = 0;  // per round
  // Changes whenever a share of this job is added, removed, handed over or changes status (a value of
  // cluster_model::share_changes, never reused): the plan rebuilds the job's share list only then.
  std::uint64_t shares_version = 0;

  // Per round (rebuilt by schedule()).
  int needy_machine = -1;  // machine being cleared for it by defragmentation
  int group = -1;  // its user's innermost share group in its class's tree (set on arrival); -1: none
  std::int64_t demand = 0;
  std::int64_t pfs_qshares = 0;
  // What How Much last wrote a "counted nothing" text from (its inputs packed, bit 63 set), or the fixed
  // text last written (its literal's address); 0: neither. Cleared by every other write of the text
  // (core/reason_text.hpp) and by drop_indexes (user slots change): an equal key means the text standing is
  // the one these inputs give. Some 40,000 jobs wait a round at 50,000 nodes; their texts are not read again.
  std::uint64_t reason_key = 0;
  // Moves whenever reason_text changes (set_reason, core/reason_text.hpp), so that the plan keeper tells an
  // unchanged text by an integer compare, not by reading both texts of every waiting job every round. Its
  // high half is unique per arrival (cluster_model::arrivals): a record that takes over a slot never carries
  // the version of the one before. 0 in the high half: a record built by hand, whose text is compared.
  std::uint64_t reason_version = 0;
  job_cap_result cap;  // its answer still in the second cache line
  std::vector<int> shares;            // live share slots
  // Filled by How Much (which sets `earmarks`). RESERVE: machines earmarked for it this round; FIXED_SHARE:
  // the machine of each process counted but not placed.
  std::vector<int> reserve_machines;
  std::vector<int> fixed_machines;
  // Sparing preemption: the round times it last lost a process to, or claimed one by, a sparing preemption.
  std::int64_t shed_at_ms = no_time;
  std::int64_t claimed_at_ms = no_time;
  std::string reason_text;  // counts only while reason != none (How Much resets the code, not the text)
  std::string refusal_text;

  work_item item;  // its scalar fields first: caps and apply_work read them every round
};
// 100,000 records are swept every round: a field added past 512 bytes adds a cache line to each.
static_assert(sizeof(job_rec) <= 512, "job_rec grew past eight cache lines");

// A service's, managed reservation's or reservation's single allocation ended: it is never allocated again
// (its cap falls to 0).
inline void end_allocation(job_rec& j) {
  j.done = true;
  j.cap_current = false;
}

struct cluster_model {
  std::string top_pool;
  std::uint64_t quantum_mb = 1024;
  scheduling_settings settings;
  std::vector<pool_rec> pools;  // [0] is the top-level pool
  std::vector<class_rec> classes;
  // Per class (same index): its share groups (FAIR_SHARE); an empty tree puts the users directly under the
  // class, as in DUCC. Kept beside the class records rather than in them, so that the stages reading
  // classes every round walk records of the same size as before groups existed.
  std::vector<share_tree> trees;
  // The share tree of class `cls`: an empty one when the model has none for it (a model built by hand).
  const share_tree& tree_of(int cls) const;
  std::vector<std::string> group_names;  // every class's share groups, class by class (schedule_plan's)
  std::vector<user_limit> user_limits;
  std::vector<machine_rec> machines;
  std::vector<share_rec> shares;
  std::vector<job_rec> jobs;
  std::vector<int> free_share_slots;
  std::vector<int> free_job_slots;
  std::vector<int> pool_postorder;  // children before parents, children by search order
  std::unordered_map<machine_id, int> machine_index;
  std::unordered_map<share_id, int> share_index;
  std::unordered_map<job_id, int> job_index;
  int max_order = 1;
  std::string share_prefix;     // unique per boot; share ids are "<prefix>.<seq>"
  std::uint64_t next_seq = 1;
  std::uint64_t reconcile_epoch = 0;

  // Tie-break orders kept up to date, so that no stage sorts strings every round: machines by name, jobs
  // by age (submission time, then id), users by name, and jobs by id (the plan's order). index_job and
  // unindex_job record work as it arrives, leaves or changes its submission time or user; refresh_ranks()
  // merges those changes into the age order and turns it into integer ranks (O(jobs + changes log
  // changes), and only after a change). The stages call refresh_ranks() first; a hand-built model (no
  // index_job calls) is indexed from scratch.
  std::vector<int> machine_rank;  // per machine slot: position by name
  std::vector<int> job_rank;      // per job slot: position by (submitted_ms, id); -1 for a free slot
  std::vector<int> user_rank;     // per user slot: position by name
  std::vector<user_id> users;     // interned user names (never removed: a few per user ever seen)
  std::unordered_map<user_id, int> user_index;  // lookup only
  using age_key = std::tuple<std::int64_t, job_id, int>;  // (submitted_ms, id, slot)
  std::vector<age_key> jobs_by_age;  // live jobs by age, as of the last refresh_ranks()
  std::vector<age_key> age_added, age_removed;  // index_job / unindex_job since then
  std::vector<age_key> age_scratch;             // merge_age_changes' (kept for its capacity)
  std::map<job_id, int> jobs_by_id;  // live jobs, the plan's order
  bool ranks_stale = true;
  std::uint64_t job_set_changes = 0;  // counts index_job / unindex_job: the plan re-merges its entries then
  // The ids of the last index_job / unindex_job calls, oldest first: changes job_set_log_base + 1 to
  // job_set_changes. A reader that saw change job_set_log_base or later finds here every id that came or
  // went since (plan_keeper: a delta's merge without a walk over every entry); one further behind, or
  // after the index was rebuilt from scratch, walks the whole id order. Bounded by max_job_set_log.
  std::vector<job_id> job_set_log;
  std::uint64_t job_set_log_base = 0;
  static constexpr std::size_t max_job_set_log = 256;
  // Counts the changes of what the walks kept between rounds read of the machines (How Much's tables,
  // count_tables; the plan's node counts): a machine added, dropped or renumbered, its pool, order or state,
  // and its non-preemptable use. Every write of those fields calls machines_changed(), so that a walk kept
  // at an equal count still stands.
  std::uint64_t machine_changes = 0;
  void machines_changed() { ++machine_changes; }
  std::uint64_t share_changes = 0;  // source of job_rec::shares_version
  std::uint64_t arrivals = 0;       // source of job_rec::reason_version's high half
  void shares_changed(int job) {
    jobs[static_cast<std::size_t>(job)].shares_version = ++share_changes;
    if (shares_changed_log.size() < max_shares_changed_log)
      shares_changed_log.push_back(job);
    else
      shares_changed_log_full = true;
  }
  // The jobs shares_changed named (with repeats) since the scheduler last took them: the only jobs whose
  // last reconcile a new version can have undone (nodepool_scheduler::apply_changes). Past
  // max_shares_changed_log entries the log stops and says so, and the scheduler looks at every job.
  std::vector<int> shares_changed_log;
  bool shares_changed_log_full = false;
  static constexpr std::size_t max_shares_changed_log = std::size_t{1} << 17;

  void index_job(int slot);    // after arrival, or after a change of its submission time or user
  void unindex_job(int slot);  // before departure, or before such a change
  void log_job_set_change(const job_id& id);  // index_job / unindex_job's count and log
  void refresh_ranks();
  void merge_age_changes();  // age_added and age_removed into jobs_by_age (by refresh_ranks)
  static constexpr std::size_t max_age_edits_in_place = 8;  // more: merge_age_changes
  std::size_t edit_age_in_place();
  void drop_indexes();  // forget all of the above (refresh_ranks() then rebuilds them from the jobs)

  // Counters of the current round.
  int round_given = 0;              // grants What Of made that a plan will list (net of those dropped again)
  int round_preempted = 0;
  int round_evicted = 0;
  int round_needy_changes = 0;      // a job's needy flag or needy machine changed (defragment)
  // The earliest reclaim deadline plan_preemptions left pending (0 = none): the round due then must run
  // even if nothing else changed.
  std::int64_t next_reclaim_ms = 0;
  // Sparing preemption's R2 (preemption_policy.hpp): since when each (class, user) short of its count has been
  // short without a break; rewritten every round with the units short in it.
  std::map<std::pair<int, user_id>, std::int64_t> sparing_short_since;
  std::vector<int> created_shares;  // share slots added since the last round was published
  std::vector<int> removals;        // share slots marked preempt or evict since the last round was published

  const resource_class* class_of(const job_rec& j) const {
    return j.cls >= 0 ? &classes[static_cast<std::size_t>(j.cls)].def : nullptr;
  }
  core::policy policy_of(const job_rec& j) const {
    const auto* rc = class_of(j);
    return rc != nullptr ? rc->policy : core::policy::fair_share;
  }
  int priority_of(const job_rec& j) const {
    const auto* rc = class_of(j);
    return rc != nullptr ? rc->priority : 0;
  }
  int class_pool(const job_rec& j) const { return j.cls >= 0 ? classes[static_cast<std::size_t>(j.cls)].pool : -1; }
  // True when pool `p` is `ancestor` or lies below it.
  bool in_subtree(int p, int ancestor) const;
  // Processes held and not being removed (DUCC's countNShares).
  int current(const job_rec& j) const { return j.held; }
  // Processes the work map has confirmed (running) and not being removed.
  int confirmed(const job_rec& j) const { return j.running; }
  // Around every change of a live share's status, blacklisted flag or initialization: keeps job_rec::held,
  // ::running and the initialization counts.
  void uncount_share(int slot);
  void count_share(int slot);
  void recount_jobs();  // from scratch (drop_indexes)

  // A fresh share id and its sequence number (deterministic given the calls made).
  std::pair<share_id, std::uint64_t> new_share_id();
  // Share bookkeeping; the only places that change machine.used.
  int add_share(int job, int machine, int order, share_id id, std::uint64_t seq, share_status status);
  void remove_share(int slot);
  void mark_removing(int slot, share_status status);  // preempt or evict; counts the round's change
  // Sets (at_ms > 0) or drops (0) a share's reclaim deadline, keeping the job's and machine's counts.
  void set_reclaim(int slot, std::int64_t at_ms);
  // Defragmentation's hand-over of an unpublished share of the same order to a needy job.
  void transfer_share(int slot, int new_job);
};

}  // namespace rmbus::core
