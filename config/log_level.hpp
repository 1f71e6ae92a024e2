#pragma once
// Log level names. spdlog::level::from_str maps any name it does not know (including upper-case ones) to
// `off`, which would silently disable logging on a typo; this function knows the names and says "no" instead.
//
// Accepted (case-insensitive): trace, debug, info, warn, warning, error, err, critical, off.

#include <optional>
#include <string_view>

#include <spdlog/common.h>

namespace rmbus::config {

std::optional<spdlog::level::level_enum> parse_log_level(std::string_view name);

// The accepted names, for error messages: "trace, debug, info, warn, error, critical, off".
std::string_view log_level_names();

}  // namespace rmbus::config
