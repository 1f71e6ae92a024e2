#pragma once
// Fairness against churn, measured round by round on the plans the benchmark's scheduler publishes
// (issue 20). The yardstick is independent of the scheduler: tools/sim/fair_share.hpp's weighted max-min
// fair share over the users' demand, as rmbus-sim's report uses it (docs/sim.md, "Fair share"):
//   - held: a user's quanta in fair-share classes (shares not being preempted or evicted);
//   - demand: per job, what its remaining work could use (the plan's `demand`) x order; a job the RM holds
//     back by design (the plan's `capped_by`) wants what it was counted (`given`) instead;
//   - capacity: the quanta of the schedulable machines, less what non-fair-share work holds.
// Fairness error of a round: sum over users of |held - fair| / capacity. Rounds are equal epochs, so the
// time average is the mean over rounds. Time to fair share: per user, from a round in which it holds less
// than 90% of its fair share to the first later round in which it holds at least that (as rmbus-sim).

#include <cstdint>
#include <map>
#include <string>

#include "core/nodepool_scheduler.hpp"
#include "core/policy.hpp"
#include "core/schedule_plan.hpp"

namespace rmbus::bench {

class fairness_tracker {
 public:
  fairness_tracker(const core::scheduler_config& cfg, std::int64_t epoch_ms);

  // One round: its plan, and the schedulable quanta of the pool.
  void observe(const core::schedule_plan& plan, std::int64_t capacity_quanta);

  double mean_error() const { return rounds_ > 0 ? error_sum_ / rounds_ : 0; }
  double mean_time_to_fair_s() const { return episodes_ > 0 ? episode_ms_ / 1000.0 / episodes_ : 0; }
  int episodes() const { return episodes_; }
  int unreached() const { return static_cast<int>(below_since_.size()); }

 private:
  std::map<std::string, std::pair<int, int>> classes_;  // name -> (weight, priority), fair-share classes only
  std::int64_t epoch_ms_;
  int rounds_ = 0;
  double error_sum_ = 0;
  std::map<std::string, int> below_since_;  // user -> round it fell below 90% of its fair share
  int episodes_ = 0;
  std::int64_t episode_ms_ = 0;
};

// The schedulable quanta of the scheduler's pool.
std::int64_t capacity_quanta(const core::nodepool_scheduler& sched);

}  // namespace rmbus::bench
