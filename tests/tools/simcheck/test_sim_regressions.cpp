// Every seed rmbus-sim-check ever failed on, replayed: each names the mechanism it found (docs/reliability.md,
// "Seeded simulation"). Each run is deterministic, so a seed that fails again fails the same way.
#include <catch2/catch.hpp>

#include "tools/simcheck/sim_run.hpp"

using namespace rmbus::simcheck;

namespace {

void passes(std::uint64_t seed) {
  run_settings s;
  s.seed = seed;
  const auto r = run_seed(s);
  INFO("seed " << seed << ": " << (r.failure ? r.failure->rule + " on " + r.failure->node + ": " + r.failure->detail : ""));
  CHECK_FALSE(r.failure.has_value());
  CHECK(r.rounds_run == s.rounds);
}

}  // namespace

TEST_CASE("seed 54: shares adopted after a replacement, on a node a recovered late start already fills, are repaired") {
  passes(54);
}

TEST_CASE("seed 624: an adopted eviction keeps its space until the orchestrator has acted on it") { passes(624); }

TEST_CASE("seeds 852 and 865: the same adopted evictions, another way") {
  passes(852);
  passes(865);
}

TEST_CASE("seed 10188: a repair takes back the share not started yet, not the running process beside it") {
  passes(10188);
}

TEST_CASE("seed 15659: a repair takes back every share not started yet on the node, so the guard lets it out") {
  passes(15659);
}

TEST_CASE("a seed replays exactly") {
  run_settings s;
  s.seed = 4242;
  const auto a = run_seed(s);
  const auto b = run_seed(s);
  CHECK(a.moves == b.moves);
  CHECK(a.history == b.history);
  CHECK(a.repairs == b.repairs);
}
