#include "bus/log_level.hpp"

#include <array>
#include <utility>

namespace rmbus::bus {

std::optional<spdlog::level::level_enum> parse_log_level(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, spdlog::level::level_enum>, 7> table{{
      {"trace", spdlog::level::trace},
      {"debug", spdlog::level::debug},
      {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},
      {"error", spdlog::level::err},
      {"critical", spdlog::level::critical},
      {"off", spdlog::level::off},
  }};
  for (const auto& [n, level] : table) {
    if (n == name) return level;
  }
  return std::nullopt;
}

}  // namespace rmbus::bus
