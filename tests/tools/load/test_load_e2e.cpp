// rmbus-load against the real rmbus: a tiny cluster through every phase prints every figure, and a bad
// argument is exit status 2 naming it; with --curve, the same through a CURVE bus. Loopback only, bounded in time.
#include <catch2/catch.hpp>
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "tests/support/child_process.hpp"
#include "tests/support/scratch_folder.hpp"

namespace ts = rmbus::test_support;
using namespace std::chrono_literals;

// rmbus-load's --work-dir (its configurations and the RMs' logs) is the test's scratch folder, removed with the
// test: left to itself, rmbus-load keeps a fresh folder under /tmp for whoever ran it to read.
using work_folder = ts::scratch_folder;

TEST_CASE("rmbus-load runs every phase against a real rmbus and prints every figure") {
  const work_folder dir{"rmbus-load-test"};
  const auto r = ts::run_to_end(RMBUS_LOAD_BIN,
                                {"--rmbus", RMBUS_BIN, "--nodes", "40", "--jobs", "80", "--users", "10", "--maps", "3",
                                 "--phases", "startup,intake,latency,split,pools", "--work-dir", dir.path().string()},
                                240s);
  INFO(r.output);
  REQUIRE(r.status == 0);
  for (const char* figure : {"startup: 40 nodes' first heartbeats -> all up in rm.nodes:", "intake:",
                             "raw cppzmq PUB/SUB ceiling", "latency, one process:", "memory after the latency phase",
                             "latency, roles over 3 processes:", "split / one process", "4 pools, 2 threads",
                             "4 pools, 1 thread", "nodes ever reported missing or down while heartbeating on time: 0"})
    CHECK(r.output.find(figure) != std::string::npos);
  // Every map of the latency phases was answered by the rm.state naming it.
  CHECK(r.output.find("unanswered") == std::string::npos);
}

TEST_CASE("rmbus-load events publishes each change as a delta and times every one to its rm.state") {
  const work_folder dir{"rmbus-load-test"};
  const auto r = ts::run_to_end(RMBUS_LOAD_BIN,
                                {"--rmbus", RMBUS_BIN, "--nodes", "40", "--jobs", "80", "--users", "10", "--phases",
                                 "events", "--events", "30", "--work-dir", dir.path().string()},
                                240s);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("events: 30 changes as deltas every 10 ms (15 arrivals, 15 completions) -> rm.state: median") !=
        std::string::npos);
  // Every change answered, none lost on the way (no full map asked for), and the same run's baseline.
  CHECK(r.output.find(" 0 unanswered;") != std::string::npos);
  CHECK(r.output.find("full maps the RM asked for: 0") != std::string::npos);
  CHECK(r.output.find("full map of the same cluster (median of 5):") != std::string::npos);
  // The RM's CPU over the changes, a share of one core that a live process has used some of.
  const std::string cpu = "events: the RM's CPU while the changes ran: ";
  const auto at = r.output.find(cpu);
  REQUIRE(at != std::string::npos);
  const double percent = std::stod(r.output.substr(at + cpu.size()));
  CHECK(percent > 0.0);
  CHECK(percent <= 100.0 * std::max(1u, std::thread::hardware_concurrency()) + 1.0);  // at most every core
}

TEST_CASE("rmbus-load events with --schedule-changes times every change to the rm.schedule.changes answering it") {
  const work_folder dir{"rmbus-load-test"};
  const auto r = ts::run_to_end(RMBUS_LOAD_BIN,
                                {"--rmbus", RMBUS_BIN, "--nodes", "40", "--jobs", "80", "--users", "10", "--phases",
                                 "events", "--events", "30", "--schedule-changes", "5", "--events-detail",
                                 "--work-dir", dir.path().string()},
                                240s);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("events: 30 changes as deltas every 10 ms (15 arrivals, 15 completions) -> rm.schedule.changes: "
                      "median") != std::string::npos);
  // Followed by the snapshot-and-changes rule: every change answered, full messages every 5 rounds included.
  CHECK(r.output.find(" 0 unanswered;") != std::string::npos);
  CHECK(r.output.find("full maps the RM asked for: 0") != std::string::npos);
  // And how large each answer was.
  CHECK(r.output.find("events: jobs each rm.schedule.changes listed (changed, new or removed): median") !=
        std::string::npos);
  // --events-detail: a line per change, in order, arrivals and completions taking turns, each with its latency;
  // and a line per round with its stages.
  std::istringstream lines{r.output};
  std::string line;
  int changes = 0, rounds = 0;
  while (std::getline(lines, line)) {
    const std::string change = "events: change " + std::to_string(changes) + " (";
    if (line.rfind(change, 0) == 0) {
      const char* kind = changes % 2 == 0 ? "arrival, map " : "completion, map ";
      CHECK(line.compare(change.size(), std::string{kind}.size(), kind) == 0);
      const auto colon = line.rfind("): ");
      REQUIRE(colon != std::string::npos);
      CHECK(std::stod(line.substr(colon + 3)) >= 0.0);
      CHECK(line.substr(line.size() - 3) == " ms");
      ++changes;
    } else if (line.rfind("events: round " + std::to_string(rounds) + ": ", 0) == 0) {
      CHECK(line.find(" ms (How Much ") != std::string::npos);
      CHECK(line.find(", the rest ") != std::string::npos);
      ++rounds;
    }
  }
  CHECK(changes == 30);
  CHECK(rounds >= 1);
}

TEST_CASE("rmbus-load refuses a bad phase and a missing rmbus with exit status 2") {
  auto bad = ts::run_to_end(RMBUS_LOAD_BIN, {"--rmbus", RMBUS_BIN, "--phases", "startup,warp"}, 30s);
  CHECK(bad.status == 2);
  CHECK(bad.output.find("unknown phase 'warp'") != std::string::npos);
  auto missing = ts::run_to_end(RMBUS_LOAD_BIN, {"--rmbus", "/nonexistent/rmbus"}, 30s);
  CHECK(missing.status == 2);
  CHECK(missing.output.find("no rmbus executable") != std::string::npos);
}

TEST_CASE("rmbus-load --preemption-policy sets the RM's policy and refuses an unknown one") {
  const work_folder folder{"rmbus-load-test"};
  const auto dir = folder.path().string();
  const auto r = ts::run_to_end(RMBUS_LOAD_BIN,
                                {"--rmbus", RMBUS_BIN, "--nodes", "40", "--jobs", "80", "--users", "10", "--phases",
                                 "startup", "--preemption-policy", "sparing", "--work-dir", dir},
                                240s);
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::ifstream config{dir + "/one.toml"};
  std::stringstream text;
  text << config.rdbuf();
  CHECK(text.str().find("preemption_policy = \"sparing\"") != std::string::npos);
  const auto bad = ts::run_to_end(RMBUS_LOAD_BIN, {"--rmbus", RMBUS_BIN, "--preemption-policy", "greedy"}, 30s);
  CHECK(bad.status == 2);
  CHECK(bad.output.find("--preemption-policy") != std::string::npos);
}

TEST_CASE("rmbus-load --curve drives a CURVE bus: its own keys, every RM process its own rm key") {
  const work_folder folder{"rmbus-load-test"};
  const auto dir = folder.path().string();
  const auto r = ts::run_to_end(RMBUS_LOAD_BIN,
                                {"--rmbus", RMBUS_BIN, "--nodes", "40", "--jobs", "80", "--users", "10", "--maps", "3",
                                 "--phases", "intake,latency,split", "--curve", "--work-dir", dir},
                                240s);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("with CURVE") != std::string::npos);
  for (const char* figure : {"intake:", "latency, one process:", "latency, roles over 3 processes:"})
    CHECK(r.output.find(figure) != std::string::npos);
  CHECK(r.output.find("unanswered") == std::string::npos);
  // The raw ceiling's messages passed the forwarder's role check (an rm.* topic from a key with the rm role).
  CHECK(r.output.find("same forwarder: 0/s") == std::string::npos);
  // The configurations it wrote turn CURVE on, with the keys it made.
  std::ifstream config{dir + "/one.toml"};
  std::stringstream text;
  text << config.rdbuf();
  CHECK(text.str().find("[security]\ncurve = true\nkey = \"" + dir + "/curve/rmbus.key\"") != std::string::npos);
  std::ifstream keys{dir + "/curve/keys"};
  std::stringstream listed;
  listed << keys.rdbuf();
  for (const char* line : {"rm rmbus ", "rm rmbus-2 ", "rm rmbus-3 ", "agent,orchestrator,rm load "})
    CHECK(listed.str().find(line) != std::string::npos);
}
