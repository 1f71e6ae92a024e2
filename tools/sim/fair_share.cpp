#include "tools/sim/fair_share.hpp"

#include <algorithm>

namespace rmbus::sim {

std::vector<double> water_fill(double capacity, const std::vector<water_fill_claim>& claims) {
  std::vector<double> out(claims.size(), 0.0);
  std::vector<bool> open(claims.size(), false);
  std::size_t open_count = 0;
  for (std::size_t i = 0; i < claims.size(); ++i) {
    if (claims[i].demand > 0 && claims[i].weight > 0) {
      open[i] = true;
      ++open_count;
    }
  }
  double left = std::max(0.0, capacity);
  // Each pass either satisfies at least one claim (and removes it) or shares out everything: at most
  // claims.size() + 1 passes.
  while (open_count > 0 && left > 0) {
    double weights = 0;
    for (std::size_t i = 0; i < claims.size(); ++i)
      if (open[i]) weights += claims[i].weight;
    const double per_weight = left / weights;
    bool satisfied_any = false;
    for (std::size_t i = 0; i < claims.size(); ++i) {
      if (!open[i]) continue;
      const double want = claims[i].demand - out[i];
      if (want <= per_weight * claims[i].weight) {
        out[i] += want;
        left -= want;
        open[i] = false;
        --open_count;
        satisfied_any = true;
      }
    }
    if (satisfied_any) continue;
    for (std::size_t i = 0; i < claims.size(); ++i)
      if (open[i]) out[i] += per_weight * claims[i].weight;
    left = 0;
  }
  return out;
}

std::map<std::string, double> fair_shares(double available, const std::vector<class_demand>& classes) {
  std::map<std::string, double> out;
  std::map<int, std::vector<const class_demand*>> by_priority;
  for (const auto& c : classes) by_priority[c.priority].push_back(&c);
  double left = std::max(0.0, available);
  for (const auto& [priority, group] : by_priority) {
    std::vector<water_fill_claim> class_claims;
    for (const auto* c : group) {
      double d = 0;
      for (const auto& [user, q] : c->user_demand_quanta) d += std::max(0.0, q);
      class_claims.push_back({static_cast<double>(std::max(1, c->weight)), d});
    }
    const auto class_amounts = water_fill(left, class_claims);
    for (std::size_t i = 0; i < group.size(); ++i) {
      std::vector<water_fill_claim> user_claims;
      std::vector<std::string> users;
      for (const auto& [user, q] : group[i]->user_demand_quanta) {
        if (q <= 0) continue;
        users.push_back(user);
        user_claims.push_back({1.0, q});
      }
      const auto user_amounts = water_fill(class_amounts[i], user_claims);
      for (std::size_t u = 0; u < users.size(); ++u) out[users[u]] += user_amounts[u];
      left -= class_amounts[i];
    }
    if (left <= 0) break;
  }
  return out;
}

}  // namespace rmbus::sim
