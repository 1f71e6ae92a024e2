#pragma once
// A simulation scenario: the cluster (nodes, heartbeat timing), the orchestrator's timing, the work that
// arrives and when, scripted node failures, and the class table the report uses for fair shares.
//
// Scenarios are TOML files (docs/sim.md describes every key, its unit and default). Reading is strict: an
// unknown key, a value of the wrong type or out of range, an unknown class or node, is an error naming the
// file, the line and what is wrong; all problems are collected and reported together. A scenario can also
// be generated from a seed (random_scenario), which yields the same struct.
//
// Units: keys ending in `_s` are seconds of SCENARIO time (integer or decimal), keys ending in `_ms` are
// milliseconds (integer). Scenario time is compressed by `rmbus-sim --speed`; the two bus-facing periods
// (`cluster.heartbeat_ms`, `orchestrator.publish_ms`) are WALL-clock periods, because the RM measures them in
// real time (a node is missing when its heartbeat is late on the RM's clock).
//
// Pure: parse_scenario takes the text; only load_scenario_file reads a file.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "messages/workmap.hpp"
#include "tools/sim/node_spec.hpp"

namespace rmbus::sim {

enum class class_policy { fair_share, fixed_share, reserve };
std::string_view to_string(class_policy p);

// What the report needs to know about a scheduling class to compute fair shares. The defaults mirror rmbus's
// embedded default configuration (a unit test keeps them in step).
struct class_spec {
  std::string name;
  class_policy policy = class_policy::fair_share;
  int weight = 100;
  int priority = 10;        // lower is better, as in DUCC
  bool is_default = false;  // the default class of its policy (work naming no class goes there)
  // The nodepool the RM's configuration gives the class (`nodepool` key): its work's fair share is computed
  // against that pool's quanta. Empty: learned from where the RM places the class's work (or the only pool).
  std::string nodepool = {};

  friend bool operator==(const class_spec&, const class_spec&) = default;
};

// The classes of rmbus's embedded default configuration.
std::vector<class_spec> embedded_default_classes();

struct cluster_spec {
  std::string nodes_description;    // as written, e.g. "4x32G"
  std::vector<node_def> nodes;      // expanded
  std::int64_t heartbeat_ms = 200;  // wall clock; each node's own schedule
  std::int64_t jitter_ms = 50;      // each interval is heartbeat_ms +- up to jitter_ms
  std::uint64_t quantum_mb = 1024;  // the report's fallback until rm.state reveals the RM's quantum

  friend bool operator==(const cluster_spec&, const cluster_spec&) = default;
};

struct orchestrator_spec {
  std::int64_t publish_ms = 250;        // wall clock: work map period
  std::int64_t start_ms = 500;          // a new process is "starting" this long
  std::int64_t init_ms = 5000;          // then "initializing" this long (default for every job)
  std::int64_t preempt_exit_ms = 1000;  // a preempted process ends this long after the RM said preempt
  std::int64_t evict_exit_ms = 0;       // an evicted process ends this long after the RM said evict

  friend bool operator==(const orchestrator_spec&, const orchestrator_spec&) = default;
};

// One piece of work, after `count` expansion (each copy is its own job_spec with its own id).
struct job_spec {
  std::string id;
  std::int64_t at_ms = 0;  // scenario time of submission
  std::string user;
  std::string class_name;  // empty: the default class for its kind
  messages::work_kind kind = messages::work_kind::job;
  std::uint64_t memory_mb = 0;         // per process
  std::uint64_t items = 0;             // work items (jobs); 0 for services, APs, reservations
  std::uint64_t threads = 1;           // per process
  std::int64_t item_ms = 1000;         // time one thread takes for one work item
  std::int64_t init_ms = 0;            // initialization time of each process
  std::uint64_t max_processes = 0;     // 0 = no limit
  std::optional<std::int64_t> end_ms;  // services, APs, reservations: withdrawn then (absent: never)

  friend bool operator==(const job_spec&, const job_spec&) = default;
};

// A node's scripted failure: it stops heartbeating at down_at_ms; with up_at_ms it comes back then; with
// flap_ms it alternates down/up every flap_ms from down_at_ms (until up_at_ms when given, else forever).
struct failure_spec {
  std::string node;
  std::int64_t down_at_ms = 0;
  std::optional<std::int64_t> up_at_ms;
  std::optional<std::int64_t> flap_ms;

  friend bool operator==(const failure_spec&, const failure_spec&) = default;
};

struct scenario {
  std::string name;
  std::string description;
  std::uint64_t seed = 1;                   // heartbeat jitter (and the generator, for random scenarios)
  std::optional<std::int64_t> duration_ms;  // stop then; absent: when all work is done
  cluster_spec cluster;
  orchestrator_spec orchestrator;
  std::vector<class_spec> classes;  // embedded default, overridden and extended by [class.NAME] tables
  std::vector<job_spec> jobs;       // sorted by at_ms, then id
  std::vector<failure_spec> failures;

  friend bool operator==(const scenario&, const scenario&) = default;
};

// Every problem found, each "FILE:LINE:COLUMN: what" (or "FILE: what" when it has no place).
class scenario_error : public std::runtime_error {
 public:
  explicit scenario_error(std::vector<std::string> problems);
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::vector<std::string> problems_;
};

// Bounds on untrusted scenario files.
inline constexpr std::size_t max_jobs_total = 100000;
inline constexpr std::int64_t max_scenario_ms = 30LL * 24 * 3600 * 1000;  // 30 days of scenario time

// Throws scenario_error on any problem. `source_name` is used in error messages; `default_name` is the
// scenario's name when the text gives none.
scenario parse_scenario(std::string_view text, std::string_view source_name,
                        std::string_view default_name = "scenario");
// Reads the file (bounded to 16 MiB) and parses it, named after the file (its stem) unless it names itself; a
// file that cannot be read is a scenario_error too.
scenario load_scenario_file(const std::string& path);

// The resolved class of a job (its own class, or the default class for its kind as rmbus picks it: jobs
// take the default FAIR_SHARE class; other kinds the default RESERVE class, else the default FIXED_SHARE
// class). nullptr when there is none.
const class_spec* class_of(const std::vector<class_spec>& classes, std::string_view class_name,
                           messages::work_kind kind);

}  // namespace rmbus::sim
