#pragma once
// The simulated orchestrator: it holds the work map and plays DUCC's orchestrator part against rm.state.
//
// Work arrives at its scenario time. The RM answers with shares; this model carries them out:
//   share "new"            -> a process with the share's id on its node: "starting" for start_ms, then
//                             "initializing" for the job's init_ms, then "running";
//   running process        -> each of its `threads` threads takes one work item at a time and finishes it
//                             item_ms later (so a process completes threads items per item_ms while work is
//                             left); the job's items_done counts finished items;
//   share "preempt"/"evict" -> the process stops at once (its items in flight go back to the job's queue)
//                             and ends preempt_exit_ms / evict_exit_ms later: it is published "ended" once,
//                             then left out of the map;
//   all items done          -> the job is published "completed" once (its processes "ended"), then left out;
//   rm.state says refused   -> the work is withdrawn the same way (DUCC moves it to Completed);
//   services, APs, reservations hold their processes until their end time (or for ever);
//   share "running" with reclaim_at_ms, when drain_on_reclaim is on (rmbus-sim --drain-on-reclaim), for a
//                             job: the process drains: it takes no new items, finishes the batch its threads
//                             hold (counted done), then ends at that batch's end time (published "ended"
//                             once, counted in `drained`); the job's other items stay in its queue. A process
//                             with no item in flight (starting, initializing, or idle) ends at once. If a
//                             later rm.state lists the share running without the key (the RM dropped the
//                             deadline) before the batch ends, the drain is called off; if it says preempt,
//                             the process is preempted as above (its batch goes back to the queue).
// A share on a node that is not one of the scenario's fails to launch: its process is "ended" at once.
// A node that dies takes its processes with it: they stop working at once but stay listed as they were
// (the orchestrator does not know yet) until the RM evicts them, or the node returns and its agent reports
// them gone (then they end at once).
//
// Work item state: "waiting" until one of its processes has finished initializing, then "running" (for
// good: DUCC keeps a job Running when it loses its processes); "completing" while every remaining item is
// in flight; "completed". item_ms is published as 0 until the job has finished an item (DUCC reports the
// measured mean; before the first one it has none).
//
// Pure and deterministic: the clock is passed in (scenario milliseconds, never decreasing: an earlier time
// is taken as the latest one seen), there is no I/O and no randomness. Work item completion is computed at
// the exact event times, whatever the granularity of the calls. Thread-safety: none (one owner).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "messages/rm_state.hpp"
#include "messages/workmap.hpp"
#include "tools/sim/scenario.hpp"

namespace rmbus::sim {

// One piece of work as the model sees it now (for the recorder, the progress line and tests).
struct job_view {
  std::string id;
  std::string user;
  std::string class_name;
  messages::work_kind kind = messages::work_kind::job;
  std::uint64_t memory_mb = 0;
  std::int64_t at_ms = 0;
  bool arrived = false;
  bool gone = false;     // no longer in the work map
  bool refused = false;  // the RM refused it; it was withdrawn
  std::string refused_reason;  // why, as rm.state said
  messages::work_state state = messages::work_state::waiting;
  std::uint64_t items_total = 0;
  std::uint64_t items_done = 0;
  std::uint64_t processes = 0;          // listed and not stopping: starting, initializing or running
  std::uint64_t running_processes = 0;  // of which running
  std::uint64_t demand = 0;  // processes its remaining work could use (jobs: ceil(left / threads), capped by
                             // max_processes; other work: 1 until it ends); 0 once completed
  std::optional<std::int64_t> first_process_ms;  // first process started (share "new" carried out)
  std::optional<std::int64_t> completed_ms;
  std::uint64_t preempted = 0;        // its processes stopped because the RM said preempt
  std::uint64_t evicted = 0;          // ... evict
  std::uint64_t launch_failures = 0;  // shares on nodes that are not the scenario's (see on_state)
  std::uint64_t drained = 0;          // its processes ended by draining before their reclaim deadline
  // Work lost to preemption (not eviction): items in flight when a process was preempted (they go back to
  // the queue and are done again), the time their batches had run, and initialization time that a
  // replacement process spends again (all of it once initialized, the part spent so far before that).
  std::uint64_t lost_items = 0;
  std::int64_t lost_batch_ms = 0;
  std::int64_t lost_init_ms = 0;
};

class orchestrator_model {
 public:
  // `submit_epoch_ms`: the wall-clock time (ms since the Unix epoch) that scenario time 0 stands for;
  // submitted_ms = submit_epoch_ms + at_ms. `node_memory_mb` fills processes' node_memory_mb.
  // `drain_on_reclaim`: drain processes whose share carries reclaim_at_ms (above); off, the key is ignored.
  orchestrator_model(std::vector<job_spec> jobs, orchestrator_spec timing, std::int64_t submit_epoch_ms,
                     std::map<std::string, std::uint64_t> node_memory_mb = {}, bool drain_on_reclaim = false);

  // Moves the model to `now_ms`: arrivals, process phases, work items, exits, end times.
  void advance(std::int64_t now_ms);
  // Carries out a schedule (advances to now_ms first). Jobs and shares it does not know are ignored. A new
  // share on a node missing from `node_memory_mb` (when that map is given) cannot be launched: its process is
  // published "ended" at once (DUCC's LaunchFailed) and counted in launch_failures.
  void on_state(const messages::rm_state& state, std::int64_t now_ms);
  // A node died / came back (the agent model's transitions).
  void node_down(const std::string& node, std::int64_t now_ms);
  void node_up(const std::string& node, std::int64_t now_ms);
  // The full work map to publish now (advances first). Publishing is what lets completed work and ended
  // processes go: each is published in its final state exactly once and is absent from the next map.
  messages::workmap workmap(std::int64_t now_ms);

  std::vector<job_view> jobs() const;  // in arrival order (scenario order)
  std::optional<job_view> job(const std::string& id) const;
  // Every job has arrived and is gone from the map (services without an end time never finish).
  bool finished() const;
  std::int64_t now() const { return now_; }

 private:
  struct process_run {
    std::string id;
    std::string node;
    std::int64_t created_ms = 0;
    std::int64_t running_at_ms = 0;  // created + start_ms + init_ms
    std::int64_t init_ms = 0;
    bool reached_running = false;
    std::optional<std::int64_t> stopped_ms;  // stopped working (preempt, evict, node died): phase frozen
    bool lost = false;                       // its node died under it
    std::optional<std::int64_t> exit_at_ms;  // ends then (after preempt / evict)
    bool draining = false;                   // takes no new items; ends when its batch is done
    bool ended = false;                      // publish "ended" once, then drop
    bool ended_published = false;
    std::int64_t batch_start_ms = 0;
    std::uint64_t in_flight = 0;  // items its threads are working on
  };
  struct job_run {
    job_spec spec;
    bool arrived = false;
    bool initialized = false;
    bool completed = false;
    bool completed_published = false;
    bool gone = false;
    bool refused = false;
    std::string refused_reason;  // the RM's reason (rm.state), bounded
    std::uint64_t items_done = 0;
    std::uint64_t undispatched = 0;  // items not done and not in flight
    std::optional<std::int64_t> first_process_ms;
    std::optional<std::int64_t> completed_ms;
    std::uint64_t preempted = 0;
    std::uint64_t evicted = 0;
    std::uint64_t launch_failures = 0;
    std::uint64_t drained = 0;
    std::uint64_t lost_items = 0;
    std::int64_t lost_batch_ms = 0;
    std::int64_t lost_init_ms = 0;
    std::vector<process_run> procs;
    std::set<std::string> used_share_ids;  // never start a share twice
  };

  void progress(job_run& j, std::int64_t now);
  void take_batch(job_run& j, process_run& p, std::int64_t t);
  void stop_process(job_run& j, process_run& p, std::int64_t t);
  void on_reclaim_deadline(job_run& j, process_run& p, bool has_deadline);
  void end_drained(job_run& j, process_run& p, std::int64_t t);
  void complete(job_run& j, std::int64_t t);
  messages::process_state phase(const process_run& p, std::int64_t now) const;
  messages::work_state state_of(const job_run& j) const;
  job_view view(const job_run& j) const;

  orchestrator_spec timing_;
  std::int64_t epoch_ms_;
  std::map<std::string, std::uint64_t> node_memory_mb_;
  bool drain_on_reclaim_ = false;
  std::vector<job_run> jobs_;  // scenario order
  std::map<std::string, std::size_t> index_;
  std::int64_t now_ = 0;
};

}  // namespace rmbus::sim
