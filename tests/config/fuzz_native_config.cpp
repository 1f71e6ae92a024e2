// libFuzzer target over the native (TOML) configuration loader. The libFuzzer build needs -DRMBUS_FUZZ=ON and
// clang (tools/fuzz.sh runs it); every build replays the committed seeds as fuzz_native_config_replay.
//
// An input is up to three files (fuzz_files.hpp): the TOML text, `a.nodes` and `b.nodes.regex`, so nodefiles,
// imports and patterns are reached too. The loader must either return a configuration or throw config_error;
// any other exception, crash or sanitizer report is a finding. An accepted configuration must also survive
// its own rendering: parse_native(render(c)) == c (what `rmbus --check-config` promises).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/loader.hpp"
#include "config/render.hpp"
#include "tests/config/fuzz_files.hpp"

using namespace rmbus::config;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input{reinterpret_cast<const char*>(data), size};
  const auto parts = fuzz::split_files(input, 3);
  fuzz::write_files(parts, {"site.toml", "a.nodes", "b.nodes.regex"});
  const auto& dir = fuzz::scratch_dir();
  rm_config cfg;
  try {
    cfg = parse_native(parts[0], (dir / "site.toml").string(), dir);
  } catch (const config_error& e) {
    if (e.issues().empty() || e.message().empty()) __builtin_trap();
    return 0;
  }
  const auto text = render(cfg);
  try {
    if (parse_native(text, "rendered.toml", dir) != cfg) __builtin_trap();
  } catch (const config_error&) {
    __builtin_trap();  // the rendering of an accepted configuration was refused
  }
  return 0;
}
