#pragma once
// plan_preemptions: jobs holding more than their How Much count shed the surplus (DUCC doEvictions /
// RmJob.shrinkBy), and machines earmarked for a reservation are cleared of fair-share work.
//
// Which processes go first is the investment order (least investment first):
//   0. squatters (placed in a nested pool below their class's pool) before residents, as the user guide
//      promises (DUCC's live code lost this rule);
//   1. not initialized before initialized;
//   2. both not initialized: smaller initialization time first;
//   3. both initialized: smaller investment (ms on the work items in flight) first;
//   4. deeper nodepool first (DUCC read one share's depth twice, so this key never decided);
//   5. larger machine memory first;
//   6. youngest share first (higher creation sequence, then higher id).
// Only shares not already being removed are candidates (DUCC could pick one already preempted and shed
// fewer than needed), fixed (non-preemptable) shares never are, and a job never goes below its count.
// A preemption, once marked, is never taken back.
//
// Victims only where a short job can use the space (issue 52; docs/ducc-differences.md 48): a class may use
// its own pool and the pools below it, never a sibling's. While some fair-share job is short of its count
// after What Of, a surplus is shed first from machines in pools some short job's class may use (in the order
// above), and from other machines only as far as the job must come down to its own cap. With no job short,
// or every candidate usable (always so without nested pools), this is DUCC's choice unchanged. The sparing
// policy looks for room only where its claimant may go already (preemption_policy.hpp, R1), and chooses the
// machine a reservation clears by its cost (reservation_choice.hpp).
//
// Reclaim grace (rmbus extension, EGO's reclaim grace period): when the class of a job above its count sets
// reclaim_grace_ms > 0, the processes chosen from it keep status running and get a deadline (now + grace)
// instead of being preempted. Each later round chooses again, those already carrying a deadline first (the
// orchestrator may be draining them), then the investment order: a chosen process whose deadline has passed
// is preempted; a process no longer chosen (the claimant finished, shrank or left, so the surplus is smaller
// or gone) has its deadline dropped. Clearing machines for a reservation or for non-preemptable work never
// waits, and neither do evictions. `now_ms` is the round's time (an input: core reads no clock).

#include "core/cluster_model.hpp"

namespace rmbus::core {

// The investment order above: true when share `a` should be preempted before share `b`.
bool investment_less(const cluster_model& m, const share_rec& a, const share_rec& b);

void plan_preemptions(cluster_model& m, std::int64_t now_ms);

}  // namespace rmbus::core
