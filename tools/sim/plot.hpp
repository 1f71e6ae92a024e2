#pragma once
// A small hand-written SVG of a run: per-user allocation over time (quanta held, solid; fair share, dashed;
// the quanta of the nodes that are up, grey) above the cluster's utilization over time. With several
// top-level nodepools, one allocation panel per pool (each user's holdings and fair share in that pool,
// against the pool's own quanta) and one utilization line per pool. One self-contained file, no fonts or
// scripts, readable in any browser.
//
// Pure: renders the recorder's samples to a string.

#include <string>

#include "tools/sim/recorder.hpp"

namespace rmbus::sim {

std::string render_svg(const recorder& rec, const std::string& title);

// Text made safe inside SVG/XML (&, <, >, ", ').
std::string xml_escape(const std::string& text);

}  // namespace rmbus::sim
