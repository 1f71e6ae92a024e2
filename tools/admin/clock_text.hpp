#pragma once
// Times as people read them in rmbus-admin's tables: the RM's replies carry wall-clock times as milliseconds
// since the epoch (docs/protocol.md section 3), which nobody reads at a glance. Shown in this machine's local
// time: "14:03:12" on the day of `now_ms`, "2024-05-02 14:03:12" on another day.
//
// Thread-safety: pure functions (localtime_r).

#include <cstdint>
#include <string>
#include <string_view>

namespace rmbus::tools::admin {

std::string clock_time(std::int64_t at_ms, std::int64_t now_ms);

// `text` with every "at <ms since the epoch> ms" (explain's estimates: "(at 1714651392000 ms)") written as a
// clock time ("(at 14:03:12)"); anything else is left as it is.
std::string with_clock_times(std::string_view text, std::int64_t now_ms);

}  // namespace rmbus::tools::admin
