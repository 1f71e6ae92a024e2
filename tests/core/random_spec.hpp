#pragma once
// Seeded random workload shapes for the scheduler's property and equivalence tests: the workload of
// tools/bench/workload.hpp, with every parameter drawn from ranges (small clusters by default), so that a
// seed names one scenario.

#include <cstdint>
#include <random>

#include "tools/bench/workload.hpp"

namespace rmbus::test {

struct spec_ranges {
  int min_nodes = 3, max_nodes = 24;
  int min_jobs = 4, max_jobs = 50;
  int max_users = 6;
  int max_fixed_percent = 15;
  int max_reserve_percent = 8;
  int max_last_arrival_round = 5;
};

inline bench::workload_spec random_spec(std::uint32_t seed, const spec_ranges& r = {}) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  bench::workload_spec s;
  s.seed = seed;
  s.nodes = pick(r.min_nodes, r.max_nodes);
  s.jobs = pick(r.min_jobs, r.max_jobs);
  s.users = pick(1, r.max_users);
  const int quanta_gb[] = {1, 2, 4, 8, 15};
  s.quantum_mb = static_cast<std::uint64_t>(quanta_gb[pick(0, 4)]) * 1024;
  s.node_mix = {{16, pick(0, 3)}, {32, pick(0, 3)}, {48, pick(1, 3)}, {64, pick(0, 3)}};
  s.min_process_gb = pick(1, 8);
  s.max_process_gb = pick(s.min_process_gb, 40);
  s.fixed_percent = pick(0, r.max_fixed_percent);
  s.reserve_percent = pick(0, r.max_reserve_percent);
  s.last_arrival_round = pick(1, r.max_last_arrival_round);
  s.min_items = 4;
  s.max_items = pick(20, 400);
  s.min_item_ms = 1000;
  s.max_item_ms = 20000;
  s.min_init_ms = 0;
  s.max_init_ms = 30000;
  return s;
}

}  // namespace rmbus::test
