#include "tools/admin/command_names.hpp"

#include "config/detail/closest_name.hpp"

namespace rmbus::tools::admin {

const std::vector<command_name>& command_names() {
  static const std::vector<command_name> names{
      {"status", {}},
      {"qload", {"rm_qload"}},
      {"qoccupancy", {"rm_qoccupancy"}},
      {"vary-off", {"vary_off", "varyoff"}},
      {"vary-on", {"vary_on", "varyon"}},
      {"explain", {}},
      {"whatif", {"what-if"}},
      {"reconfigure", {"reconfig"}},
      {"handover", {}},  // HA: the active steps down (issue 21)
  };
  return names;
}

std::optional<std::string> subcommand_word(const std::vector<std::string>& args) {
  // The global options that take a value, in both spellings (--opt VALUE and --opt=VALUE).
  static const std::vector<std::string_view> with_value{"--admin",      "--timeout-ms", "--key",
                                                        "--server-key", "--config",     "--ducc"};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a.empty()) continue;
    if (a[0] != '-') return std::string{a};
    for (auto o : with_value)
      if (a == o) ++i;  // its value follows
  }
  return std::nullopt;
}

std::optional<std::string> unknown_command_message(std::string_view word) {
  std::vector<std::string_view> candidates;
  std::string list;
  for (const auto& c : command_names()) {
    if (word == c.name) return std::nullopt;
    for (const auto& a : c.aliases)
      if (word == a) return std::nullopt;
    candidates.emplace_back(c.name);
    list += (list.empty() ? "" : ", ") + c.name;
  }
  for (const auto& c : command_names())
    for (const auto& a : c.aliases) candidates.emplace_back(a);
  std::string out = "unknown command '" + std::string{word} + "'";
  if (auto near = config::detail::closest_name(word, candidates)) {
    // An alias that is close names its command.
    std::string command = *near;
    for (const auto& c : command_names())
      for (const auto& a : c.aliases)
        if (a == *near) command = c.name;
    out += "; did you mean '" + command + "'?";
  }
  out += " (commands: " + list + ")";
  return out;
}

}  // namespace rmbus::tools::admin
