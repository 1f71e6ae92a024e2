#pragma once
// Which machine a whole-machine reservation clears, under the sparing policy (rmbus extension;
// docs/ducc-differences.md). How Much earmarks a machine of the reservation's order in its class's pool: a free
// one first, then one already being cleared, then the one with the least live use, then by name (DUCC's
// rule). When that machine still holds running fair-share work, the sparing policy clears instead the
// machine of that order whose clearing costs least:
//   1. the fewest quanta taken from a (class, user) below its count (each takes first what it holds above
//      its count: a user at or below its fair share loses nothing when another machine would do);
//   2. then the least invested work (the victims' initialization and in-flight work time, summed);
//   3. then the fewest live quanta, then by name.
// The choices of one round are made one reservation after another, each seeing what the earlier ones took.
// A machine so chosen is being cleared next round, so How Much earmarks it again (it comes before machines
// with live use).

#include <vector>

#include "core/cluster_model.hpp"

namespace rmbus::core {

// Moves the earmarks in job_rec::reserve_machines of the `reserving` jobs (slots). REQUIRES: How Much and
// What Of ran this round; nothing was cleared for the reservations yet.
void choose_sparing_reservation_machines(cluster_model& m, std::vector<int> reserving);

}  // namespace rmbus::core
