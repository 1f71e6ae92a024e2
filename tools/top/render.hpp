#pragma once
// The monitor's screen as lines of plain text: what rmbus-top shows, full screen or with --once.
//
// Sections, most important first: a header (cycle, age of the last rm.state, bus health), nodepools (nodes
// by state, quanta and free quanta of the nodes up), classes and users (processes held, How Much count,
// demand and fair share, in processes), jobs (pending and refused first with their reasons, then by id;
// processes held and being preempted or evicted), the last cycle's timings per pool, and recent events.
// Every order is by name or number, so the same model always renders the same text. Lines are cut to
// `width` columns; pure function, no terminal involved.

#include <cstdint>
#include <string>
#include <vector>

#include "tools/top/monitor_model.hpp"

namespace rmbus::top {

struct render_options {
  std::size_t width = 120;
  std::int64_t now_ms = 0;          // for the age of the last rm.state
  std::string endpoint;             // named while nothing has arrived
  std::size_t max_events = 10;      // recent events shown
};

std::vector<std::string> render(const monitor_model& model, const render_options& options);

}  // namespace rmbus::top
