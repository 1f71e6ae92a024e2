#pragma once
// The simulated orchestrator: the only truth about which processes run where.
//
// It acts on the newest schedule it receives (an older or repeated one is ignored, as a real orchestrator
// would by its cycle): a `new` share is started after a delay, a `preempt` or `evict` share is stopped after a
// delay, and a start the schedule withdrew before it happened is cancelled, unless the nemesis says the start
// goes ahead anyway (a late start: the process then runs on a share the RM no longer grants, and may put its
// node above its order). It publishes its work map once per interval, numbered, with the cycle of the last
// schedule it acted on (rm_cycle), so that the RM can tell an eviction acted on from one not read yet.
// Processes keep running on a node whose heartbeats are lost: silence is not death. It fences HA epochs as
// docs/protocol.md 4.8 asks: a schedule of an epoch above the one it accepted moves it to that epoch, one
// below is never acted on, and each map echoes the accepted epoch (rm_epoch).
//
// Time is an input; every delay is drawn by the caller from the run's seed. Not thread-safe; one owner.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/schedule_plan.hpp"
#include "core/work.hpp"

namespace rmbus::simcheck {

struct sim_job {
  core::work_item item;  // the job as listed in the map, without its processes
  int quanta = 1;        // per process
  bool active = false;   // submitted and not completed
};

struct sim_process {
  std::string job;
  std::string node;
  int quanta = 1;
  std::int64_t started_ms = 0;
  bool rogue = false;              // started after the RM withdrew its share
  std::optional<std::int64_t> stop_at_ms;
  int seen_round = -1;             // the first round whose applied map listed it; -1: not yet
};

struct pending_start {
  std::string job;
  std::string node;
  int quanta = 1;
  std::int64_t due_ms = 0;
  bool withdrawn = false;  // the schedule no longer grants it; a rogue start still happens when due
};

struct published_map {
  std::uint64_t seq = 0;
  std::optional<std::uint64_t> acted_cycle;
  std::optional<std::uint64_t> rm_epoch;  // the highest epoch accepted (none before the first schedule)
  core::work_map work;
};

class sim_orchestrator {
 public:
  // Delay draws are asked of the caller through these, so that the run's one random source decides them.
  struct delays {
    std::int64_t start_ms = 0;
    std::int64_t stop_ms = 0;
  };

  void add_job(sim_job job) { jobs_[job.item.id.str()] = std::move(job); }
  void submit(const std::string& job) { jobs_.at(job).active = true; }
  // The job ends: its processes end with it and it leaves the map.
  void complete(const std::string& job);

  // A schedule of HA epoch `epoch` arrives. Returns false when it is older than (or the same as) one already
  // acted on, or of an epoch below the accepted one (fenced). `start_late` makes the next withdrawn start go
  // ahead anyway (one per call at most); returns through `rogue_note` the share it concerns, if any.
  bool receive(const core::schedule_plan& plan, std::uint64_t cycle, std::uint64_t epoch, std::int64_t now_ms,
               const std::function<delays()>& draw, bool start_late, std::string* rogue_note);
  // Carries out the starts and stops due at now_ms.
  void advance(std::int64_t now_ms);
  published_map publish(std::int64_t now_ms);

  const std::map<std::string, sim_process>& processes() const { return processes_; }
  std::map<std::string, sim_process>& processes() { return processes_; }
  const std::map<std::string, pending_start>& pending() const { return pending_; }
  const std::map<std::string, sim_job>& jobs() const { return jobs_; }
  std::optional<std::uint64_t> acted_cycle() const { return acted_; }

 private:
  std::map<std::string, sim_job> jobs_;
  std::map<std::string, sim_process> processes_;  // by share id
  std::map<std::string, pending_start> pending_;  // by share id
  std::optional<std::uint64_t> acted_;
  std::uint64_t accepted_epoch_ = 0;
  std::uint64_t seq_ = 0;
};

}  // namespace rmbus::simcheck
