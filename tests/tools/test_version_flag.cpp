// `--version` on every program the project builds: the program prints "NAME VERSION" (the version of
// project(rmbus VERSION ...), rmbus/version.hpp) and exits 0, before any option it otherwise requires.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "rmbus/version.hpp"
#include "tests/support/child_process.hpp"

using rmbus::test_support::run_to_end;

TEST_CASE("every program answers --version with its name and the project's version, exit status 0") {
  const std::vector<std::pair<std::string, std::string>> programs{
      {"rmbus", RMBUS_BIN},          {"rmbus-admin", RMBUS_ADMIN_BIN}, {"rmbus-top", RMBUS_TOP_BIN},
      {"rmbus-web", RMBUS_WEB_BIN},  {"rmbus-sim", RMBUS_SIM_BIN},     {"rmbus-load", RMBUS_LOAD_BIN},
      {"rmbus-bench", RMBUS_BENCH_BIN}, {"rmbus-soak", RMBUS_SOAK_BIN}, {"rmbus-proxy", RMBUS_PROXY_BIN},
      {"rmbus-keygen", RMBUS_KEYGEN_BIN}};
  const std::string version = rmbus::version;
  REQUIRE_FALSE(version.empty());
  for (const auto& [name, path] : programs) {
    INFO(name << " (" << path << ")");
    const auto r = run_to_end(path, {"--version"}, std::chrono::seconds(20));
    INFO(r.output);
    CHECK(r.status == std::optional<int>{0});
    CHECK(r.output == name + " " + version + "\n");
  }
}
