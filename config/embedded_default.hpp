#pragma once
// The configuration rmbus runs with when given none: DUCC's shipped sample ducc.classes (one nodepool
// "--default--" taking every node; fair-share classes background 1, low 50, normal 100 (default), high 200,
// weekly 100, urgent 400, standalone 150 at priority 10; FIXED_SHARE fixed (default, priority 5), debug (7),
// JobDriver (9, for the job drivers' user only); RESERVE reserve (default, priority 1)) with the defaults of
// DUCC's shipped default.ducc.properties. It is kept as native TOML text, so it doubles as a worked example of
// the schema and goes through exactly the same reader and checks as a site's file.

#include <string_view>

#include "config/rm_config.hpp"

namespace rmbus::config {

// The TOML text compiled into the library.
std::string_view embedded_default_text();

// The parsed, resolved embedded configuration. Throws config_error only if the text itself is broken (a test
// guards against that).
rm_config embedded_default();

}  // namespace rmbus::config
