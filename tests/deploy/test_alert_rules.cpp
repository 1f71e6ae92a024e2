// The Prometheus alert rules (deploy/prometheus/rmbus-alerts.yml) through Debian's promtool: the rules load,
// their unit tests (rmbus-alerts.test.yml) pass, every alert has a case where it fires and one where it stays
// silent, and the unit tests fail when a rule is made wrong (so they test something).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>

#include "tests/support/child_process.hpp"

namespace fs = std::filesystem;
using rmbus::test_support::run_to_end;
using namespace std::chrono_literals;

namespace {

const fs::path rules_dir = fs::path{RMBUS_SOURCE_DIR} / "deploy" / "prometheus";
const fs::path rules_file = rules_dir / "rmbus-alerts.yml";
const fs::path tests_file = rules_dir / "rmbus-alerts.test.yml";

std::string slurp(const fs::path& p) {
  std::ifstream in{p};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

std::string promtool() {
  const std::string path = RMBUS_PROMTOOL;
  if (path.empty())
    FAIL("promtool not found: install Debian's prometheus package (tools/install-deps.sh does)");
  return path;
}

// A scratch folder of its own per test process, removed at the end.
struct scratch_dir {
  fs::path path = fs::temp_directory_path() / ("rmbus-alert-rules-" + std::to_string(::getpid()));
  scratch_dir() { fs::create_directories(path); }
  ~scratch_dir() { fs::remove_all(path); }
};

std::set<std::string> alert_names(const std::string& rules_text) {
  std::set<std::string> names;
  const std::regex alert_line{R"(^\s*- alert:\s*(\S+)\s*$)", std::regex::multiline};
  for (auto it = std::sregex_iterator(rules_text.begin(), rules_text.end(), alert_line);
       it != std::sregex_iterator{}; ++it)
    names.insert((*it)[1]);
  return names;
}

}  // namespace

TEST_CASE("promtool check rules accepts the shipped alert rules, with every alert the issue asks for") {
  const auto r = run_to_end(promtool(), {"check", "rules", rules_file.string()}, 60s);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("SUCCESS: 10 rules found") != std::string::npos);
  const auto names = alert_names(slurp(rules_file));
  for (const char* wanted :
       {"RmbusDown", "RmbusNoRoundPublished", "RmbusRoundOverBudget", "RmbusMissingNodesJump",
        "RmbusMassLoss", "RmbusGuardRefusedPlan", "RmbusNoActive", "RmbusTwoActives", "RmbusTakeoverFlapping", "RmbusHaRankConflict"}) {
    INFO(wanted);
    CHECK(names.count(wanted) == 1);
  }
}

TEST_CASE("promtool test rules: the shipped unit tests of the alert rules pass") {
  // promtool resolves rule_files relative to the test file's folder.
  const auto r = run_to_end(promtool(), {"test", "rules", tests_file.string()}, 60s);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("SUCCESS") != std::string::npos);
  CHECK(r.output.find("FAILED") == std::string::npos);
}

TEST_CASE("every alert has a unit test where it fires and one where it stays silent") {
  // The test file's alert_rule_test entries, read as YAML by Debian's Python (python3-yaml).
  const char* script = R"PY(
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
for group in doc["tests"]:
    for case in group.get("alert_rule_test", []):
        print(case["alertname"], "fires" if case.get("exp_alerts") else "silent")
)PY";
  scratch_dir dir;
  std::ofstream{dir.path / "cases.py"} << script;
  const auto r = run_to_end("/usr/bin/python3", {(dir.path / "cases.py").string(), tests_file.string()}, 60s);
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::set<std::string> fires, silent;
  std::istringstream lines{r.output};
  for (std::string name, what; lines >> name >> what;) (what == "fires" ? fires : silent).insert(name);
  for (const auto& alert : alert_names(slurp(rules_file))) {
    INFO("alert " << alert);
    CHECK(fires.count(alert) == 1);
    CHECK(silent.count(alert) == 1);
  }
}

TEST_CASE("the unit tests fail when a rule is made wrong") {
  // Each mutation breaks one rule the way a careless edit might: too eager, too late, looking at the wrong
  // series. The shipped unit tests, run against the mutated copy, must fail.
  struct mutation {
    std::string what, from, to;
  };
  const std::vector<mutation> mutations{
      {"missing nodes: a jump of 1 node pages", ">= 3)", ">= 1)"},
      {"missing nodes: 1% of the cluster pages", "0.1 * sum without", "0.01 * sum without"},
      {"no round: processes that never publish are judged", "and rmbus_rounds_total > 0",
       "and rmbus_rounds_total >= 0"},
      {"no round: HA standbys (a demoted former active, a standby's growing lag) judged",
       "unless on (job, instance) rmbus_ha_role == 0", "unless on (job, instance) rmbus_ha_role == 2"},
      {"no round: lag threshold of 20 s", "rmbus_round_lag_ms > 120000", "rmbus_round_lag_ms > 20000"},
      {"round budget: every phase counted", "{phase=\"total\"}", ""},
      {"mass loss: the wrong event kind", "kind=\"mass_loss\"", "kind=\"mass_loss_over\""},
      {"rank conflict: the wrong counter", "increase(rmbus_ha_rank_conflicts_total[10m])",
       "increase(rmbus_ha_takeovers_total[10m])"},
      {"guard: fires on the counter's value, not its increase", "increase(rmbus_guard_refusals_total[10m]) > 0",
       "rmbus_guard_refusals_total >= 0"},
      {"no active: judged by the lowest role", "max by (job) (rmbus_ha_role) == 0",
       "min by (job) (rmbus_ha_role) == 0"},
      {"two actives: one active fires", "(rmbus_ha_role == 1) > 1", "(rmbus_ha_role == 1) > 0"},
      {"down: no pending time", "up{job=\"rmbus\"} == 0\n        for: 1m",
       "up{job=\"rmbus\"} == 0\n        for: 0m"},
  };
  const std::string original = slurp(rules_file);
  scratch_dir dir;
  fs::copy_file(tests_file, dir.path / "rmbus-alerts.test.yml");
  for (const auto& m : mutations) {
    INFO("mutation: " << m.what);
    const auto at = original.find(m.from);
    REQUIRE(at != std::string::npos);
    std::string mutated = original;
    mutated.replace(at, m.from.size(), m.to);
    std::ofstream{dir.path / "rmbus-alerts.yml", std::ios::trunc} << mutated;
    const auto r =
        run_to_end(promtool(), {"test", "rules", (dir.path / "rmbus-alerts.test.yml").string()}, 60s);
    INFO(r.output);
    CHECK(r.status.has_value());
    CHECK(r.status != 0);
    CHECK(r.output.find("FAILED") != std::string::npos);
  }
}

TEST_CASE("promtool check rules rejects a rule with a broken expression and names the file") {
  scratch_dir dir;
  const auto bad = dir.path / "broken-rules.yml";
  std::ofstream{bad} << "groups:\n  - name: rmbus\n    rules:\n      - alert: RmbusBroken\n"
                        "        expr: increase(rmbus_rounds_total[2m] == 0\n";
  const auto r = run_to_end(promtool(), {"check", "rules", bad.string()}, 60s);
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("broken-rules.yml") != std::string::npos);
  CHECK(r.output.find("FAILED") != std::string::npos);
}
