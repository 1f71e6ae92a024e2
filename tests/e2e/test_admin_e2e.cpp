// rmbus-admin against the real rmbus (issue 17): every action says what it did, per node, with an exit code
// that tells full success (0), partial success (5) and refusal (1) apart; --json on every command parses and
// carries the documented keys (docs/admin.md); the compact tables; the outcome in the RM's log; refused work
// explained; and finding the RM: --config, $RMBUS_ADMIN, DUCC's command names, did-you-mean, a bad endpoint
// and a silent one.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "messages/rm_state.hpp"
#include "tests/e2e/admin_json.hpp"
#include "tests/e2e/file_waits.hpp"
#include "tests/e2e/rm_fixture.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::job;
using rmbus::e2e::layout;
using rmbus::e2e::rm_fixture;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;
using nlohmann::json;

namespace {

constexpr auto deadline = 60s;

json json_of(const ts::run_result& r) { return rmbus::e2e::admin_json(r.output); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE(
    "vary-off naming an unknown node: the known one is varied, per-node results and evictions, exit 5") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 1024, 32));
  REQUIRE(
      c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 32; }, deadline));
  const std::string node = ts::nodes_of(*c.last_state(), "alice-1").front();

  const auto partial = f.admin({"--json", "vary-off", node, "node-999"});
  INFO(partial.output);
  CHECK(partial.status == std::optional<int>{5});
  const auto j = json_of(partial);
  CHECK(j.at("ok") == false);
  CHECK(j.at("error") == "unknown node(s): node-999");
  CHECK(j.at("nodes") == json::array({node}));
  CHECK(j.at("unknown") == json::array({"node-999"}));
  CHECK(j.at("already") == json::array());
  // Every one of alice's 8 processes on that node (order 1 on an order-8 node) is named as evicted.
  REQUIRE(j.at("evicted").size() == 8);
  for (const auto& e : j.at("evicted")) {
    CHECK(e.at("node") == node);
    CHECK(e.at("job") == "alice-1");
    CHECK(e.at("quanta") == 1);
  }
  // The RM's log: the outcome, at warn because part of it was refused.
  CHECK(rmbus::e2e::eventually(
      [&] {
        const auto log = rmbus::e2e::read_all(f.log_file());
        return log.find("vary_off by 127.0.0.1: varied off " + node +
                        "; evicted 8 share(s): alice-1 8; unknown node(s), "
                        "nothing done for them: node-999") != std::string::npos;
      },
      10s));

  // Again: already so, nothing evicted, full success; as a table for people.
  const auto again = f.admin({"vary_off", node});  // DUCC's spelling
  INFO(again.output);
  CHECK(again.status == std::optional<int>{0});
  CHECK(again.output == "NODE  RESULT\n" + node + "    already varied off\nevicted nothing\n");

  // Only unknown names: refused, exit 1, the table says so and stderr the error.
  const auto none = f.admin({"vary-off", "node-999"});
  CHECK(none.status == std::optional<int>{1});
  CHECK(none.output.find("node-999  unknown: never heard of") != std::string::npos);
  CHECK(none.output.find("rmbus-admin: error: unknown node(s): node-999") != std::string::npos);

  // qoccupancy: one row per node (and a header); the varied-off node shows no free quanta.
  const auto occ = f.admin({"qoccupancy"});
  INFO(occ.output);
  CHECK(occ.status == std::optional<int>{0});
  const auto rows = lines_of(occ.output);
  CHECK(rows.size() == 7);
  bool off_row = false;
  for (const auto& r : rows)
    if (r.rfind(node + " ", 0) == 0) {
      off_row = true;
      CHECK(r.find("varied_off") != std::string::npos);
      CHECK(r.find("  8     -  ") != std::string::npos);
    }
  CHECK(off_row);

  // vary-on is told the same way: the known node is varied on, the unknown named, a partial success (5).
  const auto on = f.admin({"vary_on", node, "node-998"});
  INFO(on.output);
  CHECK(on.status == std::optional<int>{5});
  CHECK(on.output.find("NODE      RESULT\n" + node +
                       "        varied on\nnode-998  unknown: never heard of (no "
                       "heartbeat, no recovered process); nothing done\n") != std::string::npos);
  CHECK(on.output.find("rmbus-admin: partial success: unknown node(s): node-998\n") != std::string::npos);
  CHECK(rmbus::e2e::eventually(
      [&] {
        return rmbus::e2e::read_all(f.log_file())
                   .find("vary_on by 127.0.0.1: varied on " + node +
                         "; unknown node(s), nothing done for them: node-998") != std::string::npos;
      },
      10s));
  const auto on_again = f.admin({"vary-on", node});
  CHECK(on_again.status == std::optional<int>{0});
  CHECK(on_again.output == "NODE  RESULT\n" + node + "    already schedulable (was not varied off)\n");
  // The same partial vary-on for scripts: every node's result in the JSON.
  const auto on_json = f.admin({"--json", "vary-on", node, "node-998"});
  CHECK(on_json.status == std::optional<int>{5});
  const auto oj = json_of(on_json);
  CHECK(oj.at("nodes") == json::array({node}));
  CHECK(oj.at("already") == json::array({node}));
  CHECK(oj.at("unknown") == json::array({"node-998"}));
}

TEST_CASE("the JSON of every command (--json) parses and carries the documented keys") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 4096, 4));
  REQUIRE(
      c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 4; }, deadline));

  const auto status = json_of(f.admin({"--json", "status"}));
  CHECK(status.at("ok") == true);
  CHECK(status.at("pools") == json::array({"alpha", "beta"}));
  CHECK(status.at("cycle").is_number_unsigned());
  CHECK(status.at("instance").get<std::string>().rfind("rmbus.", 0) == 0);

  const auto qload = json_of(f.admin({"--json", "qload"}));
  REQUIRE(qload.at("pools").size() == 2);
  for (const auto& p : qload.at("pools")) {
    CHECK(p.at("quantum_mb") == 1024);
    if (p.at("pool") != "alpha") continue;
    CHECK(p.at("classes").at(0).at("class") == "normal");
    CHECK(p.at("classes").at(0).at("demand_by_order").at("4") == 4);
  }

  const auto occ = json_of(f.admin({"--json", "qoccupancy"}));
  std::size_t nodes = 0;
  for (const auto& p : occ.at("pools")) nodes += p.at("nodes").size();
  CHECK(nodes == 6);

  const auto explain = json_of(f.admin({"--json", "explain", "alice-1"}));
  CHECK(explain.at("pool") == "alpha");
  CHECK(explain.at("explanation").at("known") == true);
  CHECK(explain.at("explanation").at("order") == 4);

  const auto whatif =
      json_of(f.admin({"--json", "whatif", "--user", "bob", "--memory-mb", "2048", "--max-processes", "2"}));
  CHECK(whatif.at("plan").at("order") == 2);
  CHECK(whatif.at("would_preempt").is_array());

  const auto missing = f.admin({"--json", "explain", "nobody"});
  CHECK(missing.status == std::optional<int>{1});
  CHECK(json_of(missing).at("error") == "the job is not known to any pool");

  const auto reconf = json_of(f.admin({"--json", "reconfigure"}));
  CHECK(reconf.at("ok") == true);
  CHECK(reconf.at("changes") == json::array());
}

TEST_CASE("refused work: logged once at warn with its reason, and explained while it is in the map") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(job("dave-1", "dave", "no-such-class", 1024, 1));
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) {
        const auto* d = ts::find_job(s, "dave-1");
        return d != nullptr && d->status == msg::job_status::refused;
      },
      deadline));
  // Several rounds later it is still logged once.
  int rounds = 0;  // the predicate sees each rm.state once (and the last one first)
  REQUIRE(c.wait_state([&](const msg::rm_state&) { return ++rounds >= 4; }, deadline));
  const auto log = rmbus::e2e::read_all(f.log_file());
  INFO(log);
  CHECK(count_of(log, "work dave-1 of user dave refused: Cannot find class no-such-class for the work") == 1);
  CHECK(log.find("[warning]") != std::string::npos);

  const auto e = f.admin({"explain", "dave-1"});
  INFO(e.output);
  CHECK(e.status == std::optional<int>{0});
  CHECK(e.output.find(
            "job dave-1 of user dave: refused before reaching any pool: Cannot find class no-such-class") !=
        std::string::npos);
  const auto ej = json_of(f.admin({"--json", "explain", "dave-1"}));
  CHECK(ej.at("explanation").at("refused") == true);
  CHECK(ej.at("explanation").at("reason") == "unknown_class");
}

TEST_CASE("reconfigure logs what changed, or why it was refused with file and line") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  const auto original = rmbus::e2e::read_all(f.config_path());
  std::ofstream{f.config_path()}
      << original << "\n[[class]]\nname = \"broken\"\npolicy = \"NOPE\"\nnodepool = \"alpha\"\n";
  const auto bad = f.admin({"reconfigure"});
  CHECK(bad.status == std::optional<int>{1});
  CHECK(bad.output.find("configuration not reloaded: " + f.config_path() + ":") != std::string::npos);
  CHECK(rmbus::e2e::eventually(
      [&] {
        const auto log = rmbus::e2e::read_all(f.log_file());
        return log.find("reconfigure by 127.0.0.1 refused, nothing changed: " + f.config_path() + ":") !=
               std::string::npos;
      },
      10s));

  std::string weighted = original;
  weighted.replace(weighted.find("weight = 100"), 12, "weight = 50");
  std::ofstream{f.config_path()} << weighted;
  const auto good = f.admin({"reconfigure"});
  INFO(good.output);
  CHECK(good.status == std::optional<int>{0});
  CHECK(good.output.find("class 'normal': weight 100 -> 50") != std::string::npos);
  CHECK(rmbus::e2e::eventually(
      [&] {
        return rmbus::e2e::read_all(f.log_file())
                   .find("reconfigure by 127.0.0.1: reloading; class 'normal': weight 100 -> 50") !=
               std::string::npos;
      },
      10s));
  // The rounds after it are whole: no pool left out with an unexplained "did not answer in time" (issue 17).
  int rounds = 0;
  REQUIRE(c.wait_state([&](const msg::rm_state&) { return ++rounds >= 5; }, deadline));
  const auto log = rmbus::e2e::read_all(f.log_file());
  INFO(log);
  CHECK(log.find("did not answer in time") == std::string::npos);
}

TEST_CASE("finding the RM: --config, $RMBUS_ADMIN, and clear words for a bad or silent endpoint") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  // The RM's own configuration names its admin endpoint: rmbus-admin finds it there.
  const auto conf = f.dir() + "/with-admin.toml";
  std::ofstream{conf} << rmbus::e2e::test_config() << "\n[bus]\nadmin = \"" << f.admin_endpoint() << "\"\n";
  const auto by_config = ts::run_to_end(RMBUS_ADMIN_BIN, {"--config", conf, "status"}, 20s);
  INFO(by_config.output);
  CHECK(by_config.status == std::optional<int>{0});
  CHECK(by_config.output.find("pools       alpha, beta") != std::string::npos);
  // A configuration with an error is named with its line, as rmbus would.
  const auto broken = f.dir() + "/broken.toml";
  std::ofstream{broken} << "[bus]\nadmin = \"localhost:1\"\n";
  const auto bad_config = ts::run_to_end(RMBUS_ADMIN_BIN, {"--config", broken, "status"}, 20s);
  CHECK(bad_config.status == std::optional<int>{2});
  CHECK(bad_config.output.find(broken + ":") != std::string::npos);

  const auto by_env = ts::run_to_end(
      "/usr/bin/env", {"RMBUS_ADMIN=" + f.admin_endpoint(), RMBUS_ADMIN_BIN, "--json", "status"}, 20s);
  CHECK(by_env.status == std::optional<int>{0});
  CHECK(json_of(by_env).at("ok") == true);

  // HOST:PORT is taken for tcp://HOST:PORT; a host alone is malformed.
  const auto no_port = ts::run_to_end(RMBUS_ADMIN_BIN, {"--admin", "localhost", "status"}, 20s);
  CHECK(no_port.status == std::optional<int>{2});
  CHECK(no_port.output.find("expected tcp://HOST:PORT") != std::string::npos);

  const auto silent = ts::run_to_end(
      RMBUS_ADMIN_BIN, {"--admin", ts::loopback(ts::free_port()), "--timeout-ms", "300", "--json", "status"},
      20s);
  CHECK(silent.status == std::optional<int>{3});
  CHECK(silent.output.find("is rmbus running, and is that its admin endpoint") != std::string::npos);
  CHECK(json_of(silent).at("reached") == false);

  const auto typo = ts::run_to_end(RMBUS_ADMIN_BIN, {"--admin", f.admin_endpoint(), "qocupancy"}, 20s);
  CHECK(typo.status == std::optional<int>{2});
  CHECK(typo.output.find("unknown command 'qocupancy'; did you mean 'qoccupancy'?") != std::string::npos);
}

TEST_CASE("rmbus logs a start-up summary: the configuration, the pools, every endpoint, when it schedules") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  const auto log = rmbus::e2e::read_all(f.log_file());
  INFO(log);
  CHECK(log.find("configuration: " + f.config_path() + " (native)") != std::string::npos);
  CHECK(log.find("nodepool alpha: quantum 1 GB, 4 node(s) expected") != std::string::npos);
  CHECK(log.find("nodepool beta: quantum 1 GB, 2 node(s) expected") != std::string::npos);
  CHECK(log.find("endpoints: bus pub " + f.bus_pub() + ", bus sub " + f.bus_sub() +
                 " (embedded forwarder), admin " + f.admin_endpoint() + ", metrics http://127.0.0.1:" +
                 std::to_string(f.metrics_port()) + "/metrics") != std::string::npos);
  CHECK(log.find("scheduling starts after init stability: 2 heartbeat intervals of 0.3 s = 0.6 s from now") !=
        std::string::npos);
}
