#pragma once
// The operator tools' logging: spdlog to stderr under the tool's name, at the level of their --log-level.

#include <iosfwd>
#include <optional>
#include <string_view>

#include <spdlog/common.h>

namespace rmbus::tools {

// Makes a stderr logger named `tool` the default one, at `level_name`. An unknown name is printed to `err`
// ("TOOL: --log-level: unknown level 'X' (expected ...)") and nothing is set up: nullopt, and the tool exits 2.
std::optional<spdlog::level::level_enum> start_tool_logging(std::string_view tool, std::string_view level_name,
                                                            std::ostream& err);

}  // namespace rmbus::tools
