#pragma once
// what_of: find machines for the counts How Much gave (DUCC whatOfFairShare / whatOfFixedShare /
// whatOfReserve with NodePool's bucket search).
//
// Free space is indexed per pool by exact free size (DUCC's n/vMachinesByOrder, kept as buckets of
// machines, by name inside a bucket, updated as each share is placed). A job scans the buckets from
// exactly its order upward: best fit first.
// Order of service:
//   1. jobs on the defragmentation needy list (they get the holes made for them), and claimants of the
//      sparing preemption policy (job_rec::claim_q: they get the quanta preempted for them), best priority
//      first;
//   2. priority groups best first; inside a fair-share group pools children first and, inside a pool,
//      LARGER ORDERS FIRST, then oldest, then id (DUCC placed oldest first, so a small job could take
//      the spare room only a large job can use and leave capacity idle for good: ducc-rm.md 1.6, F);
//      non-preemptable groups oldest first.
// Fair-share work that does not fit in its class's pool descends into nested pools (squatters);
// non-preemptable work stays in its own pool: FIXED_SHARE goes on the machines How Much counted it on
// (chosen there: spread, fits now, best fit, name) once there is room; RESERVE takes its earmarked
// machine once it is empty, as one share of the machine's whole order.
// Machines earmarked for a reservation or for a needy job are skipped by everyone else.
// New shares are created with status new and unpublished (defragmentation may still hand them over).

#include "core/cluster_model.hpp"

namespace rmbus::core {

void what_of(cluster_model& m);

// True when the job's host list (if any) allows the machine (name, short name or ip).
bool host_allowed(const job_rec& j, const machine_rec& mc);

}  // namespace rmbus::core
