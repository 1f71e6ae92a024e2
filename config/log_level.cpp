#include "config/log_level.hpp"

#include <array>
#include <string>
#include <utility>

namespace rmbus::config {

std::optional<spdlog::level::level_enum> parse_log_level(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, spdlog::level::level_enum>, 9> table{{
      {"trace", spdlog::level::trace},
      {"debug", spdlog::level::debug},
      {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},
      {"warning", spdlog::level::warn},
      {"error", spdlog::level::err},
      {"err", spdlog::level::err},
      {"critical", spdlog::level::critical},
      {"off", spdlog::level::off},
  }};
  std::string lower;
  lower.reserve(name.size());
  for (char c : name) lower += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  for (const auto& [text, level] : table) {
    if (lower == text) return level;
  }
  return std::nullopt;
}

std::string_view log_level_names() { return "trace, debug, info, warn, error, critical, off"; }

}  // namespace rmbus::config
