// rmbus-sim-check: runs the seeded simulation of the RM's head with a nemesis (tools/simcheck/sim_run.hpp) for
// seeds S..S+N-1 and checks the schedule's rules after every round (round_checker.hpp).
//
//   rmbus-sim-check --seeds N [--seed S] [--rounds R] [--policy ducc|sparing] [--takeovers] [--verbose]
//
// Prints one summary line; a failing seed prints the seed, the round, the node, the rule and the recent
// history, and replays exactly with `--seed <it> --seeds 1`. Exit 0: every seed passed; 1: one failed;
// 2: a bad argument.
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "tools/simcheck/sim_run.hpp"

namespace {

using rmbus::simcheck::move_kinds;
using rmbus::simcheck::move_names;

struct options {
  std::uint64_t seeds = 0;
  std::uint64_t first_seed = 1;
  int rounds = rmbus::simcheck::run_settings{}.rounds;
  bool sparing = false;
  bool takeovers = false;
  bool verbose = false;
};

std::optional<std::uint64_t> parse_count(std::string_view text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

int usage_error(const std::string& what) {
  std::cerr << "rmbus-sim-check: " << what << "\n"
            << "usage: rmbus-sim-check --seeds N [--seed S] [--rounds R] [--policy ducc|sparing] [--takeovers] "
               "[--verbose]\n";
  return 2;
}

void print_failure(const rmbus::simcheck::run_result& r, const options& o) {
  const auto& v = *r.failure;
  std::cout << "FAILED seed " << r.seed << ": round " << v.round << ", node " << (v.node.empty() ? "-" : v.node)
            << ", rule " << v.rule << ": " << v.detail << "\n"
            << "  replay: rmbus-sim-check --seed " << r.seed << " --seeds 1"
            << (o.rounds != options{}.rounds ? " --rounds " + std::to_string(o.rounds) : std::string{})
            << (o.sparing ? " --policy sparing" : "") << (o.takeovers ? " --takeovers" : "") << "\n  history:\n";
  for (const auto& line : r.history) std::cout << "    " << line << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  bool seeds_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--verbose") {
      o.verbose = true;
      continue;
    }
    if (arg == "--takeovers") {
      o.takeovers = true;
      continue;
    }
    if (arg == "--policy") {
      if (i + 1 >= argc) return usage_error("--policy needs a value");
      const std::string_view policy = argv[++i];
      if (policy != "ducc" && policy != "sparing")
        return usage_error("--policy takes ducc or sparing, not '" + std::string(policy) + "'");
      o.sparing = policy == "sparing";
      continue;
    }
    if (arg != "--seeds" && arg != "--seed" && arg != "--rounds") return usage_error("unknown argument '" + std::string(arg) + "'");
    if (i + 1 >= argc) return usage_error(std::string(arg) + " needs a value");
    const auto value = parse_count(argv[++i]);
    if (!value) return usage_error(std::string(arg) + " takes a whole number, not '" + argv[i] + "'");
    if (arg == "--seeds") {
      if (*value == 0) return usage_error("--seeds must be at least 1");
      o.seeds = *value;
      seeds_given = true;
    } else if (arg == "--seed") {
      o.first_seed = *value;
    } else {
      // The nemesis needs some rounds, and the quiet rounds at the end (20) come on top of them.
      if (*value < 25 || *value > 100000) return usage_error("--rounds must be between 25 and 100000");
      o.rounds = static_cast<int>(*value);
    }
  }
  if (!seeds_given) return usage_error("--seeds is required");

  const auto started = std::chrono::steady_clock::now();  // for the summary only: the runs read no clock
  std::uint64_t failures = 0, rounds = 0, guard_refusals = 0, unexplained = 0, repairs = 0;
  std::array<std::uint64_t, move_kinds> moves{};
  for (std::uint64_t k = 0; k < o.seeds; ++k) {
    rmbus::simcheck::run_settings s;
    s.seed = o.first_seed + k;
    s.rounds = o.rounds;
    s.sparing = o.sparing;
    s.takeovers = o.takeovers;
    const auto r = rmbus::simcheck::run_seed(s);
    rounds += static_cast<std::uint64_t>(r.rounds_run);
    guard_refusals += r.guard_refusals;
    unexplained += r.guard_refusals_unexplained;
    repairs += r.repairs;
    for (std::size_t m = 0; m < move_kinds; ++m) moves[m] += r.moves[m];
    if (r.failure) {
      ++failures;
      print_failure(r, o);
    } else if (o.verbose) {
      std::cout << "seed " << r.seed << ": passed, " << r.rounds_run << " rounds, " << r.repairs << " repairs, guard refusals "
                << r.guard_refusals << " (" << r.guard_refusals_unexplained << " without a late start)\n";
      if (o.seeds == 1)
        for (const auto& line : r.history) std::cout << "    " << line << "\n";
    }
  }
  const auto wall_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  std::cout << "rmbus-sim-check: seeds " << o.seeds << " (from " << o.first_seed << "), failures " << failures
            << ", rounds " << rounds << ", guard refusals " << guard_refusals << " (" << unexplained << " without a late start)"
            << ", repairs " << repairs << ", moves";
  for (std::size_t m = 0; m < move_kinds; ++m) std::cout << " " << move_names[m] << "=" << moves[m];
  std::cout << ", wall " << wall_ms << " ms\n";
  return failures == 0 ? 0 : 1;
}
