#pragma once
// rmbus-admin's subcommands, DUCC's names for them (rm_qload's "qload", "vary_off" as the wire spells it),
// and a "did you mean" for a misspelt one, found before the command line parser would answer "A subcommand
// is required" or "arguments not expected".
//
// Thread-safety: pure functions.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmbus::tools::admin {

struct command_name {
  std::string name;                  // as the user types it: vary-off
  std::vector<std::string> aliases;  // also accepted: vary_off, varyoff
};
const std::vector<command_name>& command_names();

// The first word of argv that names a subcommand, skipping the global options and their values
// (`--admin EP`, `--admin=EP`); nullopt when there is none (then the parser reports the missing subcommand).
std::optional<std::string> subcommand_word(const std::vector<std::string>& args);

// nullopt when `word` is a subcommand or an alias; otherwise the message to print: unknown command, the
// closest known name when one is close, and the list.
std::optional<std::string> unknown_command_message(std::string_view word);

// nullopt when `value` is one of `allowed`; otherwise the message for option `option`: the value, the closest
// allowed one when one is close, and the list.
std::optional<std::string> unknown_value_message(std::string_view option, std::string_view value,
                                                 const std::vector<std::string>& allowed);

// The states qoccupancy --state takes, and jobs --state.
const std::vector<std::string>& node_states();
const std::vector<std::string>& job_states();

}  // namespace rmbus::tools::admin
