#include "tools/bench/fairness.hpp"

#include <cmath>
#include <set>
#include <vector>

#include "tools/sim/fair_share.hpp"

namespace rmbus::bench {

fairness_tracker::fairness_tracker(const core::scheduler_config& cfg, std::int64_t epoch_ms)
    : epoch_ms_(epoch_ms) {
  for (const auto& c : cfg.classes)
    if (c.policy == core::policy::fair_share) classes_[c.name] = {c.weight, c.priority};
}

void fairness_tracker::observe(const core::schedule_plan& plan, std::int64_t capacity) {
  std::map<std::string, sim::class_demand> demand;  // by class
  std::map<std::string, double> held;
  double fixed_q = 0;
  for (const auto& j : plan.jobs) {
    double q = 0;
    for (const auto& s : j.shares)
      if (s.status != core::share_status::preempt && s.status != core::share_status::evict) q += s.quanta;
    const auto it = classes_.find(j.class_name);
    if (it == classes_.end()) {
      fixed_q += q;
      continue;
    }
    const std::string& user = j.user.str();
    held[user] += q;
    const std::int64_t wants = j.capped_by.empty() ? j.demand : j.given;
    auto& cd = demand[j.class_name];
    cd.class_name = j.class_name;
    cd.weight = it->second.first;
    cd.priority = it->second.second;
    cd.user_demand_quanta[user] += static_cast<double>(std::max<std::int64_t>(0, wants) * j.order);
  }
  std::vector<sim::class_demand> classes;
  for (auto& [name, cd] : demand) classes.push_back(std::move(cd));
  const double available = std::max(0.0, static_cast<double>(capacity) - fixed_q);
  const auto fair = sim::fair_shares(available, classes);
  std::set<std::string> users;
  for (const auto& [u, q] : held) users.insert(u);
  for (const auto& [u, q] : fair) users.insert(u);
  double error = 0;
  for (const auto& u : users) {
    const double h = held.contains(u) ? held.at(u) : 0.0;
    const double f = fair.contains(u) ? fair.at(u) : 0.0;
    error += std::abs(h - f);
    const bool below = f > 0 && h < 0.9 * f;
    auto b = below_since_.find(u);
    if (below && b == below_since_.end()) below_since_[u] = rounds_;
    if (!below && b != below_since_.end()) {
      if (f > 0) {  // reached it (a user whose demand ended is not counted as reaching it)
        ++episodes_;
        episode_ms_ += static_cast<std::int64_t>(rounds_ - b->second) * epoch_ms_;
      }
      below_since_.erase(b);
    }
  }
  error_sum_ += capacity > 0 ? error / static_cast<double>(capacity) : 0.0;
  ++rounds_;
}

std::int64_t capacity_quanta(const core::nodepool_scheduler& sched) {
  std::int64_t q = 0;
  for (const auto& mc : sched.model().machines)
    if (mc.schedulable()) q += mc.order;
  return q;
}

}  // namespace rmbus::bench
