#include "actors/not_scheduling_watch.hpp"

#include <algorithm>

namespace rmbus::actors {

namespace {

std::uint64_t non_negative(std::int64_t ms) {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(0, ms));
}

}  // namespace

std::optional<messages::not_scheduling> why_not_scheduling(const scheduling_facts& f) {
  namespace r = messages::not_scheduling_reasons;
  messages::not_scheduling n;
  n.cycle = f.cycle;
  if (f.round_started_ms && f.now_ms - *f.round_started_ms > f.round_timeout_ms + 1000) {
    n.reason = r::round_overdue;
    n.for_ms = non_negative(f.now_ms - *f.round_started_ms);
    n.limit_ms = non_negative(f.round_timeout_ms);
    return n;
  }
  if (!f.ready) {
    n.reason = r::starting;
    n.for_ms = non_negative(f.now_ms - f.started_ms);
    n.limit_ms = non_negative(f.window_ms);
    n.left_ms = non_negative(f.started_ms + f.window_ms - f.now_ms);
    return n;
  }
  const auto silence = 2 * f.workmap_period_ms;
  const auto since = f.last_map_ms.value_or(f.started_ms);
  if (f.round_started_ms || (f.last_map_ms && f.now_ms - since <= silence)) return std::nullopt;
  n.reason = r::no_workmap;
  n.for_ms = non_negative(f.now_ms - since);
  n.limit_ms = non_negative(silence);
  n.ever = f.last_map_ms.has_value();
  return n;
}

std::int64_t not_scheduling_period_ms(std::int64_t workmap_period_ms) {
  return std::clamp<std::int64_t>(workmap_period_ms, 1000, 5000);
}

}  // namespace rmbus::actors
