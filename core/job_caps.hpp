#pragma once
// refresh_job_cap: a live job's cap (DUCC initJobCap, through compute_job_cap in core/job_cap.hpp) from its
// work item, its class's rules and the shares it holds. How Much calls it in its first sweep over the
// jobs, as DUCC computes the caps at the start of How Much, for every live job whose inputs changed since
// (job_rec::cap_current): the result is a pure function of them.
//
// Services, managed reservations (APs) and reservations are one allocation per request: their cap is 1
// (0 once refused or ended). "current" for the cap is the number of processes the orchestrator has
// CONFIRMED (running, not being removed): expansion by doubling then waits for the previous step to be
// granted and started, and an unchanged input gives an unchanged cap (no run-away doubling on
// allocations the orchestrator has not started yet).

#include "core/cluster_model.hpp"

namespace rmbus::core {

void refresh_job_cap(const cluster_model& m, job_rec& j);

// The per-job process limit: the smaller non-zero of the work item's and the class's (0 = none).
int effective_max_processes(const cluster_model& m, const job_rec& j);

}  // namespace rmbus::core
