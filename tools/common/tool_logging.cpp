#include "tools/common/tool_logging.hpp"

#include <ostream>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "bus/log_level.hpp"

namespace rmbus::tools {

std::optional<spdlog::level::level_enum> start_tool_logging(std::string_view tool, std::string_view level_name,
                                                            std::ostream& err) {
  const auto level = bus::parse_log_level(level_name);
  if (!level) {
    err << tool << ": --log-level: unknown level '" << level_name << "' (expected " << bus::log_level_names << ")\n";
    return std::nullopt;
  }
  spdlog::set_default_logger(spdlog::stderr_color_mt(std::string{tool}));
  spdlog::set_level(*level);
  return level;
}

}  // namespace rmbus::tools
