#pragma once
// The report's yardstick: what each user's share of a top-level nodepool WOULD be under weighted max-min
// fairness, given who wants how much there right now (the recorder runs it once per pool, against that
// pool's quanta). It is an approximation of rmbus's How Much, not a copy of it:
//
//   1. Work in non-fair-share classes (FIXED_SHARE, RESERVE) is not subject to fair share: what it holds is
//      taken off the top of the pool's quanta.
//   2. Fair-share classes are served by priority (lower number first); within one priority, the quanta are
//      water-filled among the classes with demand in proportion to their weights (a class never gets more
//      than it asks for; what it leaves goes to the others); what remains passes to the next priority.
//   3. Within a class, its quanta are water-filled among its users with equal weights.
//   4. A user's fair share is the sum over the classes it has work in.
//
// Quanta are continuous here (DUCC hands out whole processes of a job's order, so real shares can differ by
// up to a process); demand is what the remaining work could use, ignoring the RM's ramp-up caps
// (initialization cap, doubling, prediction), so a job that is still ramping up holds less than its fair
// share on purpose.
//
// Pure: no I/O; deterministic (maps ordered by name).

#include <map>
#include <string>
#include <vector>

namespace rmbus::sim {

struct water_fill_claim {
  double weight = 1;  // > 0
  double demand = 0;  // >= 0
};

// Splits `capacity` among the claims in proportion to their weights, never giving a claim more than its
// demand; what a satisfied claim leaves is shared among the others. Returns one amount per claim (same
// order); the amounts sum to min(capacity, total demand).
std::vector<double> water_fill(double capacity, const std::vector<water_fill_claim>& claims);

struct class_demand {
  std::string class_name;
  int weight = 100;
  int priority = 10;
  std::map<std::string, double> user_demand_quanta;  // user -> quanta its work in this class could use
};

// Steps 2-4 above over `available` quanta (the cluster's quanta less what non-fair-share work holds).
// Returns user -> fair share in quanta (users with no demand are absent).
std::map<std::string, double> fair_shares(double available, const std::vector<class_demand>& classes);

}  // namespace rmbus::sim
