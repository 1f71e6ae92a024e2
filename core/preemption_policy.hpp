#pragma once
// Sparing preemption (rmbus extension: scheduling.preemption_policy = "sparing"; docs/ducc-differences.md).
//
// DUCC preempts, every round, every process a fair-share job holds above its count, whoever gains from it.
// Most of those preemptions buy little fairness: they move a user by a fraction of a process, even out two
// users who are both near their share, shift processes between one user's own jobs, or free space that
// another job then takes. Under `sparing`, plan_preemptions sheds only what this function decides:
//
//   R1 claimant-driven: preempt only for claimants still short after What Of placed what the free space
//      allows, and for each process claimed only on one machine where it then fits: the one needing the
//      fewest quanta preempted (none where space is already being freed), by name on equal cost.
//   R2 really starved: fair share is apportioned per class and then per user, so the unit is a user's work
//      in one class. It claims only when it is short of its count (summed over its jobs in the class, so a
//      user's jobs in a class are never preempted for one another) by at least one process of its order
//      AND either by more than half of its count, or for `sparing_patience_epochs` without a break (a gap
//      that churn does not close by itself); then its short jobs claim, oldest first, up to that shortfall.
//      A job that holds nothing claims one process (so new work starts) unless its user is at or above its
//      count in the class.
//   R3 victims: only (class, user) units above their count, and never below it; among their jobs above
//      their counts, first those with idle processes (less work left than processes can take: about to
//      finish), then the units furthest above their count, then the least work left per process, then the
//      investment order (processes still initializing first).
//   R4 claimant first: a claimant's claim is kept in job_rec::claim_q, and What Of serves such jobs before
//      any other fair-share work, so the freed quanta go to the claimant that caused the preemption.
//   R5 no undo: a job that lost a process within `hold` (ten epochs) does not claim, and a job that claimed
//      within `hold` is not a victim. A claim held back by this rule sets m.next_reclaim_ms to when it falls
//      due, so that the round runs again then even if nothing else changes.
//
// A claimant looks for room in its class's pool and the pools nested below it, on machines its host list
// allows, as What Of places it (never in a sibling pool, where the space would be freed for nothing).
// Claimants are served most starved user first (held / count). R1's machine is found through an index of
// the candidate machines and what each could offer (sparing_room_index.hpp), not by trying each.
// Whole-machine reservations clear the machine whose clearing costs least (reservation_choice.hpp) before
// this function runs.

#include <cstdint>
#include <vector>

#include "core/cluster_model.hpp"

namespace rmbus::core {

// R5's hold, in scheduling epochs.
inline constexpr int sparing_hold_epochs = 10;
std::int64_t sparing_hold_ms(const cluster_model& m);
// R2's patience with a shortfall of half its count or less, in scheduling epochs.
inline constexpr int sparing_patience_epochs = 30;
std::int64_t sparing_patience_ms(const cluster_model& m);

struct sparing_choice {
  std::vector<int> shed;     // per job slot: processes it sheds this round (0 unless above its count)
  std::vector<char> chosen;  // per share slot: chosen to be shed
};

// The processes to preempt this round under the sparing policy. Writes claim_q, shed_at_ms and
// claimed_at_ms of the jobs concerned and may lower m.next_reclaim_ms (R5).
// REQUIRES: What Of ran this round; m.next_reclaim_ms was reset for this round.
sparing_choice choose_sparing_victims(cluster_model& m, std::int64_t now_ms);

}  // namespace rmbus::core
