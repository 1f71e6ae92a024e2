#pragma once
// defragment: when What Of could not place what How Much counted because free space is split into
// holes too small, take a few processes from rich jobs so that poor ones get at least some
// (DUCC detectFragmentation / doFinalEvictions, shared/ducc-rm.md section 1.10).
//
//  * Potentially needy: a job below its count, and for fair share also below both its pure fair share
//    (compared in PROCESSES: DUCC compared quanta with processes, 6.1 #5) and the fragmentation
//    threshold; needy for min(needed, threshold) processes. Non-preemptable jobs: whenever below count.
//    Under the sparing preemption policy fair-share jobs are never needy: its claims already make room for
//    each process on one machine (preemption_policy.hpp, R1).
//  * Holes: per pool (and its ancestors) the space that is or will be free (free + shares being
//    removed). Every job's usable holes are deducted, also when the pool covers its whole need (DUCC
//    let several jobs count the same hole, 6.1 #4). What is left is the actual need.
//  * Take from the rich: donors are fair-share jobs of equal or worse priority, in a pool above or below
//    the needy job's, not needy, with at least `threshold` processes (re-checked at every take, 6.1 #15)
//    and an initialized process. Machines: schedulable ones only (DUCC also looked at dead ones) in the
//    needy job's subtree, large enough, that can be cleared; the wealthiest user's machine first, then
//    larger memory, then name. Exact-size shares first, then by owner wealth and investment. An
//    unpublished share of the right order is handed over; anything else is preempted.
//  * The needy job stays on the needy list (served first by What Of) and the cleared machine is
//    earmarked for it, so nobody else re-fills the hole before the orchestrator confirms the exit.
//  * A process running out a reclaim grace (core/preemption.hpp) counts as a hole, as one being removed
//    does. Defragmentation's own preemptions never wait for a grace.

#include "core/cluster_model.hpp"

namespace rmbus::core {

void defragment(cluster_model& m);

}  // namespace rmbus::core
