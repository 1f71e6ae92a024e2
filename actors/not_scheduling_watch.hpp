#pragma once
// Why the RM runs no rounds (messages/not_scheduling.hpp), decided from what the work-map differencing knows:
// its start-up window, when it last took a work map, the round in flight. The differencing actor
// (actors/workmap_diff.cpp) asks every report period and publishes the answer as an rm.events
// `not_scheduling`; nothing means it schedules.
//
// Decides, first match wins:
//  - round_overdue: a round has been in flight longer than round_timeout_ms + 1 s. Publication publishes a
//    round by the round timeout whatever its pools do, so a round later than that is a stuck RM;
//  - starting: the start-up window (init_stability heartbeat intervals from start) is still open;
//  - no_workmap: no work map taken within the last 2 orchestrator periods, or none since start once the
//    window is over. Two, not the monitors' three round periods of staleness, so that an RM whose
//    orchestrator stopped says so before a monitor would read its silence as death.
// The report period is the orchestrator's, between 1 s and 5 s: a monitor's default 10 s wait hears one, and
// a fast simulated cluster does not get several a second.
//
// Thread-safety: free functions over values.

#include <cstdint>
#include <optional>

#include "messages/not_scheduling.hpp"

namespace rmbus::actors {

struct scheduling_facts {
  std::int64_t now_ms = 0;
  std::int64_t started_ms = 0;              // when the differencing started (its start-up window with it)
  std::int64_t window_ms = 0;               // init_stability x heartbeat interval
  bool ready = false;                       // the window is over (or fast recovery ended it)
  std::optional<std::int64_t> last_map_ms;  // the last work map taken
  std::optional<std::int64_t> round_started_ms;  // the round in flight, if one is
  std::uint64_t cycle = 0;                       // the last round started
  std::int64_t workmap_period_ms = 0;            // orchestrator_publish_ms
  std::int64_t round_timeout_ms = 0;
};

std::optional<messages::not_scheduling> why_not_scheduling(const scheduling_facts& f);
std::int64_t not_scheduling_period_ms(std::int64_t workmap_period_ms);

}  // namespace rmbus::actors
