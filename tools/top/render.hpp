#pragma once
// The monitor's screen as lines of plain ASCII text: what rmbus-top draws full screen, or prints with --once.
//
// Sections in order of importance, which is also their order on screen: the header (endpoint, round, age of
// the last rm.state, bus health, messages per topic), nodepools (nodes by state; quanta and free quanta of
// the nodes up), classes with their share groups and users (processes active, quanta held, the How Much count
// against demand and fair share), work the RM refused with its reason (when there is some; the header counts
// it too), jobs (pending first with their reasons, then scheduled; by id; processes active and leaving;
// processes under a reclaim deadline; preemptions and evictions seen lately; a note too long for the line is
// wrapped below it, never cut), recent events, and the last round's timings per pool.
//
// With a height limit every section first gets its heading and a few rows, in that order, as far as they
// fit; what is left goes to the sections in the same order until each is whole. So on a small terminal the
// most important things stay in view, and the job list, usually the longest, shows a window starting at
// `jobs_offset` with a line saying which jobs are shown; the shell scrolls it. Without a height limit
// (--once) everything is shown.
//
// Every order is by name or number, so the same model always gives the same text. Strings from the bus are
// made safe for a terminal (control bytes and non-ASCII characters become '?', one per character) and cut
// to their column with '~', so no name can move the columns after it or send escape sequences; every line is
// cut to `width`. Pure: no terminal, no clock.

#include <cstdint>
#include <string>
#include <vector>

#include "tools/top/monitor_model.hpp"

namespace rmbus::top {

struct render_options {
  std::size_t width = 120;
  std::size_t height = 0;       // 0: no limit
  millis now_ms = 0;            // for ages, on the model's clock
  std::string endpoint;         // where the monitor listens; named in the header
  std::size_t max_events = 10;  // recent events shown without a height limit
  std::size_t jobs_offset = 0;  // first job shown when the job list does not fit
};

struct screen {
  std::vector<std::string> lines;
  std::size_t jobs_total = 0;
  std::size_t jobs_first = 0;  // the offset actually used (clamped so the window is full)
  std::size_t jobs_shown = 0;  // job rows visible: a page for PgUp/PgDn
};

screen render(const monitor_model& model, const render_options& options);

enum class scroll_step { line_up, line_down, page_up, page_down, first, last };

// The job list's new first row after a key, within 0..total-1 (render clamps it further to a full window).
std::size_t scroll_jobs(std::size_t offset, scroll_step step, std::size_t page, std::size_t total);

// "2.5s", "4m05s", "3h07m": ages on the screen.
std::string format_age(millis ms);

}  // namespace rmbus::top
