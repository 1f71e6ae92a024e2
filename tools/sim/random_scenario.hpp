#pragma once
// A scenario drawn from a seed, for `rmbus-sim --random SEED`: the same spec gives the same scenario on every
// run and machine. Draws come from std::mt19937_64 through our own integer mapping (not std::*_distribution,
// whose results the standard leaves to each library), so the sequence is fixed by the seed alone.
//
// Per job: user uniform among user1..userN; class normal 60%, high 15%, low 15%, urgent 5%, background 5%
// (the embedded default's fair-share classes); memory 2G / 4G / 8G at 30 / 50 / 20%; threads 1, 2 or 4
// uniform; items log-uniform in [200, 4000]; item_ms uniform in [500, 4000]; init_ms uniform in [1000, 8000];
// max_processes 0 (80%) or uniform in 1..16 (20%); arrival uniform over [0, spread_ms). Everything else
// (cluster timing, orchestrator timing) takes a scenario file's defaults.
//
// Pure: no I/O, no clock.

#include <cstdint>
#include <string>

#include "tools/sim/scenario.hpp"

namespace rmbus::sim {

struct random_spec {
  std::uint64_t seed = 1;
  std::string nodes = "8x32G";
  int jobs = 20;                   // 1..10000
  int users = 3;                   // 1..1000
  std::int64_t spread_ms = 60000;  // arrivals uniform over [0, spread_ms); 0: all at once
};

// Throws scenario_error for a bad spec (node description, counts out of range).
scenario random_scenario(const random_spec& spec);

}  // namespace rmbus::sim
