#pragma once
// Upper bounds on timing settings, shared by both configuration roads. They are far above any sensible value
// and exist so that products such as epoch = period x ratio, or deadline = interval x stability, can never
// overflow a 64-bit millisecond count, whatever a file says.

#include <cstdint>

namespace rmbus::config {

inline constexpr std::int64_t max_period_ms = 24LL * 60 * 60 * 1000;  // one day
inline constexpr std::int64_t max_ticks = 1000;                        // stability counts and publish ratio
inline constexpr std::int64_t max_forget_down_ms = 30 * max_period_ms;  // [limits] forget_down_ms: 30 days

}  // namespace rmbus::config
