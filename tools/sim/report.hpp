#pragma once
// The end-of-run report: the figures a run is judged by, computed from the recorder's samples and the
// orchestrator model's jobs, rendered as plain text (for people, with a closing "figures" block of
// `key = value` lines whose keys are stable, for scripts) and the time series as CSV.
//
// Figures (docs/sim.md explains each):
//   utilization   used / total quanta of the nodes that are up, time-weighted over the run, and per
//                 twelfth of the run in a small table; per top-level nodepool too;
//   per nodepool  (several pools) each user's held quanta against its fair share in that pool;
//   per user      mean quanta held against mean fair share (both time-weighted over the samples where
//                 the user had demand), mean processes held, processes held at the user's last CONTENDED
//                 sample (it and another user had fair-share demand) and the fair share then, most held;
//   preemptions / evictions: distinct shares seen preempt / evict in rm.state, and rm.events of those kinds;
//   drained early: processes the orchestrator ended after their items in flight, before their reclaim
//                 deadline (rmbus-sim --drain-on-reclaim; 0 without it);
//   time to first process: per job, from its submission to its first process (share "new" carried out);
//   time to fair share: per user, from a sample in which it holds less than 90% of its fair share (while it
//                 has fair-share demand) to its first later sample holding at least that; an episode whose
//                 demand ends first, or that the run's end cuts off, counts as unreached;
//   makespan      first submission to last completion, when every job completed (else absent);
//   double booking: samples in which a share was listed twice or a node held more quanta than it has.
//
// Time-weighting: a sample stands for the time until the next one (the last stands for nothing unless it is
// the only one). Pure: no I/O.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tools/sim/orchestrator_model.hpp"
#include "tools/sim/recorder.hpp"

namespace rmbus::sim {

struct run_info {
  std::string scenario;
  double speed = 1;
  double wall_s = 0;
  std::int64_t simulated_ms = 0;
  std::string end_reason;  // "all work done", "duration reached", "time limit (--seconds)"
};

struct user_figures {
  std::string user;
  std::size_t jobs = 0;
  std::size_t jobs_completed = 0;
  double mean_held_quanta = 0;  // fair-share work, while the user had demand
  double mean_fair_quanta = 0;
  double mean_rm_fair_quanta = 0;     // the RM's own fair share (rm.state fair_share), same samples
  double mean_held_processes = 0;     // all its work, while it had unfinished work of any class
  std::uint64_t final_processes = 0;  // at the user's last contended sample (see above)
  double final_fair_quanta = 0;
  std::uint64_t final_held_quanta = 0;
  std::uint64_t max_processes = 0;
  std::optional<double> first_process_mean_s;
};

struct timeline_row {
  double from_s = 0, to_s = 0;
  double utilization = 0;              // time-weighted mean in the row, 0..1
  std::size_t nodes_up = 0;            // fewest in the row
  std::size_t pending = 0;             // most in the row
  std::vector<double> user_processes;  // mean processes held per user
};

struct report_figures {
  run_info run;
  std::size_t samples = 0;
  std::uint64_t states_received = 0;
  std::uint64_t quantum_mb = 0;
  double utilization_mean = 0;
  std::map<std::string, double> utilization_by_pool;  // the same, per top-level nodepool
  // Per top-level nodepool: each user's fair-share quanta held against its fair share in that pool (computed
  // against the pool's own quanta), time-weighted over the samples where it had demand there.
  struct pool_user {
    std::string user;
    double mean_held_quanta = 0, mean_fair_quanta = 0;
  };
  struct pool_figures {
    double mean_total_quanta = 0;  // quanta of the pool's nodes up, time-weighted
    std::uint64_t quantum_mb = 0;  // the pool's quantum, from rm.nodes (last seen; 0: never said)
    std::vector<pool_user> users;  // users with demand in the pool, in recorder order
  };
  std::map<std::string, pool_figures> pools;
  std::size_t most_unplaced_jobs = 0;  // most jobs in a sample whose pool was not known yet (recorder.hpp)
  std::vector<timeline_row> timeline;
  std::vector<user_figures> users;
  std::uint64_t preempted_shares = 0, evicted_shares = 0, preempt_events = 0, evict_events = 0;
  std::uint64_t drained_early = 0;  // processes drained before their reclaim deadline (orchestrator_model)
  // Fairness against churn (issue 20): time-weighted mean over samples of sum over users of
  // |fair-share quanta held - fair share| / quanta of the nodes up; and the work preemption threw away.
  double fairness_error_mean = 0;
  std::uint64_t work_lost_items = 0;
  double work_lost_batch_s = 0;  // process time of the batches lost (scenario s)
  double work_lost_init_s = 0;   // initialization time to be spent again (scenario s)
  std::size_t jobs_total = 0, jobs_completed = 0, jobs_refused = 0;  // kind "job" only
  struct refused_job {
    std::string id, user, reason;
  };
  std::vector<refused_job> refused;  // every refused work item (any kind), with the RM's reason
  std::size_t other_work = 0;                                        // services, APs, reservations
  std::optional<double> makespan_s;
  std::size_t first_process_count = 0;
  double first_process_mean_s = 0, first_process_p50_s = 0, first_process_p90_s = 0, first_process_max_s = 0;
  std::size_t never_started = 0;      // arrived jobs that never got a process
  std::size_t fair_share_reached = 0, fair_share_unreached = 0;  // episodes below 90% of the fair share
  double fair_share_mean_s = 0, fair_share_p90_s = 0, fair_share_max_s = 0;  // of the reached ones
  std::uint64_t launch_failures = 0;  // shares on nodes that are not the scenario's (see orchestrator_model)
  std::size_t double_booked_samples = 0;
};

report_figures compute_report(const recorder& rec, const std::vector<job_view>& jobs, const run_info& run);

// The text report; ends with "Figures" and one `key = value` line per figure (docs/sim.md lists the keys).
std::string render_report(const report_figures& r);

// One line per sample: t_s, nodes_up, total_quanta, used_quanta, utilization, fixed_quanta, pending_jobs,
// preemptions, evictions, double_booked, then per user <u>_quanta, <u>_processes, <u>_fair_quanta,
// <u>_rm_fair_quanta.
std::string render_csv(const recorder& rec);

// The progress line for a sample, for people: scenario time, nodes up, quanta used, processes per user
// (the first eight), pending jobs, jobs done (completed, never refused) of the jobs, the refused ones when
// some, preemptions / evictions so far.
std::string progress_line(const sample& s, const std::vector<std::string>& users, std::size_t total_nodes,
                          std::size_t jobs_done, std::size_t jobs_total, std::size_t jobs_refused = 0);

// Percentile of a sorted vector by nearest rank (p in [0, 100]); 0 for an empty vector.
double nearest_rank(const std::vector<double>& sorted, double p);

}  // namespace rmbus::sim
