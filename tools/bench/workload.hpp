#pragma once
// A seeded synthetic workload and a simple orchestrator model, shared by the benchmark (rmbus-bench) and the
// scheduler's property tests. Not part of rmbus_core: it is test and measurement scaffolding.
//
// The workload is the shape of issue 3 (and of the figures measured on DUCC's own scheduler code,
// shared/ducc-rm.md section 6.3): one top-level pool of nodes 50% 64 GB, 30% 128 GB, 20% 256 GB; users
// picked uniformly; 96% fair-share jobs over five classes (normal 70%, high 10%, low 10%, urgent 5%,
// background 5%), 3% FIXED_SHARE services, 1% reservations; process memory 4 to 60 GB; the shipped class
// file's weights and DUCC's shipped defaults (initialization cap 1, doubling, prediction); 60% of the work
// present at round 0, the rest arriving over rounds 1-15. Every figure is a parameter of workload_spec.
//
// The orchestrator model reacts to each schedule_plan as a real orchestrator would, one epoch later: a new
// share becomes a process that initializes for the job's initialization time and then runs; a preempted or
// evicted share's process exits; running processes complete work items at threads x epoch / item time per
// round; a job whose items are all done leaves the map; refused work is withdrawn. Services and
// reservations stay until the end. Deterministic: the same spec and plans give the same maps.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/nodepool_scheduler.hpp"
#include "core/policy.hpp"
#include "core/schedule_plan.hpp"
#include "core/work.hpp"

namespace rmbus::bench {

struct workload_spec {
  int nodes = 1000;
  int jobs = 2000;  // all work: fair-share jobs, services and reservations
  int users = 100;
  std::uint64_t quantum_mb = 15 * 1024;
  std::uint64_t seed = 1;
  double initial_fraction = 0.6;  // present at round 0
  int last_arrival_round = 15;    // the rest arrives uniformly over rounds 1..last_arrival_round
  std::vector<std::pair<int, int>> node_mix = {{64, 50}, {128, 30}, {256, 20}};  // (GB, weight)
  int min_process_gb = 4;
  int max_process_gb = 60;
  int fixed_percent = 3;    // FIXED_SHARE services
  int reserve_percent = 1;  // reservations (whole machines)
  std::vector<std::pair<std::string, int>> class_mix = {
      {"normal", 70}, {"high", 10}, {"low", 10}, {"urgent", 5}, {"background", 5}};
  // Fair-share job shape.
  int threads = 4;
  std::int64_t min_items = 8, max_items = 4000;  // log-uniform
  std::int64_t min_item_ms = 2000, max_item_ms = 60000;
  std::int64_t min_init_ms = 5000, max_init_ms = 60000;
  int max_processes_percent = 20;  // jobs with a max-processes limit (1..50); the others have none
};

struct arrival {
  int round = 0;
  core::work_item item;
  std::int64_t init_ms = 0;  // how long each of its processes takes to initialize (orchestrator side)
};

struct workload {
  core::scheduler_config config;
  std::vector<core::machine_report> machines;  // sorted by name
  std::vector<arrival> arrivals;               // sorted by round, then id
};

// DUCC's shipped class file (one pool "default"; background 1, low 50, normal 100 (default), high 200,
// urgent 400 at priority 10; FIXED "fixed" priority 5; RESERVE "reserve" priority 1) and shipped defaults.
core::scheduler_config shipped_config(std::uint64_t quantum_mb);

workload generate_workload(const workload_spec& spec);

class orchestrator_model {
 public:
  explicit orchestrator_model(std::vector<arrival> arrivals, std::int64_t epoch_ms = 10000);

  // The map the orchestrator publishes at the start of `round` (adds that round's arrivals).
  const core::work_map& begin_round(int round);
  // The orchestrator's reaction to the RM's plan, visible in the next round's map.
  void observe(const core::schedule_plan& plan);

  const core::work_map& current() const { return map_; }
  std::int64_t now_ms() const { return now_ms_; }
  int completed_jobs() const { return completed_; }
  int withdrawn_jobs() const { return withdrawn_; }

 private:
  struct job_state {
    std::int64_t init_ms = 0;
    double progress = 0;  // work items done, fractional
  };
  std::vector<arrival> arrivals_;
  std::size_t next_ = 0;
  std::int64_t epoch_ms_;
  std::int64_t now_ms_ = 0;
  core::work_map map_;
  std::map<core::job_id, job_state> jobs_;
  std::map<core::share_id, std::int64_t> started_ms_;  // when each process was started
  int completed_ = 0;
  int withdrawn_ = 0;
};

}  // namespace rmbus::bench
