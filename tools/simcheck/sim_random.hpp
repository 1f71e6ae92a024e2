#pragma once
// The one source of randomness of a simulated run: std::mt19937_64 seeded with the run's seed, so that a seed
// replays exactly. Nothing else in the simulation may draw from anywhere else (no random_device, no clock).

#include <cstdint>
#include <random>

namespace rmbus::simcheck {

class sim_random {
 public:
  explicit sim_random(std::uint64_t seed) : gen_(seed) {}
  // An integer in [lo, hi] (both included). REQUIRES: lo <= hi.
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(gen_);
  }
  // True with probability `percent` / 100.
  bool chance(int percent) { return between(0, 99) < percent; }
  std::uint64_t raw() { return gen_(); }

 private:
  std::mt19937_64 gen_;
};

}  // namespace rmbus::simcheck
