// `--roles` parsing: which actors a process runs.
#include <stdexcept>

#include <catch2/catch.hpp>

#include "actors/runtime.hpp"
#include "config/loader.hpp"

using rmbus::actors::parse_roles;

namespace {
rmbus::config::rm_config two_pools() {
  return rmbus::config::parse_native(R"toml(
[[nodepool]]
name = "alpha"
[[nodepool]]
name = "beta"
nodes = ["b1"]
[[nodepool]]
name = "inner"
parent = "alpha"
nodes = ["i1"]
[[class]]
name = "normal"
policy = "FAIR_SHARE"
nodepool = "alpha"
default = true
)toml",
                                     "roles.toml");
}
}  // namespace

TEST_CASE("all runs every role and needs nothing from the bus internally") {
  const auto r = parse_roles("all", two_pools());
  CHECK(r.everything());
}

TEST_CASE("a list picks roles and named top-level pools") {
  const auto r = parse_roles("intake, diff,scheduler:beta", two_pools());
  CHECK(r.intake);
  CHECK(r.diff);
  CHECK_FALSE(r.eviction);
  CHECK_FALSE(r.all_pools);
  REQUIRE(r.pools.size() == 1);
  CHECK(r.pools[0] == "beta");
  CHECK_FALSE(r.everything());
}

TEST_CASE("unknown roles and pools that are not top-level are refused by name") {
  const auto cfg = two_pools();
  CHECK_THROWS_WITH(parse_roles("intake,shceduler", cfg), Catch::Contains("unknown role 'shceduler'"));
  CHECK_THROWS_WITH(parse_roles("scheduler:inner", cfg), Catch::Contains("'inner' is not a top-level nodepool"));
  CHECK_THROWS_WITH(parse_roles("scheduler:gamma", cfg), Catch::Contains("'gamma'"));
  CHECK_THROWS_AS(parse_roles("", cfg), std::invalid_argument);
  CHECK_THROWS_AS(parse_roles("intake,,diff", cfg), std::invalid_argument);
}
