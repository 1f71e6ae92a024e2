#pragma once
// What one scheduling round of one top-level nodepool decides, as plain values the actor layer publishes.
//
// A schedule_plan is a full state, not a delta: every job the scheduler holds is listed with all of its
// shares, each with its status. Share status follows the orchestrator's confirmation:
//   new      allocated by the RM, the work map does not show the process yet (re-sent until it does);
//   running  the work map shows the process;
//   preempt  fair-share preemption published; stays listed until the work map shows the process gone;
//   evict    eviction (node down, vary-off, blacklist); stays listed until the process is gone.
// A job that holds less than it was counted carries a reason a person can act on: a code plus a text with
// the numbers ("user bob at allotment 40 of 40 quanta", "no machine of order 4 in pool P").

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "containers/indirect_vector.hpp"
#include "core/ids.hpp"
#include "core/job_cap.hpp"
#include "core/policy.hpp"
#include "core/start_estimate.hpp"

namespace rmbus::core {

enum class share_status { running, new_share, preempt, evict };
const char* to_string(share_status s);  // "running", "new", "preempt", "evict"

enum class job_status { scheduled, pending, refused };
const char* to_string(job_status s);  // "scheduled", "pending", "refused"

enum class reason_code : std::uint8_t {  // one byte: two of them share a job record's hot line
  none,
  // Refusals: the work can never run as submitted.
  unknown_class,              // no such class (or no default class for its kind)
  class_not_in_pool,          // the class schedules in a pool outside this top-level pool
  user_not_allowed,           // the class lists its users and this one is not among them
  reservation_in_fair_share,  // a reservation submitted to a FAIR_SHARE class
  service_in_fair_share,      // a service or managed reservation submitted to a FAIR_SHARE class
  unknown_node,               // recovery of a process on a node nobody has reported
  // Waiting: the work may run later.
  allotment_exceeded,         // non-preemptable: user at or over the allotment
  no_machine_of_order,        // no machine in the pool is large enough (or of the exact reserve size)
  resources_exhausted,        // machines exist but none is free or freeable now
  no_machine_matches_hosts,   // the user's host list excluded every machine
  waiting_for_preemptions,    // counted, space is being freed by preemptions/evictions
  waiting_for_defragmentation,
  no_share_counted,           // fair share gave it nothing (better priorities or fair share used it all)
  completed,                  // winding down or its single allocation ended: nothing more is given
  settling,                   // the RM restarted and is settling: it holds what it recovered, gives nothing new
};
const char* to_string(reason_code r);

struct planned_share {
  share_id id;
  machine_id node;
  int quanta = 0;  // the share's order
  share_status status = share_status::new_share;
  // A running share chosen for preemption under its class's reclaim grace: it is preempted at this time
  // (ms, the round's clock) if the need still stands. 0 = no deadline.
  std::int64_t reclaim_at_ms = 0;

  bool operator==(const planned_share&) const = default;
};

struct job_plan {
  job_id id;
  job_status status = job_status::pending;
  reason_code reason = reason_code::none;
  std::string reason_text;            // empty when reason == none
  std::uint64_t memory_mb_per_process = 0;  // order x quantum: what each process may use
  int order = 0;
  int given = 0;                      // the How Much count (processes)
  std::vector<planned_share> shares;  // by creation (share sequence), then id
  // For monitors: who asked, in which class, and the numbers its count came from (processes).
  user_id user;
  std::string class_name;               // empty when no class resolved (refused)
  // Its user's innermost share group in the class: an index into schedule_plan::group_names (an int, not
  // a name, so that a plan without groups moves no more strings than before); -1: none.
  int group = -1;
  std::int64_t demand = 0;              // what its remaining work could use (step 2 of the cap)
  std::int64_t fair_share = 0;          // pure fair share before bonus shares
  // Held below its fair share by design, not starved: the cap step that holds it ("prediction",
  // "initialization_cap", "doubling", "max_processes", "probe_first"; design_cap_of); empty otherwise.
  std::string_view capped_by;

  bool operator==(const job_plan&) const = default;
};

// Counts for the round (the actor adds timings). "this round" counts are changes made by this round.
struct schedule_counts {
  int jobs = 0;
  int nodes = 0;              // machines known to the pool
  int schedulable_nodes = 0;
  int given = 0;              // shares newly allocated this round
  int preempted = 0;          // preemptions published this round
  int evicted = 0;            // evictions published this round (node faults, blacklist)
  int pending_jobs = 0;       // jobs with a reason other than none
  int refused_jobs = 0;

  bool operator==(const schedule_counts&) const = default;
};

struct schedule_plan {
  std::string pool;
  std::int64_t now_ms = 0;
  std::uint64_t quantum_mb = 0;
  // Sorted by job id. Each entry in its own allocation (containers/indirect_vector.hpp): a job whose id
  // sorts early moves pointers, not the entries after it.
  containers::indirect_vector<job_plan> jobs;
  schedule_counts counts;
  std::vector<std::string> group_names;  // every share group of the pool's classes (job_plan::group)

  // The name of the job's share group; "" when it has none.
  const std::string& group_of(const job_plan& j) const;

  const job_plan* find(const job_id& id) const;
  bool operator==(const schedule_plan&) const = default;
};

// A node a round found above its order by what the work map shows running there (a process the orchestrator
// started late, one recovered onto a node heard smaller), and the shares the round took back, least invested
// first, to bring it under its order again.
struct over_order_repair {
  machine_id node;
  int held = 0;   // quanta held there before the repair
  int order = 0;
  std::vector<share_id> shares;  // preempted (fair share) or evicted (non-preemptable work)
};

// How long each stage of the last round took, in microseconds of the clock given to
// nodepool_scheduler::set_stage_clock (all 0 without one, and for a round skipped as unchanged).
struct stage_timings {
  std::int64_t how_much_us = 0;  // the job caps included (How Much computes them in its first sweep)
  std::int64_t what_of_us = 0;
  std::int64_t preempt_us = 0;
  std::int64_t defrag_us = 0;
};

// One round's input besides the state the scheduler holds. schedule() never reads a clock.
struct round_input {
  std::int64_t now_ms = 0;
  // Non-preemptable memory (MB) each user holds or was promised in OTHER top-level pools, so that the
  // global allotment spans pools; the actor layer collects it from the other schedulers.
  std::map<user_id, std::uint64_t> other_pools_nonpreemptable_mb;
  // A restarted RM's settle window: until it has heard a heartbeat interval of agents and a work map, what
  // it knows of the cluster may be partial, so a round keeps every share as it is (recovered ones too),
  // gives nothing new and preempts nothing. Evictions of nodes found down are not held back.
  bool settling = false;
  // The round's number as the actor layer publishes it (rm.state's cycle); 0 when unnumbered. A removal is
  // stamped with it, so that the orchestrator's echo of the cycles it acted on can acknowledge it.
  std::uint64_t cycle = 0;
  // With settling: what the jobs left waiting are told (empty: the restart's settle window). An HA active
  // waiting for the orchestrator to accept its epoch settles the same way, for another reason.
  std::string settle_reason{};
};

// One level of the share tree between a job's class and the job itself, as the last round counted it.
struct share_level {
  std::string level;                  // "class", "group", "user" or "job"
  std::string name;
  int weight = 0;                     // share ratio among its siblings (users 1; jobs 1)
  int priority = 0;                   // share priority among its siblings, lower first (classes: the class's)
  std::int64_t demand_qshares = 0;    // what the work beneath it asked for (job caps x order, quanta)
  std::int64_t awarded_qshares = 0;   // what How Much counted for it (quanta)
};

// The numbers behind one job's count (admin "explain").
struct job_explanation {
  job_id id;
  bool known = false;
  std::string class_name;
  std::string group;                      // innermost share group; empty: none
  std::vector<share_level> path;          // class, its groups outermost first, user, job (FAIR_SHARE only)
  core::policy policy = core::policy::fair_share;
  int order = 0;
  std::int64_t demand = 0;                // processes its remaining work could use (step 2 of the cap)
  job_cap_result cap;                     // every cap step
  std::int64_t pure_fair_share_qshares = 0;  // fair share before bonus shares (quanta)
  std::int64_t pure_fair_share = 0;       // the same in processes (quanta / order)
  int given = 0;                          // How Much count
  int placed = 0;                         // processes held and not being removed
  int preempting = 0;                     // processes being preempted or evicted
  int reclaiming = 0;                     // processes running with a reclaim deadline
  reason_code reason = reason_code::none;
  std::string blocked;                    // what blocked the rest, in words
  // Why it holds less than its fair share (held_back_of): `held_back` names the cause (a cap step such as
  // "prediction", "reclaim_grace", or a reason code such as "waiting_for_preemptions"), `held_back_kind` says
  // "design" (the policy holds it back on purpose), "starvation" (space is being freed for it) or "blocked"
  // (it cannot have more now); all empty when it holds its fair share or wants no more.
  std::string held_back;
  std::string held_back_kind;
  std::string held_back_text;
  // When it will end (running) and start (short of its count), each omitted without a basis
  // (core/start_estimate.hpp); computed at the last round's time.
  std::optional<end_estimate> estimated_end;
  std::optional<start_estimate> estimated_start;
  std::string text() const;               // everything above, one line per number
};

// What a hypothetical work item would get now, computed on a copy of the scheduler.
struct whatif_result {
  job_plan plan;
  job_explanation explanation;
  struct preemption {
    job_id job;
    share_id share;
    machine_id node;
  };
  std::vector<preemption> preempted;  // processes of other jobs it would preempt this round
};

// Read-only view in the spirit of DUCC's rm_qload / rm_qoccupancy.
struct class_load {
  std::string name;
  core::policy policy = core::policy::fair_share;
  int priority = 0;
  int weight = 0;
  std::map<int, std::int64_t> demand_by_order;   // processes wanted (job caps), by order
  std::map<int, std::int64_t> awarded_by_order;  // How Much counts, by order
};

// One share group of a FAIR_SHARE class with work in the last round (admin qload; listed only when groups
// are configured).
struct group_load {
  std::string class_name;
  std::string name;
  std::string parent;  // the class or the enclosing group
  int depth = 1;       // 1: directly under the class
  int weight = 1;
  int priority = 0;
  std::map<int, std::int64_t> demand_by_order;   // processes wanted (job caps), by order
  std::map<int, std::int64_t> awarded_by_order;  // How Much counts, by order
  std::int64_t pure_fair_share_qshares = 0;      // its share of the class's pure fair share (quanta)
};

// Work of one class and order that no machine in reach can hold (reason no_machine_of_order): How Much
// counts it nowhere, so admin qload lists it apart (core/unmet_demand.hpp).
struct unmet_load {
  std::string class_name;
  int order = 0;
  reason_code reason = reason_code::none;
  std::int64_t jobs = 0;
  std::int64_t processes = 0;  // what their caps ask for, at least one per job
  std::string text;            // the reason of the first job, by id

  bool operator==(const unmet_load&) const = default;
};

enum class machine_state { up, varied_off, down, blacklisted };
const char* to_string(machine_state s);

struct machine_view {
  machine_id name;
  std::string ip;
  std::string nodepool;
  machine_state state = machine_state::up;
  bool quiesced = false;
  bool drained = false;  // by the admin: nothing new placed, what runs stays
  std::uint64_t memory_mb = 0;
  int quanta = 0;       // machine order
  int free_quanta = 0;  // quanta not held by any share (never negative)
  struct held {
    job_id job;
    planned_share share;
  };
  std::vector<held> shares;
};

struct pool_view {
  std::string pool;
  std::uint64_t quantum_mb = 0;
  std::vector<class_load> classes;     // classes with work, by priority then weight desc then name
  std::vector<group_load> groups;      // share groups with work, by class as above, then tree order
  std::vector<machine_view> machines;  // by name
  std::vector<unmet_load> unmet;       // by class, order, reason
};

}  // namespace rmbus::core
