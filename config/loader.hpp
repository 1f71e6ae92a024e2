#pragma once
// Entry points that turn configuration files into a resolved, validated rm_config.
//
// Two roads, one result: a native TOML file (schema in docs/configuration.md), or DUCC's own files (a
// ducc.properties naming its ducc.classes, user registry and nodefiles). Both apply the same rules
// (detail/resolve) so a site described either way yields the same rm_config, and the same errors.
//
// Every function throws config_error holding EVERY problem found (file, line, what is wrong), or returns a
// configuration in which every default is resolved. Relative file names inside a file (nodefiles, the class
// file) are resolved against the directory of the file naming them.
//
// Thread-safety: pure functions of their inputs and the files they read.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.hpp"
#include "config/rm_config.hpp"

namespace rmbus::config {

// Native TOML configuration read from `path`.
rm_config load_native(const std::filesystem::path& path);

// Native TOML configuration from `text`; `name` names it in errors. Relative nodefiles are resolved against
// `base_dir`, by default the directory part of `name`.
rm_config parse_native(std::string_view text, const std::string& name, std::filesystem::path base_dir = {});

// DUCC configuration: the ducc.rm.* keys (and the few others of shared/ducc-rm.md section 4.3) of a
// ducc.properties; the class file named by ducc.rm.class.definitions (default ducc.classes) and the optional
// user registry ducc.rm.user.registry (default ducc.users; skipped when absent) are resolved relative to the
// properties file's folder. Runtime settings DUCC has no keys for (bus, log, limits) keep their defaults.
rm_config load_ducc(const std::filesystem::path& properties_path);

// A ducc.classes file (and optional user registry, empty path = none) alone, with the given global settings as
// the source of class defaults: what DUCC's NodeConfiguration reads, used by its validation suite.
core::scheduler_config load_ducc_classes(const std::filesystem::path& classes_path,
                                         const std::filesystem::path& users_path = {},
                                         const core::scheduling_settings& settings = {});

// Problems of the runtime settings alone (endpoint syntax, log level, positive timings and limits), for
// callers that override them from a command line after loading. Empty when sound.
std::vector<std::string> runtime_problems(const runtime_settings& runtime);

}  // namespace rmbus::config
