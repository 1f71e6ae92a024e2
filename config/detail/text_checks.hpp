#pragma once
// Configuration files are UTF-8 text. DUCC's readers (properties, class file, user registry, nodefiles) take
// bytes as they come, so a line that is not valid UTF-8 would otherwise become a class or node name that no
// heartbeat can carry (the bus refuses such strings) and that `rmbus --check-config` cannot print as TOML.
// The native road needs no check: its TOML parser refuses such bytes itself.

#include <string>
#include <string_view>

#include "config/config_error.hpp"

namespace rmbus::config::detail {

// Well-formed UTF-8: no stray continuation bytes, no overlong forms, no surrogates, nothing above U+10FFFF.
bool valid_utf8(std::string_view text);

// Adds an issue at every line of `text` (1-based, named `file`) that is not valid UTF-8.
void check_utf8_lines(std::string_view text, const std::string& file, error_list& errors);

}  // namespace rmbus::config::detail
