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

TEST_CASE("seed 65791: a grant made and dropped again in the same round changes nothing") {
  // What Of gave a share that the preemption stage dropped before any plan listed it, every round: the plan
  // counted one share given a round for ever, and the schedule at rest looked as if it never settled.
  passes(65791);
}

TEST_CASE("seed 88651: a job ramping by doubling through preemptions settles within the quiet rounds") {
  // Each doubling step waits a round for the exits of the processes it preempts: it settled in the 16th quiet
  // round, one after the 15 the run had then.
  passes(88651);
}

namespace {

// DUCC's two-round cycle on `seed`: under ducc every safety rule holds to the last round, and the run keeps
// giving and preempting at most one process a round to the end; under sparing the same run settles.
void cycles_under_ducc_settles_under_sparing(std::uint64_t seed, bool takeovers) {
  INFO("seed " << seed << (takeovers ? " with takeovers" : ""));
  run_settings s;
  s.seed = seed;
  s.takeovers = takeovers;
  const auto r = run_seed(s);
  REQUIRE(r.failure.has_value());
  INFO(r.failure->rule << " on " << r.failure->node << ": " << r.failure->detail);
  CHECK(r.failure->rule == "no_convergence");
  CHECK(r.rounds_run == s.rounds);  // every safety rule held in every round
  REQUIRE(r.quiet_changes.size() == static_cast<std::size_t>(s.quiet_rounds));
  int given = 0, preempted = 0;
  for (std::size_t k = r.quiet_changes.size() - 10; k < r.quiet_changes.size(); ++k) {
    const auto& c = r.quiet_changes[k];
    CHECK(c.given <= 1);
    CHECK(c.preempted <= 1);
    CHECK(c.evicted == 0);
    given += c.given;
    preempted += c.preempted;
  }
  CHECK(given >= 2);  // it keeps going round
  CHECK(preempted >= 2);
  s.sparing = true;
  const auto settled = run_seed(s);
  INFO("under sparing: " << (settled.failure ? settled.failure->rule + ": " + settled.failure->detail : ""));
  CHECK_FALSE(settled.failure.has_value());
}

}  // namespace

TEST_CASE("DUCC's two-round cycle: one process given and taken back for ever under ducc while no safety rule breaks and sparing settles") {
  // docs/reliability.md: a job ramping by doubling asks for twice what it holds, which changes its class's
  // demand by order and so the user that gets the class's odd quantum; holding one more process moves the
  // quantum to the other user, which preempts it. DUCC's rules do this; they stay as DUCC has them so that
  // the DUCC lock step holds. Under sparing a unit at its pure fair share does not claim its bonus.
  for (std::uint64_t seed : {25874, 36794, 42088, 66592, 77027, 91650}) cycles_under_ducc_settles_under_sparing(seed, false);
  cycles_under_ducc_settles_under_sparing(83756, true);  // the same cycle, reached through takeovers
}

TEST_CASE("with takeovers: a new active seeded from a stale schedule lists none of its predecessor's unstarted grants") {
  // Seed 312 (rmbus-sim-check --takeovers): the new active's seed, three publications old, listed `new` a share
  // its predecessor had since withdrawn for another on the same node, and the orchestrator, moving to the new
  // epoch, would have started both: 5 quanta on a node of 4. 22 of the first 1,000 seeds failed so before
  // actors/takeover_seed.hpp; seeds 399 and 1244 needed repair_late to count only the rounds in which the
  // active that plans may stop a process.
  for (std::uint64_t seed : {312, 399, 488, 645, 831, 1244}) {
    run_settings s;
    s.seed = seed;
    s.takeovers = true;
    const auto r = run_seed(s);
    INFO("seed " << seed << ": " << (r.failure ? r.failure->rule + " on " + r.failure->node + ": " + r.failure->detail : ""));
    CHECK_FALSE(r.failure.has_value());
    CHECK(r.moves[static_cast<std::size_t>(move_kind::takeover)] > 0);
  }
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
