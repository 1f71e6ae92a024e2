#pragma once
// The full-screen shell of rmbus-top: ncurses, a redraw every refresh period, keys, and a terminal always
// given back as it was found.
//
// It knows nothing of the bus: `draw` renders the current picture for the width, height and job offset it
// is given (the executable locks its model inside). Keys: q quits; Up/Down, PgUp/PgDn, Home/End scroll the
// job list; a resize redraws at once. The stop signals (SIGINT, SIGTERM, SIGHUP) must already be blocked in
// every thread by the caller; this loop takes them with sigtimedwait between keys, so they end the loop
// normally and endwin() always runs: no signal handler, no global flag.
//
// Thread-safety: call from one thread, the one that owns the terminal.

#include <signal.h>

#include <chrono>
#include <functional>
#include <string>

#include "tools/top/render.hpp"

namespace rmbus::top {

// Runs until q or a stop signal. Returns 0, or 2 with a message on stderr when stdin/stdout is not a
// terminal or the terminal cannot be set up.
int run_screen(const std::function<screen(const render_options&)>& draw, const render_options& base,
               std::chrono::milliseconds refresh, const sigset_t& stop_signals);

}  // namespace rmbus::top
