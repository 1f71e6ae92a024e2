#pragma once
// What a new HA active's fresh schedulers start from (docs/protocol.md 4.8): the last schedule its standby
// heard from the active before it, without that schedule's grants not started yet.
//
// The standby may have missed the active's last schedules, so a `new` share in what it heard may be one the
// active withdrew since and whose space it gave to another process. Listed `new` again under the new epoch,
// the orchestrator would start it beside that process (rmbus-sim-check --takeovers, seed 312). Dropped, it is
// no grant of the new epoch: the orchestrator cancels the start when it accepts that epoch, or, if the process
// started already, the map that echoes the epoch shows it and it is recovered as running, before the new active
// grants anything. So only while the orchestrator echoes epochs: one that does not lets a new active grant
// from its first round, and then the seed's grants are what keep their space. The shares running or being
// stopped stay: a removal, once published, is never withdrawn.
//
// Without CAF, so that it can be tested alone.

#include <cstddef>

#include "messages/rm_state.hpp"

namespace rmbus::actors {

// Removes every `new` share from `heard`; returns how many.
std::size_t drop_unstarted_grants(messages::rm_state& heard);

}  // namespace rmbus::actors
