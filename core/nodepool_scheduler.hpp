#pragma once
// The scheduler of ONE top-level nodepool: DUCC's NodepoolScheduler cycle as a plain value type.
//
// Driven by plain calls (style.md section 1): machines arrive and change state, the orchestrator's work
// for this pool arrives as a full snapshot (apply_work), and schedule(round_input) runs one cycle:
//   how_much (the job caps first, in its sweep over the jobs) -> what_of -> plan_preemptions -> defragment
// and returns the full schedule_plan. It never reads a clock or a random source: the same calls give the
// same plan. Top-level pools share no mutable state; what spans pools (the global allotment) comes in
// through round_input.
//
// Share ids are "<prefix>.<n>" with n counting from 1; the caller gives a prefix unique per boot, so ids
// are never reused, also across restarts, and the numbering is deterministic given the inputs.
//
// The object is copyable: whatif() runs a hypothetical round on a copy. Not thread-safe; one owner.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/cluster_model.hpp"
#include "core/how_much.hpp"
#include "core/ids.hpp"
#include "core/plan_keeper.hpp"
#include "core/policy.hpp"
#include "core/schedule_plan.hpp"
#include "core/work.hpp"

namespace rmbus::core {

struct machine_report {
  machine_id name;
  std::string ip;
  std::uint64_t memory_mb = 0;  // memory DUCC may use (the agent's memFree); reserved_dram is subtracted
  bool quiesced = false;        // agent says unavailable: not schedulable, nothing evicted
};

// Which nodepool (nested or top-level) a node belongs to: node lists first, then regular expressions
// matched against the name, the short name and the ip; unknown nodes go to the first top-level pool.
// Returns "" when the config has no nodepool at all.
std::string find_nodepool(const scheduler_config& cfg, const std::string& name, const std::string& ip);
// The top-level pool above `pool` ("" if unknown).
std::string top_level_of(const scheduler_config& cfg, const std::string& pool);
// The quantum (MB) of top-level pool `top_pool`: its own when set, else the global one (1 GB when unset).
std::uint64_t quantum_of(const scheduler_config& cfg, const std::string& top_pool);

// One machine as the actor reports it in rm.nodes, read in place (the pointers live as long as the
// scheduler and its machine): no share lists, no sorting, so a round can look at every machine cheaply.
struct machine_brief {
  const machine_id* name = nullptr;
  const std::string* nodepool = nullptr;
  machine_state state = machine_state::up;
  bool quiesced = false;
  bool drained = false;  // by the admin
  std::uint64_t memory_mb = 0;
  int quanta = 0;
  int free_quanta = 0;
  bool foreign = false;  // another top-level pool's machine, here only for work of ours on it: not reported
};

// A share of the last schedule published for this pool, as a fresh scheduler adopts it (adopt_published).
struct published_share {
  share_id id;
  machine_id node;
  int quanta = 1;
  share_status status = share_status::new_share;
  std::int64_t reclaim_at_ms = 0;
};
using published_schedule = std::map<job_id, std::vector<published_share>>;

// What forget_machines did with each name it was given.
struct forget_outcome {
  std::vector<machine_id> forgotten;  // removed, or never known here
  std::vector<machine_id> kept;       // still holding shares, or varied off / blacklisted by the admin
};

class nodepool_scheduler {
 public:
  // REQUIRES: `top_pool` names a top-level pool of `cfg` (otherwise an empty tree with just that name).
  nodepool_scheduler(std::string top_pool, scheduler_config cfg, std::string share_id_prefix);
  // The prefix of share ids given from now on; ids given before keep theirs. An RM that becomes the active
  // one (HA) coins ids under its epoch and instance, so two actives can never coin the same id.
  void set_share_prefix(std::string prefix);

  // ---- machines -------------------------------------------------------------------------------
  // Arrival or heartbeat. A known machine gets its size and quiesce flag refreshed and comes back up if
  // it was down; one that shrank below what its shares hold has its youngest shares evicted until the rest
  // fit. Returns false (and changes nothing) when memory is 0.
  bool update_machine(const machine_report& report);
  // The node stopped answering: every share on it except unmanaged reservations is evicted.
  bool machine_down(const machine_id& name);
  // The node is reported down, its work not evicted yet (the mass-loss brake paces evictions): nothing new is
  // placed on it from now on, and its grants whose processes no map has shown are evicted at once; machine_down
  // evicts the rest later, or its next heartbeat (update_machine) brings it back with what it holds.
  bool machine_unreachable(const machine_id& name);
  // Admin vary-off: fair-share shares are evicted, nothing new is placed; fixed work stays.
  bool vary_off(const machine_id& name);
  bool vary_on(const machine_id& name);
  // Admin drain (Slurm's DRAIN): nothing new is placed on it, nothing is evicted; undrained when false.
  bool set_drained(const machine_id& name, bool drained);
  // Admin blacklist: evict what can be evicted (jobs, services), keep APs and reservations accounted,
  // allocate nothing new until cleared.
  bool set_blacklisted(const machine_id& name, bool blacklisted);
  // Processes of other top-level pools' work running on this pool's machines (a node moved here in a
  // reconfiguration while that work ran on it), counted per node; replaces the previous counts. Such a
  // machine is blacklisted until they end: nothing new is placed on it. Unknown nodes are ignored.
  void set_foreign_processes(const std::map<machine_id, int>& per_node);
  // The node was down too long (the intake forgets it): each machine named is removed unless it still holds
  // a live share (an unmanaged reservation stays on a down node; a share being evicted holds its space until
  // the orchestrator confirms its process gone), carries an admin mark (vary-off, blacklist), which
  // forgetting would lose, or has other pools' processes on it (set_foreign_processes). Removing one renumbers the machine slots (see machine_at). A name not known here
  // counts as forgotten: nothing of it is held.
  forget_outcome forget_machines(const std::vector<machine_id>& names);

  // ---- a fresh scheduler's start -------------------------------------------------------------------
  // The shares of the last schedule published for this pool (by its predecessor: a scheduler replaced after
  // a hang or a throw, the one before a reconfiguration, or another HA active), by job. The next
  // apply_work takes each as this scheduler's own when its job arrives: a `new` share stays new (the
  // orchestrator may be starting it) and occupies its node until a work map shows its process ended or a
  // later round withdraws it (preempt, evict), exactly as a share this scheduler granted itself; a running
  // share the map no longer lists has ended; a share being preempted or evicted stays until its process is
  // gone. Without this, quanta granted a moment before a replacement would be given away a second time.
  // Shares of work the next map does not list (ended), or that this scheduler refuses, are dropped, and so
  // are shares on a node that is no longer this pool's or that their class may not use (a reconfiguration
  // moved it): recovery's rules decide for the processes the map shows there. A share on a machine not
  // heard of yet registers the machine, sized by the quanta adopted there, until it reports.
  // Only the next apply_work adopts: what it does not take is forgotten.
  void adopt_published(published_schedule shares);

  // ---- work -----------------------------------------------------------------------------------
  // The orchestrator's full work map for this pool. Reconciles: new work arrives (refusals decided here),
  // work gone or completed frees all its shares, an ended/vanished process vacates its share, a process
  // with an unknown share id is RECOVERED (accounted as running, never published as new), and a "new"
  // share becomes "running" once the map shows its process.
  void apply_work(const work_map& snapshot);
  // The same as apply_work(snapshot) when `snapshot` differs from the map of the previous apply_work /
  // apply_changes only in the items named by `touched` (added, changed or removed there): only those items
  // are applied, plus the jobs whose last reconcile may not hold again (it changed something, recovered or
  // refused a process, or the job's shares changed since), found from the jobs reconcile left unsettled and
  // the model's log of share changes, not by visiting every job. Falls back to
  // apply_work when that cannot be told (the first call, shares adopted and not yet taken, jobs added by
  // anything but these two calls).
  void apply_changes(const work_map& snapshot, const std::vector<job_id>& touched);
  // The cycle of the last schedule the orchestrator acted on, as the map to be applied next says (its
  // rm_cycle; empty: the orchestrator does not say). A share the map never showed whose removal a round
  // published is dropped only once the orchestrator has acted on that round: a map built before that may
  // lack a process the orchestrator is about to start, or has started. An echo above every cycle stamped
  // here comes from before this scheduler's time (an RM restart) and says nothing.
  void set_acted_cycle(std::optional<std::uint64_t> cycle);

  // ---- the cycle ------------------------------------------------------------------------------
  // With in.settling, the round only reports: each job keeps what it holds (round_input::settling).
  // The plan is kept by the scheduler and brought up to date in place (plan_keeper): the reference
  // stays valid, and its contents are those of the last round, until the next call of schedule().
  const schedule_plan& schedule(const round_input& in);
  // What the last schedule() changed in the plan before it (plan_keeper::changed_entries, removed_jobs):
  // the actor layer sends only those jobs.
  const std::vector<std::size_t>& plan_changed_entries() const { return plan_.changed_entries(); }
  const std::vector<job_id>& plan_removed_jobs() const { return plan_.removed_jobs(); }
  // The nodes the last schedule() found above their order, and what it took back on each (empty most rounds).
  const std::vector<over_order_repair>& last_repairs() const { return repairs_; }
  // How many fair-share class splits, and users' splits in classes split again, How Much took as kept from
  // an earlier round since the last drop_caches() (how_much_cache).
  std::uint64_t how_much_splits_reused() const { return how_much_cache_.splits_reused; }
  std::uint64_t how_much_users_reused() const { return how_much_cache_.users_reused; }
  // How many classes split again had their jobs put in order from their kept split (how_much_cache).
  std::uint64_t how_much_splits_edited() const { return how_much_cache_.splits_edited; }
  // How many times the plan's entries were merged in place after a few jobs came or went (plan_keeper).
  std::uint64_t plan_merges_in_place() const { return plan_.merges_in_place(); }
  std::uint64_t plan_merges_logged() const { return plan_.merges_logged(); }

  // Stage durations are measured with this clock (microseconds, monotonic), which the caller supplies so
  // that the core reads no clock of its own; the readings never influence a decision.
  void set_stage_clock(std::function<std::int64_t()> monotonic_us) { stage_clock_ = std::move(monotonic_us); }
  const stage_timings& last_stage_timings() const { return timings_; }

  // Forgets every index and cache kept between rounds (the tie-break orders of machines, jobs and users,
  // the plan's entries); the next call rebuilds them from the model. They never decide
  // anything, which tests/core/test_incremental.cpp checks by scheduling with and without this call.
  void drop_caches();

  // What would `item` get now (run on a copy of this scheduler with the last round_input)?
  whatif_result whatif(const work_item& item) const;
  job_explanation explain(const job_id& id) const;
  pool_view view() const;
  // Machines by slot: slots are given in arrival order and never reused, so a caller can remember what it
  // last saw of slot i, until forget_machines removes one: the slots are then renumbered (a caller forgets
  // what it remembered by slot). REQUIRES: slot < machine_count().
  std::size_t machine_count() const { return model_.machines.size(); }
  machine_brief machine_at(std::size_t slot) const;

  // Non-preemptable memory (MB) each user holds or was counted in this pool: what the actor passes to
  // the OTHER pools' round_input.
  std::map<user_id, std::uint64_t> nonpreemptable_mb_by_user() const;

  const std::string& pool() const { return model_.top_pool; }
  std::uint64_t quantum_mb() const { return model_.quantum_mb; }
  const cluster_model& model() const { return model_; }

 private:
  const schedule_plan& settle_round(const round_input& in);
  // Brings every machine listed in over_order_ back under its order (docs/architecture.md, "Recovery").
  // `unstarted_only` (a settling round, which stops nothing that runs): only the `new` shares the work map has
  // never shown are taken back; a machine still above its order stays listed for the next full round.
  void repair_over_order(bool unstarted_only = false);
  // A machine not known before enters the model (indexed by name); returns its index.
  int add_machine_rec(machine_rec mc);
  // A machine holds more than its order: the next full round repairs it.
  void note_over_order(int machine);
  void evict_where(int machine, bool (*evictable)(const cluster_model&, const share_rec&));
  // A `new` share whose process no map has shown, on a node reported down: evicted (its job is placed
  // elsewhere); unmanaged reservations stay, as on a node that goes down.
  void withdraw_if_unstarted(int share);
  void evict_overflow(int machine);
  void evict_share(int share_slot);
  void arrive(const work_item& item);
  void refuse(job_rec& j, reason_code code, std::string text);
  void reconcile_processes(int job, const work_item& item);
  bool reconcile_all(int job, const work_item& item);
  void drop_job(int job);
  void apply_one(const work_item& item);
  int apply_one(const work_item& item, int slot);  // slot: the job's, or -1 when it is new; returns it
  int own_share_near(int job, const share_id& id, std::size_t& cursor) const;
  void mark_seen(int share_slot, const process_report& p);
  int pool_index(const std::string& name) const;
  int add_foreign_machine(const machine_id& name, std::uint64_t memory_mb);
  // A node known only from the work map or the last published schedule: registered as one of ours when it
  // belongs to this pool tree, else as a foreign machine. Returns its slot.
  int register_unheard_machine(const machine_id& name, std::uint64_t memory_mb);
  void adopt_shares_of(int job);
  std::vector<share_level> share_path(int job) const;

  cluster_model model_;
  std::vector<nodepool_def> pool_defs_;  // for node membership (lists and patterns)
  std::vector<class_load> last_loads_;   // the last round's How Much, for view()
  std::vector<group_load> last_groups_;  // the same for share groups (empty without groups)
  bool dirty_ = true;                    // some input changed since the last round, or that round changed state
  bool last_round_settled_ = false;     // the last round was a settling one (round_input::settling)
  std::vector<machine_id> foreign_held_;  // machines whose foreign_processes is not 0 (by name: slots may move)
  // Machines found above their order since the last full round (by name: slots may move), and what that
  // round's repair took back.
  std::vector<machine_id> over_order_;
  std::vector<over_order_repair> repairs_;
  plan_keeper plan_;                     // the last round's plan, returned again for an unchanged round
  how_much_cache how_much_cache_;        // fair-share splits of classes whose inputs did not change
  round_input last_input_;
  struct reconciled {
    std::uint64_t version = 0;  // the job's shares_version after that reconcile
    bool all_own = false;       // every process listed was one of the job's own shares, nothing changed
    std::vector<process_report> processes;
  };
  std::vector<reconciled> reconciled_;  // per job slot: what its last reconcile saw
  // The jobs whose last reconcile did not find all of its own (reconciled::all_own false), listed once
  // each by reconcile_processes: apply_changes applies them again. Emptied by every apply, which
  // reconciles each of them and so lists again those still not settled.
  std::vector<int> unsettled_;
  std::vector<char> unsettled_listed_;  // per job slot: 1 while in unsettled_ (2 while apply_changes gathers)
  // The edits of id_order_ after `dropped` (their ids and slots) left and `arrived` came (slots).
  void edit_id_order(const std::vector<std::pair<job_id, int>>& dropped, const std::vector<int>& arrived);
  // The removal of a share the map never showed is acknowledged (set_acted_cycle) and it may go.
  bool removal_acknowledged(const share_rec& sh) const;
  std::optional<std::uint64_t> acted_cycle_;  // set_acted_cycle's, while it is below newest_cycle_
  std::uint64_t newest_cycle_ = 0;            // the highest round_input::cycle scheduled
  std::vector<int> awaiting_ack_;             // share slots kept only until the orchestrator acts on a round
  // Every slot that has held work of a class that is not FAIR_SHARE, once (arrive lists it): the only jobs
  // nonpreemptable_mb_by_user reads, after every round, of 100,000 at 50,000 nodes. A slot stays listed
  // after its job leaves; the walk checks the job it holds now.
  std::vector<int> nonpreemptable_slots_;
  std::vector<char> nonpreemptable_listed_;  // per job slot
  std::vector<int> id_order_;           // job slots in id order after the last apply_work
  std::vector<job_id> id_order_ids_;    // their ids, contiguous (no job record read to match a map's id)
  std::vector<std::uint64_t> listed_;  // per job slot: the apply_work call that last listed it
  std::uint64_t apply_epoch_ = 0;
  bool applied_once_ = false;  // apply_work ran: id_order_ and reconciled_ describe the jobs held
  published_schedule adopted_;                       // until the next apply_work
  std::map<machine_id, std::uint64_t> adopted_quanta_;  // per node: what the adopted shares hold there
  std::function<std::int64_t()> stage_clock_;
  stage_timings timings_;
};

}  // namespace rmbus::core
