#pragma once
// The demand no machine of the pool can meet, for admin qload: work waiting because no machine in reach is
// as large as one of its processes (reason no_machine_of_order). How Much counts only what some machine could
// hold, so its per-class load leaves such work out; listed apart, by class and order, an operator sees it
// beside the work that is counted instead of not at all.
//
// Each entry sums the jobs of one class, order and reason: how many, the processes their caps ask for (at
// least one per job: a job that waits for a machine asks for one all the same), and the first job's reason
// text (by job id) as an example with the numbers.
//
// Thread-safety: a pure function over the model.

#include <vector>

#include "core/cluster_model.hpp"
#include "core/schedule_plan.hpp"

namespace rmbus::core {

// By class name, then order, then reason; from the last round's reasons.
std::vector<unmet_load> unmet_demand(const cluster_model& m);

}  // namespace rmbus::core
