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
      {"handover", {}},  // HA: the active steps down
      {"drain", {}},     // Slurm's DRAIN: no new work, what runs finishes
      {"undrain", {}},
      {"jobs", {}},      // squeue-like
      {"users", {}},
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

std::optional<std::string> unknown_value_message(std::string_view option, std::string_view value,
                                                 const std::vector<std::string>& allowed) {
  std::vector<std::string_view> candidates;
  std::string list;
  for (const auto& a : allowed) {
    if (value == a) return std::nullopt;
    candidates.emplace_back(a);
    list += (list.empty() ? "" : ", ") + a;
  }
  std::string out = std::string{option} + ": '" + std::string{value} + "' is not one of " + list;
  if (auto near = config::detail::closest_name(value, candidates)) out += "; did you mean '" + *near + "'?";
  return out;
}

const std::vector<std::string>& node_states() {
  static const std::vector<std::string> states{"up",      "varied_off", "down",      "blacklisted",
                                               "drained", "quiesced",   "never_seen"};
  return states;
}

const std::vector<std::string>& job_states() {
  static const std::vector<std::string> states{"scheduled", "pending", "refused"};
  return states;
}

}  // namespace rmbus::tools::admin
