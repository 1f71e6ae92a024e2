#pragma once
// The RM's scheduling head as plain classes, the way its actors chain them, without CAF or ZeroMQ:
//   heartbeats -> intake (core::node_liveness; a watchdog tick per interval)
//              -> eviction (a node down is unreachable at once; its work is evicted now or paced by the
//                 mass-loss brake, actors/mass_loss_guard.hpp)
//   work maps  -> the newest by sequence (an older or repeated map is dropped)
//   a round    -> core::nodepool_scheduler (apply_work, schedule) -> publication's guard
//                 (actors/overbooking.hpp: a plan that would start a process above a node's order is not
//                 published; the last good one is)
// and a scheduler replaced mid-run starts from the last published schedule (adopt_published), with every
// machine as the intake and the admin marks know it, as actors/pool_scheduler.cpp does. A takeover is a new
// HA active of the next epoch: its scheduler starts from the last schedule its standby heard, which may be
// older than the last one published, and its rounds only report (round_input::settling) until a work map
// echoes its epoch (actors/echo_wait.hpp).
//
// Not thread-safe; one owner (the run).

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/mass_loss_guard.hpp"
#include "core/node_liveness.hpp"
#include "core/nodepool_scheduler.hpp"
#include "tools/simcheck/sim_orchestrator.hpp"

namespace rmbus::simcheck {

struct head_settings {
  std::int64_t interval_ms = 1000;
  int node_stability = 4;
  int mass_loss_percent = 30;
  int mass_loss_evict_percent = 10;
};

class sim_head {
 public:
  sim_head(core::scheduler_config cfg, head_settings s);

  // What happened, for the run's history (empty when nothing worth noting).
  std::vector<std::string> heartbeat(const std::string& node, std::uint64_t memory_mb, std::int64_t now_ms);
  std::vector<std::string> tick(std::int64_t now_ms);
  // Returns false for a map older than (or the same as) the newest taken.
  bool take_map(published_map m);
  void vary(const std::string& node, bool off);
  void replace_scheduler();
  // The schedule published `seed_age` publications before the last one seeds the new active (the oldest kept,
  // 3 before, when fewer were published).
  void take_over(std::size_t seed_age);
  std::uint64_t epoch() const { return epoch_; }
  bool awaiting_echo() const { return awaiting_echo_; }

  // One round: the newest map applied, the core's plan made. The plan is the core's, before the guard.
  const core::schedule_plan& round(std::int64_t now_ms);
  // Publication: the guard's verdict on the last round's plan; the plan that goes out is this one.
  const core::schedule_plan& published() const { return published_; }
  std::uint64_t cycle() const { return cycle_; }
  std::uint64_t published_cycle() const { return published_cycle_; }
  bool guard_refused_last() const { return !overbooked_.empty(); }
  // The nodes the guard found overbooked in the last round's plan (empty: it was published).
  const std::vector<std::string>& overbooked() const { return overbooked_; }
  std::uint64_t guard_refusals() const { return guard_refusals_; }

  bool down(const std::string& node) const;
  bool varied_off(const std::string& node) const { return varied_off_.count(node) != 0; }
  const std::optional<published_map>& applied_map() const { return applied_; }
  const core::nodepool_scheduler& scheduler() const { return *sched_; }

 private:
  void introduce(const std::string& node);  // a machine as the intake knows it, to the scheduler
  void act(const actors::mass_loss_guard::actions& a, std::vector<std::string>& notes);

  core::scheduler_config cfg_;
  head_settings s_;
  core::node_liveness liveness_;
  actors::mass_loss_guard brake_;
  std::unique_ptr<core::nodepool_scheduler> sched_;
  int generation_ = 1;
  std::map<std::string, std::uint64_t> memory_;  // last heard size of each node
  std::set<std::string> evicted_;                // down and evicted (not only unreachable)
  std::set<std::string> varied_off_;
  std::optional<published_map> newest_;          // the newest map received
  std::optional<published_map> applied_;         // the map the last round applied
  core::schedule_plan published_;
  std::deque<core::schedule_plan> recent_published_;  // the last 4 published, the newest last
  std::uint64_t epoch_ = 1;
  bool awaiting_echo_ = false;
  std::uint64_t cycle_ = 0;
  std::uint64_t published_cycle_ = 0;  // the cycle of the plan published last (the guard may hold a newer back)
  std::vector<std::string> overbooked_;
  std::uint64_t guard_refusals_ = 0;
};

}  // namespace rmbus::simcheck
