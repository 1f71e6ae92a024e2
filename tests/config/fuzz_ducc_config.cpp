// libFuzzer target over the DUCC configuration loader: ducc.properties, ducc.classes, the ducc.users registry
// and nodefiles. The libFuzzer build needs -DRMBUS_FUZZ=ON and clang (tools/fuzz.sh runs it); every build
// replays the committed seeds as fuzz_ducc_config_replay.
//
// An input is up to five files (fuzz_files.hpp): ducc.properties, ducc.classes, ducc.users, a.nodes and
// b.nodes.regex, read by load_ducc exactly as rmbus reads a site. The loader must either return a
// configuration or throw config_error; any other exception, crash or sanitizer report is a finding. An
// accepted configuration must render to native TOML that reads back equal (both roads give one rm_config).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/loader.hpp"
#include "config/render.hpp"
#include "tests/config/fuzz_files.hpp"

using namespace rmbus::config;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input{reinterpret_cast<const char*>(data), size};
  fuzz::write_files(fuzz::split_files(input, 5), {"ducc.properties", "ducc.classes", "ducc.users", "a.nodes",
                                                  "b.nodes.regex"});
  const auto& dir = fuzz::scratch_dir();
  rm_config cfg;
  try {
    cfg = load_ducc(dir / "ducc.properties");
  } catch (const config_error& e) {
    if (e.issues().empty() || e.message().empty()) __builtin_trap();
    return 0;
  }
  try {
    if (parse_native(render(cfg), "rendered.toml", dir) != cfg) __builtin_trap();
  } catch (const config_error&) {
    __builtin_trap();  // the rendering of an accepted configuration was refused
  }
  return 0;
}
