// rmbus's start-up summary (issue 17): the configuration's source, each pool with its quantum, nodes expected
// and classes, the preemption policy in force, every endpoint, and when scheduling starts, as printed.
#include <catch2/catch.hpp>

#include <algorithm>

#include "config/loader.hpp"
#include "config/startup_summary.hpp"

using namespace rmbus::config;

TEST_CASE("the summary names the source, the pools, every endpoint and when scheduling starts") {
  const auto cfg = parse_native(R"toml(
[scheduling]
quantum = "1G"

[timing]
heartbeat_interval_ms = 300
init_stability = 2

[[nodepool]]
name = "alpha"
nodes = ["a1", "a2"]

[[nodepool]]
name = "big"
quantum = "4G"
nodes = ["b1"]

[[class]]
name = "normal"
policy = "FAIR_SHARE"
nodepool = "alpha"
weight = 100
default = true

[[class]]
name = "fixed"
policy = "FIXED_SHARE"
nodepool = "big"
default = true
)toml",
                                "site.toml");
  startup_facts facts;
  facts.source = "site.toml (native)";
  facts.metrics = "http://127.0.0.1:9464/metrics";
  CHECK(
      startup_summary(cfg, facts) ==
      std::vector<std::string>{
          "configuration: site.toml (native)",
          "nodepool alpha: quantum 1 GB, 2 node(s) expected, and every node no pool names; classes: normal "
          "(FAIR_SHARE weight 100, default)",
          "nodepool big: quantum 4 GB, 1 node(s) expected; classes: fixed (FIXED_SHARE, default)",
          "preemption policy: ducc (every fair-share job above its count sheds the surplus)",
          "endpoints: bus pub tcp://127.0.0.1:5560, bus sub tcp://127.0.0.1:5561 (embedded forwarder), admin "
          "tcp://127.0.0.1:5562, metrics http://127.0.0.1:9464/metrics",
          "scheduling starts after init stability: 2 heartbeat intervals of 0.3 s = 0.6 s from now, or at "
          "once on "
          "a work map naming live processes (a restart)"});
}

TEST_CASE("the summary names the preemption policy in force, as the configuration sets it") {
  const std::string pools = "[[nodepool]]\nname = \"p\"\n\n[[class]]\nname = \"normal\"\npolicy = \"FAIR_SHARE\"\n"
                            "nodepool = \"p\"\ndefault = true\n";
  const auto sparing = startup_summary(
      parse_native("[scheduling]\npreemption_policy = \"sparing\"\n\n" + pools, "site.toml"), startup_facts{});
  CHECK(std::count(sparing.begin(), sparing.end(),
                   "preemption policy: sparing (preempts only for starved claimants, only what they need)") == 1);
  const auto unset = startup_summary(parse_native(pools, "site.toml"), startup_facts{});
  CHECK(std::count(unset.begin(), unset.end(),
                   "preemption policy: ducc (every fair-share job above its count sheds the surplus)") == 1);
}
