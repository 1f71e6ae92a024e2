#pragma once
// rm.events `not_scheduling` — sent by the RM's work-map differencing, every report period while it runs no
// rounds, saying why: so that a monitor (and `rmbus-admin status`) tells an idle RM from a hung or dead one.
// A round published after the report means the RM schedules again; a monitor that hears neither rounds nor
// these reports hears nothing from the RM at all.
//
// Reasons (detail `reason`):
//   starting       the start-up stability window (init_stability heartbeat intervals) has `left_ms` to go;
//   no_workmap     no work map was taken for `for_ms` (`ever` false: none since the RM started);
//   round_overdue  round `cycle` started `for_ms` ago and is not published, past the round timeout
//   `limit_ms`:
//                  the RM is stuck, not idle.
// Detail keys, all strings: reason, for_ms, limit_ms (the window's length, the work-map silence counted as
// idle, or the round timeout), left_ms (starting), cycle (the last round started; 0: none), ever
// (no_workmap), text (describe() as sent, for readers that only print).
//
// The struct is read back from the event by monitors and admin: no CAF, no clock; ages are the caller's to
// add.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "messages/rm_event.hpp"

namespace rmbus::messages {

namespace not_scheduling_reasons {
inline constexpr std::string_view starting = "starting";
inline constexpr std::string_view no_workmap = "no_workmap";
inline constexpr std::string_view round_overdue = "round_overdue";
}  // namespace not_scheduling_reasons

struct not_scheduling {
  std::string reason;          // one of not_scheduling_reasons
  std::uint64_t for_ms = 0;    // how long so (since start, since the last map, since the round started)
  std::uint64_t limit_ms = 0;  // the length it is measured against
  std::uint64_t left_ms = 0;   // starting: time left in the window
  std::uint64_t cycle = 0;     // the last round started (round_overdue: the one overdue)
  bool ever = false;           // no_workmap: a work map was taken since the RM started

  friend bool operator==(const not_scheduling&, const not_scheduling&) = default;
};

rm_event to_event(const not_scheduling& n);
// The report in `e`; nothing when `e` is another kind, or its reason or a number does not read (a newer RM's
// reason is still returned, with its numbers, so a reader can print it).
std::optional<not_scheduling> not_scheduling_of(const rm_event& e);
// The same report `elapsed_ms` later: for_ms grows, left_ms shrinks to 0.
not_scheduling aged(not_scheduling n, std::uint64_t elapsed_ms);
// One sentence for a person, e.g. "idle: no work map for 73 s (none since rmbus started)".
std::string describe(const not_scheduling& n);

}  // namespace rmbus::messages
