#pragma once
// The schedule_plan a nodepool scheduler publishes, kept between rounds and brought up to date in place.
//
// A plan lists every job with all of its shares (schedule_plan.hpp). Built afresh every round it cost a
// copy of every job's id, user, class, reason and share list, tens of thousands of allocations at 10,000
// nodes, also when almost nothing changed. Kept instead, a round rewrites only what differs: a job's share
// list is rebuilt when its shares_version moved, its other fields are compared and assigned, and the
// entries are re-merged by id only when the set of jobs changed (cluster_model::job_set_changes). An entry
// is looked at only when what it is built from moved (fill_inputs): a round after one change reads the
// job records front to back and touches a handful of entries.
//
// Each update also says what it rewrote (changed_entries, removed_jobs), so that the actor layer can send
// only the jobs whose schedule changed (issue 19's change-only pool plans). An entry counts as changed when
// any of its fields got a new value (a share list rebuilt is compared with the one before).
//
// The result is exactly the plan a fresh build gives: tests/core/test_incremental.cpp checks it against a
// scheduler that calls forget() before every round.
// Not thread-safe; one owner.

#include <cstdint>
#include <vector>

#include "containers/vector_edits.hpp"
#include "core/cluster_model.hpp"
#include "core/schedule_plan.hpp"

namespace rmbus::core {

// The live jobs in id order when the caller already has them (nodepool_scheduler after apply_work): their
// slots and their ids side by side. Walking these beats walking the model's jobs_by_id tree.
struct jobs_in_id_order {
  const std::vector<int>* slots = nullptr;
  const std::vector<job_id>* ids = nullptr;
};

class plan_keeper {
 public:
  // Brings the plan up to date with `m` after a round: every live job of `m` in id order, with its
  // shares, count, reason and numbers. The round counts (given, preempted, evicted) come from `m`.
  // `order` is used when it lists exactly the live jobs; otherwise m.jobs_by_id gives the order.
  // REQUIRES: m.refresh_ranks() since the model's last change of jobs.
  const schedule_plan& update(const cluster_model& m, std::int64_t now_ms, jobs_in_id_order order = {});

  // The plan of a round that changed nothing: the last one, at a new time, with no changes counted.
  const schedule_plan& unchanged(std::int64_t now_ms);

  // The next update() builds every entry anew instead of reusing what it kept (nodepool_scheduler's
  // drop_caches). The plan itself stays until then.
  void forget() { rebuild_ = true; }

  // What the last update() (or unchanged()) did to the plan before it: the entries (indices into
  // plan().jobs) whose fields it changed, new jobs included, in id order; and the ids of the jobs the plan
  // before listed that this one does not.
  const std::vector<std::size_t>& changed_entries() const { return changed_; }
  const std::vector<job_id>& removed_jobs() const { return removed_; }
  // How many merges of the entries were done in place (merge_in_place): tests see that the path is taken.
  std::uint64_t merges_in_place() const { return merges_in_place_; }
  // Of those, the merges found from the model's log of ids (merge_logged), without a walk over the entries.
  std::uint64_t merges_logged() const { return merges_logged_; }

 private:
  // Per plan entry: what it was built from, so that unchanged parts are recognised by an integer compare.
  struct source {
    int slot = -1;              // the job's slot in the model
    std::uint64_t version = 0;  // the job's shares_version its share list was built from (0: never)
    int user_slot = -1;         // its user (cluster_model::users) when the user name was copied
    int cls = -2;               // its class when the class name was copied (-1: none)
    // The quanta of the last share of the list built (0: none), taken when the list is built: reading the
    // list's own memory for it on every round missed the cache for every job.
    int last_share_quanta = 0;
    // The job's reason_version the entry's reason text was copied at (0: not copied, or since replaced by
    // a refusal's text or cleared): the text is read only when the version moved.
    std::uint64_t reason_version = 0;
  };

  void merge_jobs(const cluster_model& m, jobs_in_id_order order);
  // merge_jobs from the model's log of the ids that came or went since the last merge
  // (cluster_model::job_set_log): each found by a binary search, no walk over the entries. False when the
  // log does not reach back to the last merge, or did not name every change (the plan's size then differs
  // from the model's); the entries are then merged by a walk.
  bool merge_logged(const cluster_model& m);
  // merge_jobs when the model's id order is at hand: the entries edited where they lie (vector_edits.hpp)
  // rather than moved into a new vector (100,000 entries, some 20 MB, for one arrival).
  void merge_in_place(const std::vector<int>& slots, const std::vector<job_id>& ids);
  // Applies edits_ to the entries and their sources: a new or rebuilt entry of edit k is job
  // *edit_sources_[k].id in slot edit_sources_[k].slot.
  void apply_edits();
  // Appends the entry of job `slot` (id `id`) to `jobs`/`sources`: the kept one when the old entries, read
  // from `old` on in id order, hold it; a new empty one otherwise.
  void take_entry(const job_id& id, int slot, std::size_t& old, containers::indirect_vector<job_plan>& jobs,
                  std::vector<source>& sources);
  // Returns whether any field of the entry changed.
  bool fill(const cluster_model& m, std::size_t entry);

  // All that fill() reads of a job's record (with the job's class, which never changes under a slot's
  // record): equal inputs give the entry it already has. Kept per job slot and compared in slot order, so
  // that a round reads the records front to back and goes to the entries (in id order, which is no order
  // of the records: a cache miss each) only for the jobs whose inputs moved. Records made by
  // nodepool_scheduler::arrive carry their arrival in reason_version's high half, so equal inputs are also
  // the same record; records made by hand (high half 0) are always filled.
  struct fill_inputs {
    std::uint64_t shares_version = 0;
    std::uint64_t reason_version = 0;
    std::int64_t demand = 0;
    std::int64_t pfs_qshares = 0;
    std::int64_t cap = 0;
    const char* cap_decided_by = nullptr;
    int given = 0;
    int held = 0;
    int order = 0;
    int group = 0;
    int user_slot = 0;
    int cls = 0;
    reason_code reason = reason_code::none;
    reason_code refusal = reason_code::none;
    bool refused = false;
    bool done = false;
    bool operator==(const fill_inputs&) const = default;
  };
  static fill_inputs inputs_of(const job_rec& j);
  // Fills the entries whose job's inputs moved since their last fill, walking the jobs in slot order;
  // false when the entries do not map onto the live jobs one to one (the caller then fills every entry).
  bool fill_changed(const cluster_model& m);
  void map_slots_to_entries(const cluster_model& m);

  schedule_plan plan_;
  std::vector<source> sources_;
  bool with_groups_ = false;      // the model has share groups (fill() then sets job_plan::group)
  std::uint64_t quantum_mb_ = 0;  // the model's at the last update
  std::vector<const share_rec*> by_creation_;  // fill()'s scratch: a job's shares in plan order
  std::vector<planned_share> shares_scratch_;  // fill()'s scratch: a job's share list, rebuilt
  std::uint64_t job_set_seen_ = 0;             // cluster_model::job_set_changes at the last merge
  bool rebuild_ = true;
  std::vector<std::size_t> changed_;
  std::vector<job_id> removed_;
  // The merges' scratch: the edits of the entries, and for each the job it makes or rebuilds.
  struct edit_source {
    const job_id* id = nullptr;
    int slot = -1;
  };
  std::vector<containers::vector_edit> edits_;
  std::vector<edit_source> edit_sources_;
  std::vector<job_id> logged_ids_;
  std::vector<fill_inputs> filled_from_;  // per job slot: the inputs of its entry's last fill
  std::vector<char> filled_;              // per job slot: 1 when filled_from_ describes its entry
  std::vector<int> entry_of_slot_;        // per job slot: its entry (-1: none), as of the last merge
  bool entries_moved_ = true;             // a merge changed the entries since entry_of_slot_ was made
  // The plan's node counts, and the model's machine_changes and machine count they were taken at. An update
  // after a rebuild (the first one too) takes them again.
  int nodes_ = 0, schedulable_nodes_ = 0;
  std::uint64_t nodes_counted_at_ = 0;
  std::size_t nodes_counted_of_ = 0;
  std::uint64_t merges_in_place_ = 0;
  std::uint64_t merges_logged_ = 0;
};

}  // namespace rmbus::core
