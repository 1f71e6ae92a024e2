#pragma once
// Strict parsing of a log level name from config or the command line. spdlog's own from_str maps any name it
// does not know (including upper case) to `off`, which would silently disable logging; here an unknown name
// is an error the caller reports.

#include <spdlog/common.h>

#include <optional>
#include <string_view>

namespace rmbus::bus {

// trace, debug, info, warn, error, critical, off (lower case, exact); nullopt for anything else.
std::optional<spdlog::level::level_enum> parse_log_level(std::string_view name);

inline constexpr std::string_view log_level_names = "trace, debug, info, warn, error, critical, off";

}  // namespace rmbus::bus
