#pragma once
// One seeded run of the simulated head: a cluster, a workload, an orchestrator and a nemesis, all drawn from
// the seed, played round by round under a simulated clock; after every round the rules of round_checker are
// checked against the orchestrator's truth. The nemesis stops for the last rounds, and the run must then
// converge: no node above its order, the schedule unchanged over the last rounds, every share started.
//
// Everything follows from the seed: the same seed gives the same run, move for move (no clock, no threads).

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "tools/simcheck/nemesis.hpp"
#include "tools/simcheck/round_checker.hpp"

namespace rmbus::simcheck {

struct run_settings {
  std::uint64_t seed = 1;
  int rounds = 65;        // in all, the quiet ones included
  // At the end, without the nemesis: enough for a job that ramps by doubling while each step waits a round
  // for the preemptions it needs (seed 88651 settled in the 16th).
  int quiet_rounds = 20;
  bool sparing = false;   // the sparing preemption policy instead of DUCC's
  // HA takeovers among the moves. Off, every seed plays as it did before the move existed: its draws come
  // from a random source of their own, seeded from the seed.
  bool takeovers = false;
};

struct run_result {
  std::uint64_t seed = 0;
  int rounds_run = 0;
  std::array<std::uint64_t, move_kinds> moves{};
  std::uint64_t guard_refusals = 0;  // plans the publication guard would have held back
  // ...of which on a node where no late start of the orchestrator's own ran or waited: the core's doing alone
  std::uint64_t guard_refusals_unexplained = 0;
  std::uint64_t repairs = 0;         // nodes the core found above their order and repaired
  // What each quiet round's plan changed, in round order: how a run that does not converge keeps moving.
  struct changes {
    int given = 0, preempted = 0, evicted = 0;
  };
  std::vector<changes> quiet_changes;
  std::optional<violation> failure;  // the first rule broken
  std::deque<std::string> history;   // the last moves and events before the failure (or the end)
};

run_result run_seed(const run_settings& s);

}  // namespace rmbus::simcheck
