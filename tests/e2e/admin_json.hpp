#pragma once
// The JSON object `rmbus-admin --json` printed: its last non-empty line (a note or a client-side failure goes
// to stderr, which the tests read in the same output, before it).

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace rmbus::e2e {

inline nlohmann::json admin_json(const std::string& output) {
  std::istringstream in(output);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return nlohmann::json::parse(last);
}

}  // namespace rmbus::e2e
