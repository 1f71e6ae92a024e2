// Scenario files: every key read with its default, `count` expansion, class and node checks, and errors that
// name file, line, column and what is wrong (all of them at once). Also: the shipped scenarios parse, the
// built-in class table matches rmbus's embedded default, tools/sim/rmbus-sim.toml differs from the embedded
// default only in timing, and the random generator is deterministic.

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "config/embedded_default.hpp"
#include "config/loader.hpp"
#include "tools/sim/random_scenario.hpp"
#include "tools/sim/scenario.hpp"

using namespace rmbus::sim;
namespace msg = rmbus::messages;

namespace {

std::vector<std::string> problems_of(const std::string& text) {
  try {
    parse_scenario(text, "s.toml");
  } catch (const scenario_error& e) {
    return e.problems();
  }
  return {};
}

const std::string minimal = R"(
[cluster]
nodes = "2x16G"

[[job]]
user = "alice"
memory = "4G"
items = 100
)";

}  // namespace

TEST_CASE("scenario: a minimal file takes every default") {
  const scenario sc = parse_scenario(minimal, "s.toml");
  CHECK(sc.name == "scenario");
  CHECK(sc.seed == 1);
  CHECK_FALSE(sc.duration_ms.has_value());
  CHECK(sc.cluster.nodes.size() == 2);
  CHECK(sc.cluster.heartbeat_ms == 200);
  CHECK(sc.cluster.jitter_ms == 50);
  CHECK(sc.cluster.quantum_mb == 1024);
  CHECK(sc.orchestrator == orchestrator_spec{250, 500, 5000, 1000, 0});
  REQUIRE(sc.jobs.size() == 1);
  const job_spec& j = sc.jobs[0];
  CHECK(j.id == "alice-1");  // no id: <user>-<n>
  CHECK(j.at_ms == 0);
  CHECK(j.class_name.empty());
  CHECK(j.kind == msg::work_kind::job);
  CHECK(j.memory_mb == 4096);
  CHECK(j.items == 100);
  CHECK(j.threads == 1);
  CHECK(j.item_ms == 1000);
  CHECK(j.init_ms == 5000);  // the orchestrator's init_ms
  CHECK(j.max_processes == 0);
  CHECK(sc.classes == embedded_default_classes());
}

TEST_CASE("scenario: every key is read") {
  const scenario sc = parse_scenario(R"(
name = "full"
description = "all keys"
seed = 42
duration_s = 90.5

[cluster]
nodes = "3x32G@default:n"
heartbeat_ms = 100
jitter_ms = 10
quantum = "2G"

[orchestrator]
publish_ms = 500
start_ms = 200
init_ms = 3000
preempt_exit_ms = 700
evict_exit_ms = 50

[class.gold]
policy = "FAIR_SHARE"
weight = 300
priority = 8
nodepool = "bigmem"

[class.normal]
weight = 120

[[job]]
at_s = 1.25
id = "big"
user = "bob"
class = "gold"
kind = "job"
memory = 6144
items = 10
threads = 2
item_ms = 1500
init_ms = 2500
max_processes = 4
count = 3
every_s = 10

[[job]]
at_s = 2
end_s = 50
user = "carol"
kind = "reservation"
memory = "32G"

[[failure]]
node = "n-002"
down_at_s = 30
up_at_s = 60
flap_s = 5
)",
                                     "full.toml");
  CHECK(sc.name == "full");
  CHECK(sc.description == "all keys");
  CHECK(sc.seed == 42);
  CHECK(sc.duration_ms == 90500);
  CHECK(sc.cluster.nodes_description == "3x32G@default:n");
  CHECK(sc.cluster.nodes.back() == node_def{"n-003", 32768, "default"});
  CHECK(sc.cluster.heartbeat_ms == 100);
  CHECK(sc.cluster.jitter_ms == 10);
  CHECK(sc.cluster.quantum_mb == 2048);
  CHECK(sc.orchestrator == orchestrator_spec{500, 200, 3000, 700, 50});
  const auto gold =
      std::find_if(sc.classes.begin(), sc.classes.end(), [](const auto& c) { return c.name == "gold"; });
  REQUIRE(gold != sc.classes.end());
  CHECK(*gold == class_spec{"gold", class_policy::fair_share, 300, 8, false, "bigmem"});
  // [class.normal] overrides only the weight of the built-in class: still the default, priority 10.
  const auto normal =
      std::find_if(sc.classes.begin(), sc.classes.end(), [](const auto& c) { return c.name == "normal"; });
  CHECK(*normal == class_spec{"normal", class_policy::fair_share, 120, 10, true});

  // count = 3, every_s = 10: ids big-1..3 at 1.25 s, 11.25 s, 21.25 s; sorted by time with carol's at 2 s.
  REQUIRE(sc.jobs.size() == 4);
  CHECK(sc.jobs[0].id == "big-1");
  CHECK(sc.jobs[0].at_ms == 1250);
  CHECK(sc.jobs[1].id == "carol-1");
  CHECK(sc.jobs[2].id == "big-2");
  CHECK(sc.jobs[2].at_ms == 11250);
  CHECK(sc.jobs[3].at_ms == 21250);
  const job_spec& b = sc.jobs[0];
  CHECK(b.user == "bob");
  CHECK(b.class_name == "gold");
  CHECK(b.memory_mb == 6144);
  CHECK(b.items == 10);
  CHECK(b.threads == 2);
  CHECK(b.item_ms == 1500);
  CHECK(b.init_ms == 2500);
  CHECK(b.max_processes == 4);
  const job_spec& r = sc.jobs[1];
  CHECK(r.kind == msg::work_kind::reservation);
  CHECK(r.end_ms == 50000);
  CHECK(r.init_ms == 0);  // a reservation initializes nothing unless told
  CHECK(r.items == 0);
  REQUIRE(sc.failures.size() == 1);
  CHECK(sc.failures[0] == failure_spec{"n-002", 30000, 60000, 5000});
}

TEST_CASE("scenario: errors carry file, line and column, all at once") {
  const auto p = problems_of(R"(name = "bad"
colour = "blue"

[cluster]
nodes = "2x16G"
heartbeat_ms = 5

[[job]]
user = "alice"
memory = true
items = 0
speed = 3

[[job]]
user = "bob"
class = "gold"
memory = "4X"
)");
  // Line 2 is `colour = ...`; line 6 `heartbeat_ms = 5`; the first [[job]] has memory at 10, items at 11 and
  // speed at 12; the second (its header on line 14) has class at 16, memory at 17 and no items. Columns are
  // where the value starts.
  const std::vector<std::string> expected = {
      "s.toml:2:10: the top level: unknown key 'colour' (allowed: name, description, seed, duration_s, "
      "cluster, "
      "orchestrator, class, job, failure)",
      "s.toml:6:16: cluster.heartbeat_ms: 5 is out of range [10, 60000]",
      "s.toml:12:9: job[0]: unknown key 'speed' (allowed: at_s, id, user, class, kind, memory, items, "
      "threads, "
      "item_ms, init_ms, max_processes, count, every_s, end_s)",
      "s.toml:10:10: job[0].memory: expected a size like \"4G\" or an integer number of MB, got a boolean",
      "s.toml:11:9: job[0].items: 0 is out of range [1, 1000000000]",
  };
  REQUIRE(p.size() == 8);
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK(p[i] == expected[i]);
  CHECK(p[5].rfind("s.toml:16:9: job[1].class: unknown class 'gold' (known: background, low, normal,", 0) ==
        0);
  CHECK(p[6] ==
        "s.toml:17:10: job[1].memory: '4X' is not a size (expected e.g. \"4G\" or \"512M\", or an integer "
        "number of MB)");
  CHECK(p[7] == "s.toml:14:1: job[1]: missing required key 'items'");
}

TEST_CASE("scenario: TOML syntax errors name the line") {
  const auto p = problems_of("[cluster]\nnodes = \"2x16G\"\n[[job]\nuser = 1\n");
  REQUIRE(p.size() == 1);
  CHECK(p[0].rfind("s.toml:3:", 0) == 0);
  CHECK(p[0].find("TOML syntax") != std::string::npos);
}

TEST_CASE("scenario: missing pieces are named") {
  // An empty document: its root table starts at 1:1.
  CHECK(problems_of("") ==
        std::vector<std::string>{
            "s.toml:1:1: missing the [cluster] table (it needs at least `nodes`)",
            "s.toml:1:1: no [[job]] entries: a scenario needs at least one piece of work"});
  const auto p = problems_of("[cluster]\nnodes = \"2x16G\"\n\n[[job]]\nmemory = \"4G\"\n");
  // A missing key is blamed on its table (the [[job]] header on line 4).
  REQUIRE(p.size() == 2);
  CHECK(p[0] == "s.toml:4:1: job[0]: missing required key 'user'");
  CHECK(p[1] == "s.toml:4:1: job[0]: missing required key 'items'");
}

TEST_CASE("scenario: rules between keys") {
  const std::string cluster = "[cluster]\nnodes = \"2x16G\"\n";
  // Line numbers below count from the cluster's two lines.
  CHECK(problems_of(cluster + "[[job]]\nuser = \"a\"\nmemory = \"4G\"\nitems = 5\nend_s = 9\n") ==
        std::vector<std::string>{
            "s.toml:7:9: job[0].end_s: only services, APs and reservations have an end time; a job "
            "ends when its items are done"});
  CHECK(problems_of(cluster + "[[job]]\nuser = \"a\"\nkind = \"service\"\nmemory = \"4G\"\nitems = 5\n") ==
        std::vector<std::string>{"s.toml:7:9: job[0].items: only jobs (kind = \"job\") have work items"});
  CHECK(problems_of(cluster + "[[job]]\nuser = \"a\"\nkind = \"daemon\"\nmemory = \"4G\"\n") ==
        std::vector<std::string>{
            "s.toml:5:8: job[0].kind: unknown value 'daemon' (expected job, service, ap or reservation)"});
  CHECK(problems_of(cluster +
                    "[[job]]\nat_s = 10\nend_s = 5\nuser = \"a\"\nkind = \"ap\"\nmemory = \"4G\"\n") ==
        std::vector<std::string>{"s.toml:5:9: job[0].end_s: must be after the arrival (at_s) of copy 1"});
  CHECK(problems_of(cluster + "[[job]]\nid = \"x\"\nuser = \"a\"\nmemory = \"4G\"\nitems = 1\n[[job]]\nid = "
                              "\"x\"\nuser = \"b\"\nmemory = \"4G\"\nitems = 1\n") ==
        std::vector<std::string>{"s.toml:8:1: job[1]: job id 'x' is already used by the job at line 3"});
  CHECK(problems_of("[cluster]\nnodes = \"2x16G\"\nheartbeat_ms = 100\njitter_ms = 100\n[[job]]\nuser = "
                    "\"a\"\nmemory = 1\nitems = 1\n") ==
        std::vector<std::string>{"s.toml:4:13: cluster.jitter_ms: must be below cluster.heartbeat_ms (100)"});
  CHECK(problems_of("[cluster]\nnodes = \"2x16Q\"\n[[job]]\nuser = \"a\"\nmemory = 1\nitems = 1\n") ==
        std::vector<std::string>{"s.toml:2:9: cluster.nodes: node description \"2x16Q\": group \"2x16Q\": "
                                 "size \"16Q\" needs a G or M suffix"});
}

TEST_CASE("scenario: failures must name a node of the cluster and be ordered in time") {
  const std::string head = "[cluster]\nnodes = \"2x16G\"\n[[job]]\nuser = \"a\"\nmemory = 1\nitems = 1\n";
  CHECK(problems_of(head + "[[failure]]\nnode = \"node-009\"\ndown_at_s = 1\n") ==
        std::vector<std::string>{"s.toml:8:8: failure[0].node: no node 'node-009' in the cluster (its nodes "
                                 "are node-001 .. node-002)"});
  CHECK(problems_of(head + "[[failure]]\nnode = \"node-001\"\ndown_at_s = 5\nup_at_s = 5\n") ==
        std::vector<std::string>{"s.toml:10:11: failure[0].up_at_s: must be after down_at_s"});
  CHECK(
      problems_of(head + "[[failure]]\nnode = \"node-001\"\ndown_at_s = 5\nflap_s = 0.05\n") ==
      std::vector<std::string>{"s.toml:10:10: failure[0].flap_s: 0.05 s is out of range [0.1, 2.592e+06] s"});
}

TEST_CASE("scenario: class tables are checked") {
  const std::string tail = "[cluster]\nnodes = \"2x16G\"\n[[job]]\nuser = \"a\"\nmemory = 1\nitems = 1\n";
  CHECK(problems_of("[class.gold]\npolicy = \"FAIRSHARE\"\n" + tail) ==
        std::vector<std::string>{"s.toml:2:10: class.gold.policy: unknown value 'FAIRSHARE' (expected "
                                 "FAIR_SHARE, FIXED_SHARE or RESERVE)"});
  CHECK(problems_of("[class.gold]\nweight = 0\nshare = 1\n" + tail) ==
        std::vector<std::string>{
            "s.toml:3:9: [class.gold]: unknown key 'share' (allowed: policy, weight, priority, default, "
            "nodepool)",
            "s.toml:2:10: class.gold.weight: 0 is out of range [1, 1000000]"});
  // The nodepool is a name the RM's configuration could hold; the class is kept with the rest of its keys.
  CHECK(problems_of("[class.gold]\nnodepool = \"big mem\"\n" + tail) ==
        std::vector<std::string>{
            "s.toml:2:12: class.gold.nodepool: a nodepool name is letters, digits, '-', '_', '.' or '@'"});
}

TEST_CASE("scenario: the default class for a kind follows rmbus's rule") {
  const auto classes = embedded_default_classes();
  CHECK(class_of(classes, "", msg::work_kind::job)->name == "normal");
  CHECK(class_of(classes, "", msg::work_kind::service)->name == "reserve");  // RESERVE first for other kinds
  CHECK(class_of(classes, "", msg::work_kind::reservation)->name == "reserve");
  CHECK(class_of(classes, "high", msg::work_kind::job)->weight == 200);
  CHECK(class_of(classes, "nope", msg::work_kind::job) == nullptr);
}

TEST_CASE("scenario: the built-in class table is rmbus's embedded default") {
  const auto cfg = rmbus::config::embedded_default();
  std::vector<class_spec> from_config;
  for (const auto& c : cfg.scheduling.classes) {
    class_policy p = class_policy::fair_share;
    if (c.policy == rmbus::core::policy::fixed_share) p = class_policy::fixed_share;
    if (c.policy == rmbus::core::policy::reserve) p = class_policy::reserve;
    // Weights only matter for fair-share classes; the resolved config may carry any weight on the others.
    const int weight = p == class_policy::fair_share ? c.weight : 100;
    from_config.push_back({c.name, p, weight, c.priority, c.is_default});
  }
  auto by_name = [](const class_spec& a, const class_spec& b) { return a.name < b.name; };
  auto ours = embedded_default_classes();
  for (auto& c : ours)
    if (c.policy != class_policy::fair_share) c.weight = 100;
  std::sort(from_config.begin(), from_config.end(), by_name);
  std::sort(ours.begin(), ours.end(), by_name);
  CHECK(ours == from_config);
}

TEST_CASE("scenario: rmbus-sim.toml is the embedded default with short timings") {
  const auto fast = rmbus::config::load_native(std::string(RMBUS_SIM_DIR) + "/rmbus-sim.toml");
  auto def = rmbus::config::embedded_default();
  // The scheduling epoch is derived from the orchestrator period (a timing), so it differs by design.
  CHECK(def.scheduling.settings.epoch_ms == 10000);
  CHECK(fast.scheduling.settings.epoch_ms == 250);
  def.scheduling.settings.epoch_ms = 250;
  CHECK(fast.scheduling == def.scheduling);
  CHECK(fast.runtime.heartbeat_interval_ms == 300);
  CHECK(fast.runtime.node_stability == 4);
  CHECK(fast.runtime.orchestrator_publish_ms == 250);
}

TEST_CASE("scenario: rmbus-sim-grace.toml is rmbus-sim.toml with a reclaim grace on every FAIR_SHARE class") {
  const auto fast = rmbus::config::load_native(std::string(RMBUS_SIM_DIR) + "/rmbus-sim.toml");
  auto grace = rmbus::config::load_native(std::string(RMBUS_SIM_DIR) + "/rmbus-sim-grace.toml");
  int graced = 0;
  for (auto& c : grace.scheduling.classes) {
    INFO(c.name);
    if (c.policy == rmbus::core::policy::fair_share) {
      CHECK(c.reclaim_grace_ms == 2000);
      ++graced;
    }
    c.reclaim_grace_ms = 0;
  }
  CHECK(graced == 7);  // background, low, normal, high, weekly, urgent, standalone
  CHECK(grace.scheduling == fast.scheduling);
  CHECK(grace.runtime == fast.runtime);
}

TEST_CASE("scenario: rmbus-sim-sparing.toml is rmbus-sim.toml with the sparing preemption policy") {
  const auto fast = rmbus::config::load_native(std::string(RMBUS_SIM_DIR) + "/rmbus-sim.toml");
  auto sparing = rmbus::config::load_native(std::string(RMBUS_SIM_DIR) + "/rmbus-sim-sparing.toml");
  CHECK(fast.scheduling.settings.preemption_policy == rmbus::core::preemption_policy::ducc);
  CHECK(sparing.scheduling.settings.preemption_policy == rmbus::core::preemption_policy::sparing);
  sparing.scheduling.settings.preemption_policy = rmbus::core::preemption_policy::ducc;
  CHECK(sparing.scheduling == fast.scheduling);
  CHECK(sparing.runtime == fast.runtime);
}

TEST_CASE("scenario: every shipped scenario parses and fits the embedded default") {
  std::set<std::string> seen;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(RMBUS_SIM_DIR) + "/scenarios")) {
    if (entry.path().extension() != ".toml") continue;
    INFO(entry.path().string());
    const scenario sc = load_scenario_file(entry.path().string());
    seen.insert(sc.name);
    CHECK(sc.name + ".toml" == entry.path().filename().string());
    CHECK_FALSE(sc.jobs.empty());
    for (const auto& j : sc.jobs) CHECK(class_of(sc.classes, j.class_name, j.kind) != nullptr);
    // The built-in classes only: the scenarios must run against rmbus's embedded default as it is.
    CHECK(sc.classes == embedded_default_classes());
  }
  CHECK(seen == std::set<std::string>{"two-users", "weighted-classes", "priorities", "reservation",
                                      "fragmentation", "node-failure", "mixed"});
}

TEST_CASE("scenario: a file that does not name itself is named after the file") {
  char dir[] = "/tmp/rmbus-sim-scenario-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/my-case.toml";
  std::ofstream{path} << minimal;
  CHECK(load_scenario_file(path).name == "my-case");
  std::filesystem::remove_all(dir);
}

TEST_CASE("scenario: an unreadable file is a scenario error") {
  try {
    load_scenario_file("/nonexistent/x.toml");
    FAIL("no error");
  } catch (const scenario_error& e) {
    CHECK(e.problems() == std::vector<std::string>{"/nonexistent/x.toml: cannot open the scenario file"});
  }
}

TEST_CASE("random scenario: the same seed gives the same scenario, another seed another") {
  random_spec spec;
  spec.seed = 7;
  spec.jobs = 50;
  spec.users = 4;
  const scenario a = random_scenario(spec), b = random_scenario(spec);
  CHECK(a == b);
  spec.seed = 8;
  CHECK_FALSE(random_scenario(spec).jobs == a.jobs);
  REQUIRE(a.jobs.size() == 50);
  std::set<std::string> users, ids;
  for (const auto& j : a.jobs) {
    users.insert(j.user);
    ids.insert(j.id);
    CHECK(j.items >= 200);
    CHECK(j.items <= 4000);
    CHECK(j.item_ms >= 500);
    CHECK(j.item_ms <= 4000);
    CHECK(j.init_ms >= 1000);
    CHECK(j.init_ms <= 8000);
    CHECK((j.threads == 1 || j.threads == 2 || j.threads == 4));
    CHECK((j.memory_mb == 2048 || j.memory_mb == 4096 || j.memory_mb == 8192));
    CHECK(j.max_processes <= 16);
    CHECK(j.at_ms < 60000);
    CHECK(class_of(a.classes, j.class_name, j.kind) != nullptr);
  }
  CHECK(ids.size() == 50);  // unique ids
  CHECK(users.size() <= 4);
  CHECK(std::is_sorted(a.jobs.begin(), a.jobs.end(),
                       [](const auto& x, const auto& y) { return x.at_ms < y.at_ms; }));
}

TEST_CASE("random scenario: the first draws of seed 1 are pinned") {
  // The seed is a contract (a run can be repeated from its seed): if the drawing order or the integer mapping
  // changes, this test says so. Values read from the generator once and kept.
  random_spec spec;
  spec.seed = 1;
  spec.jobs = 3;
  const scenario sc = random_scenario(spec);
  REQUIRE(sc.jobs.size() == 3);
  CHECK(sc.name == "random-1");
  CHECK(sc.cluster.nodes.size() == 8);
  CHECK(sc.jobs[0].id == "user3-1");
  CHECK(sc.jobs[0].at_ms == 6848);
}

TEST_CASE("random scenario: bad specs are refused") {
  random_spec spec;
  spec.nodes = "8x";
  spec.jobs = 0;
  try {
    random_scenario(spec);
    FAIL("no error");
  } catch (const scenario_error& e) {
    REQUIRE(e.problems().size() == 2);
    CHECK(e.problems()[0] == "--jobs: must be in [1, 10000]");
    CHECK(e.problems()[1].rfind("--nodes: node description \"8x\"", 0) == 0);
  }
}
