#include "tools/sim/random_scenario.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

namespace rmbus::sim {

namespace {

// Uniform in [lo, hi] by modulo. The bias (below 2^-40 for these small ranges) does not matter for a
// workload; what matters is that the mapping is ours, so a seed means the same thing everywhere.
std::int64_t uniform(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
  return lo + static_cast<std::int64_t>(rng() % span);
}

// One of the values, chosen by integer weights.
template <class T>
T weighted(std::mt19937_64& rng, const std::vector<std::pair<T, int>>& choices) {
  int total = 0;
  for (const auto& c : choices) total += c.second;
  std::int64_t pick = uniform(rng, 0, total - 1);
  for (const auto& c : choices) {
    if (pick < c.second) return c.first;
    pick -= c.second;
  }
  return choices.back().first;
}

// Log-uniform in [lo, hi]: many small jobs, a few big ones, as real workloads look.
std::int64_t log_uniform(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  // 53 random bits -> [0, 1), then exp of a uniform log; integer result clamped into range.
  const double u = static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
  const double v = std::exp(std::log(static_cast<double>(lo)) +
                            u * (std::log(static_cast<double>(hi)) - std::log(static_cast<double>(lo))));
  return std::clamp(static_cast<std::int64_t>(std::llround(v)), lo, hi);
}

}  // namespace

scenario random_scenario(const random_spec& spec) {
  std::vector<std::string> problems;
  if (spec.jobs < 1 || spec.jobs > 10000) problems.push_back("--jobs: must be in [1, 10000]");
  if (spec.users < 1 || spec.users > 1000) problems.push_back("--users: must be in [1, 1000]");
  if (spec.spread_ms < 0 || spec.spread_ms > max_scenario_ms)
    problems.push_back("arrival spread out of range");
  scenario sc;
  try {
    sc.cluster.nodes = parse_nodes(spec.nodes);
    sc.cluster.nodes_description = spec.nodes;
  } catch (const node_spec_error& e) {
    problems.push_back(std::string("--nodes: ") + e.what());
  }
  if (!problems.empty()) throw scenario_error(problems);

  sc.name = "random-" + std::to_string(spec.seed);
  sc.description = std::to_string(spec.jobs) + " random jobs of " + std::to_string(spec.users) +
                   " users on " + spec.nodes + " (seed " + std::to_string(spec.seed) + ")";
  sc.seed = spec.seed;
  sc.classes = embedded_default_classes();
  std::mt19937_64 rng{spec.seed};
  const std::vector<std::pair<std::string, int>> classes = {
      {"normal", 60}, {"high", 15}, {"low", 15}, {"urgent", 5}, {"background", 5}};
  const std::vector<std::pair<std::uint64_t, int>> memories = {{2048, 30}, {4096, 50}, {8192, 20}};
  std::vector<int> per_user(static_cast<std::size_t>(spec.users), 0);
  for (int i = 0; i < spec.jobs; ++i) {
    job_spec j;
    // Draw order is part of the seed's meaning: never reorder these lines.
    const auto user = static_cast<std::size_t>(uniform(rng, 0, spec.users - 1));
    j.user = "user" + std::to_string(user + 1);
    j.id = j.user + "-" + std::to_string(++per_user[user]);
    j.class_name = weighted(rng, classes);
    j.memory_mb = weighted(rng, memories);
    j.threads = static_cast<std::uint64_t>(std::int64_t{1} << uniform(rng, 0, 2));
    j.items = static_cast<std::uint64_t>(log_uniform(rng, 200, 4000));
    j.item_ms = uniform(rng, 500, 4000);
    j.init_ms = uniform(rng, 1000, 8000);
    j.max_processes = uniform(rng, 0, 99) < 20 ? static_cast<std::uint64_t>(uniform(rng, 1, 16)) : 0;
    j.at_ms = spec.spread_ms == 0 ? 0 : uniform(rng, 0, spec.spread_ms - 1);
    sc.jobs.push_back(std::move(j));
  }
  std::stable_sort(sc.jobs.begin(), sc.jobs.end(), [](const job_spec& a, const job_spec& b) {
    return std::tie(a.at_ms, a.id) < std::tie(b.at_ms, b.id);
  });
  return sc;
}

}  // namespace rmbus::sim
