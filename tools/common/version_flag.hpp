#pragma once
// --version on every rmbus program: prints "NAME VERSION" (rmbus/version.hpp, generated from
// project(rmbus VERSION ...)) and exits 0, through CLI11's own version flag, so it is answered before any
// required option or setting is checked. Each program's parse error handler returns app.exit(e), which is 0
// for it. Link the target with rmbus_version.

#include <CLI/CLI.hpp>
#include <string>

#include "rmbus/version.hpp"

namespace rmbus::tools {

inline void add_version_flag(CLI::App& app, const std::string& program) {
  app.set_version_flag("--version", program + " " + rmbus::version, "print the program's name and version, then exit");
}

}  // namespace rmbus::tools
