#pragma once
// Prints a resolved configuration as native TOML, every default written out and inheritance flattened, so an
// administrator sees exactly what rmbus will run with (`rmbus --check-config`). The text is itself a valid
// native configuration: parse_native(render(c)) == c (a test holds us to it).

#include <string>

#include "config/rm_config.hpp"

namespace rmbus::config {

std::string render(const rm_config& cfg);

}  // namespace rmbus::config
