// What rmbus-admin reads show an operator, against the real rmbus (issue 51): reads right after a
// reconfiguration never show an empty cluster; qload lists the demand no machine can meet; status says the
// version, the last round's age, the nodes up and expected and the jobs; nodes the configuration expects and
// that never reported are listed and can be varied off or drained before they boot; drain lets running work
// finish and places nothing new; the squeue-like listings (jobs, users) and the filters.
#include <algorithm>
#include <catch2/catch.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
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

// Shares of `job` in a qoccupancy --json reply, over every pool and node.
std::size_t shares_in_occupancy(const json& occ, const std::string& job) {
  std::size_t n = 0;
  for (const auto& p : occ.at("pools"))
    for (const auto& node : p.value("nodes", json::array()))
      for (const auto& s : node.at("shares"))
        if (s.at("job") == job) ++n;
  return n;
}

// The row of `node` in a qoccupancy table (the line starting with its name), or "".
std::string row_of(const std::string& table, const std::string& node) {
  std::istringstream in(table);
  for (std::string l; std::getline(in, l);)
    if (l.rfind(node + " ", 0) == 0) return l;
  return {};
}

}  // namespace

TEST_CASE("reads right after reconfigure never show an empty cluster") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 1024, 32));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 32; }, deadline));

  // A fresh scheduler answered before it had its work: qoccupancy showed every node empty and qload "no class
  // has work", exit 0. Now each read waits for the fresh schedulers' first round.
  for (int i = 0; i < 5; ++i) {
    const auto reconf = f.admin({"reconfigure"});
    REQUIRE(reconf.status == std::optional<int>{0});
    const auto occ = f.admin({"--json", "qoccupancy"});
    INFO("round " << i << ": " << occ.output);
    REQUIRE(occ.status == std::optional<int>{0});
    CHECK(shares_in_occupancy(json_of(occ), "alice-1") == 32);
    const auto load = f.admin({"qload"});
    INFO(load.output);
    REQUIRE(load.status == std::optional<int>{0});
    CHECK(load.output.find("no class has work") == std::string::npos);
    CHECK(load.output.find("alpha  normal") != std::string::npos);
  }
}

TEST_CASE("a pool still restarting after a reconfiguration is said so, with its own exit code") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 1024, 8));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 8; }, deadline));
  // No work map comes: the fresh schedulers cannot know the running work.
  c.pause_maps(true);
  REQUIRE(f.admin({"reconfigure"}).status == std::optional<int>{0});
  const auto occ = f.admin({"qoccupancy"});
  INFO(occ.output);
  CHECK(occ.status == std::optional<int>{6});
  CHECK(occ.output.find("rmbus-admin: pool restarting: alpha, beta") != std::string::npos);
  CHECK(occ.output.find("a1 ") == std::string::npos);  // no table of empty nodes
  const auto j = json_of(f.admin({"--json", "qload"}));
  CHECK(j.at("ok") == false);
  CHECK(j.at("restarting") == json::array({"alpha", "beta"}));
  // The next map recovers the work: the same read succeeds.
  c.pause_maps(false);
  CHECK(rmbus::e2e::eventually(
      [&] {
        const auto again = f.admin({"--json", "qoccupancy"});
        return again.status == std::optional<int>{0} && shares_in_occupancy(json_of(again), "alice-1") == 8;
      },
      20s));
}

TEST_CASE("qload lists the demand no machine can meet, with its reason, and names the capped number CAP") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 1024, 8));
  c.submit(job("big-1", "bob", "normal", 200 * 1024, 4));  // order 200: alpha's nodes are order 8
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) {
        const auto* big = ts::find_job(s, "big-1");
        return ts::active_shares(s, "alice-1") == 8 && big != nullptr && big->status == msg::job_status::pending;
      },
      deadline));
  const auto load = f.admin({"qload"});
  INFO(load.output);
  CHECK(load.status == std::optional<int>{0});
  // One row per class and order: big-1's order is there, with nothing awarded and why.
  std::smatch m;
  const std::regex header{R"(POOL +CLASS +PRIORITY +WEIGHT +ORDER +CAP +AWARDED +UNMET BECAUSE\n)"};
  CHECK(std::regex_search(load.output, header));
  const std::regex big_row{R"(alpha +normal +10 +100 +200 \(200 GB\) +(\d+) +0 +no machine of order 200[^\n]*)"};
  REQUIRE(std::regex_search(load.output, m, big_row));
  CHECK(std::stoi(m[1]) >= 1);
  CHECK(load.output.find("DEMAND") == std::string::npos);  // the capped number is not called demand here

  const auto j = json_of(f.admin({"--json", "qload"}));
  bool seen = false;
  for (const auto& p : j.at("pools")) {
    if (p.at("pool") != "alpha") continue;
    for (const auto& u : p.at("unmet")) {
      seen = seen || (u.at("class") == "normal" && u.at("order") == 200 && u.at("jobs") == 1 &&
                      u.at("reason") == "no_machine_of_order");
    }
    // The keys of before stay; cap_by_order is the same number under its own name.
    for (const auto& cl : p.at("classes"))
      if (cl.at("class") == "normal") CHECK(cl.at("cap_by_order") == cl.at("demand_by_order"));
  }
  CHECK(seen);
}

TEST_CASE("status shows the version, the last round's age, the nodes up and expected, and the jobs") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 1024, 8));
  c.submit(job("big-1", "bob", "normal", 200 * 1024, 1));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 8; }, deadline));
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));

  const auto j = json_of(f.admin({"--json", "status"}));
  INFO(j.dump());
  CHECK(std::regex_match(j.at("version").get<std::string>(), std::regex{R"(\d+\.\d+\.\d+)"}));
  CHECK(j.at("last_round_ms_ago").get<std::uint64_t>() < 30000);
  CHECK(j.at("last_round_at_ms").get<std::uint64_t>() > 0);
  CHECK(j.at("nodes").at("up") == 6);
  CHECK(j.at("nodes").at("expected") == 6);
  CHECK(j.at("nodes").at("never_seen") == 0);
  CHECK(j.at("jobs").at("scheduled") == 1);
  CHECK(j.at("jobs").at("pending") == 1);
  CHECK(j.at("safety").at("guard_refusals") == 0);

  const auto text = f.admin({"status"});
  INFO(text.output);
  CHECK(text.status == std::optional<int>{0});
  CHECK(std::regex_search(text.output, std::regex{R"(\nversion +\d+\.\d+\.\d+\n)"}));
  CHECK(std::regex_search(text.output, std::regex{R"(\nlast round +[0-9.]+ s ago \(at \d\d:\d\d:\d\d\)\n)"}));
  CHECK(text.output.find("nodes       6 up, 0 missing, 0 down of 6 expected") != std::string::npos);
  CHECK(text.output.find("jobs        2: 1 scheduled, 1 pending, 0 refused") != std::string::npos);
  CHECK(text.output.find("safety      0 plan(s) refused by the guard") != std::string::npos);
}

TEST_CASE("a node the configuration expects that never reported is listed, and varied off before it boots") {
  // a5 is expected (listed in a nested pool of alpha) and has no agent yet.
  rm_fixture f{layout::single, {}, "[[nodepool]]\nname = \"alpha-late\"\nparent = \"alpha\"\nnodes = [\"a5\"]\n"};
  auto& c = f.cluster();
  std::mutex mu;
  std::size_t placed_on_a5 = 0;
  c.set_state_observer([&](const msg::rm_state& s) {
    std::lock_guard lock{mu};
    for (const auto& jb : s.jobs)
      for (const auto& sh : jb.shares) placed_on_a5 += sh.node == "a5" ? 1 : 0;
  });
  c.start();
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));

  const auto occ = f.admin({"qoccupancy"});
  INFO(occ.output);
  CHECK(std::regex_search(row_of(occ.output, "a5"), std::regex{R"(^a5 +alpha +alpha-late +never seen)"}));
  CHECK(json_of(f.admin({"--json", "status"})).at("nodes").at("never_seen") == 1);

  const auto off = f.admin({"vary-off", "a5"});
  INFO(off.output);
  CHECK(off.status == std::optional<int>{0});
  CHECK(off.output.find("a5    varied off (never seen yet: applies when it first reports)") != std::string::npos);
  CHECK(rmbus::e2e::eventually(
      [&] { return rmbus::e2e::read_all(f.log_file()).find("varied off a5; not seen yet (the mark applies when they first report): a5") != std::string::npos; },
      10s));

  // More work than the four nodes hold; then a5 boots.
  c.submit(job("alice-1", "alice", "normal", 1024, 40));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 32; }, deadline));
  c.add_node("a5", 8192);
  REQUIRE(rmbus::e2e::eventually(
      [&] { return row_of(f.admin({"qoccupancy"}).output, "a5").find("varied_off") != std::string::npos; }, 20s));
  int rounds = 0;
  REQUIRE(c.wait_state([&](const msg::rm_state&) { return ++rounds >= 5; }, deadline));
  std::lock_guard lock{mu};
  CHECK(placed_on_a5 == 0);
}

TEST_CASE("drain: running work finishes, nothing new is placed, undrain makes the node schedulable again") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 1024, 8));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 8; }, deadline));
  const auto nodes = ts::nodes_of(*c.last_state(), "alice-1");
  REQUIRE(nodes.size() == 1);
  const auto node = nodes.front();

  const auto drained = f.admin({"drain", node, "node-999"});
  INFO(drained.output);
  CHECK(drained.status == std::optional<int>{5});
  CHECK(drained.output.find(node + "        drained: no new work; 8 share(s) still running") != std::string::npos);
  CHECK(drained.output.find("node-999  unknown") != std::string::npos);
  CHECK(rmbus::e2e::eventually(
      [&] { return rmbus::e2e::read_all(f.log_file()).find("drain by 127.0.0.1: drained " + node) != std::string::npos; },
      10s));

  // alice's work stays; bob's new work goes elsewhere (the three other nodes' 24 quanta: 8 for alice's
  // count, 16 for bob's); the table says the node is draining.
  c.submit(job("bob-1", "bob", "normal", 1024, 16));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "bob-1") == 16; }, deadline));
  const auto s = *c.last_state();
  CHECK(ts::active_shares(s, "alice-1") == 8);
  const auto bob_nodes = ts::nodes_of(s, "bob-1");
  CHECK(std::find(bob_nodes.begin(), bob_nodes.end(), node) == bob_nodes.end());
  CHECK(row_of(f.admin({"qoccupancy"}).output, node).find("up (draining)") != std::string::npos);

  // Once its work ended, it is drained; undrain gives it work again.
  c.complete("alice-1");
  REQUIRE(rmbus::e2e::eventually(
      [&] { return row_of(f.admin({"qoccupancy"}).output, node).find("up (drained)") != std::string::npos; }, 20s));
  const auto again = f.admin({"--json", "drain", node});
  CHECK(json_of(again).at("already") == json::array({node}));
  const auto undrained = f.admin({"undrain", node});
  INFO(undrained.output);
  CHECK(undrained.status == std::optional<int>{0});
  CHECK(undrained.output.find(node + "    undrained\n") != std::string::npos);
  // 32 quanta again: bob 16, carol 16, of which the 8 left free elsewhere and the undrained node's 8.
  c.submit(job("carol-1", "carol", "normal", 1024, 16));
  CHECK(c.wait_state(
      [&](const msg::rm_state& st) {
        const auto on = ts::nodes_of(st, "carol-1");
        return std::find(on.begin(), on.end(), node) != on.end();
      },
      deadline));
}

TEST_CASE("listings and filters: jobs and users, qoccupancy by pool and state and node, options anywhere") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 1024, 8));
  c.submit(job("bob-1", "bob", "normal", 2048, 4));
  c.submit(job("big-1", "bob", "normal", 200 * 1024, 1));
  c.submit(job("carol-1", "carol", "beta-normal", 1024, 2));
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) {
        return ts::active_shares(s, "alice-1") == 8 && ts::active_shares(s, "bob-1") == 4 &&
               ts::active_shares(s, "carol-1") == 2;
      },
      deadline));

  const auto all = f.admin({"jobs"});
  INFO(all.output);
  CHECK(all.status == std::optional<int>{0});
  CHECK(std::regex_search(all.output, std::regex{R"(^JOB +USER +CLASS +POOL +STATE +PROCS +MEMORY +DEMAND +REASON\n)"}));
  CHECK(std::regex_search(all.output, std::regex{R"(\nalice-1 +alice +normal +alpha +scheduled +8 +1 GB +\d+)"}));
  CHECK(std::regex_search(all.output, std::regex{R"(\nbig-1 +bob +normal +alpha +pending +0 +200 GB +\d+ +no machine)"}));

  const auto bobs = json_of(f.admin({"jobs", "--user", "bob", "--json"}));  // a global option after the command
  std::set<std::string> ids;
  for (const auto& jb : bobs.at("jobs")) ids.insert(jb.at("job").get<std::string>());
  CHECK(ids == std::set<std::string>{"big-1", "bob-1"});
  const auto pending = json_of(f.admin({"--json", "jobs", "--state", "pending"}));
  REQUIRE(pending.at("jobs").size() == 1);
  CHECK(pending.at("jobs").at(0).at("job") == "big-1");
  const auto beta = json_of(f.admin({"--json", "jobs", "--class", "beta-normal"}));
  REQUIRE(beta.at("jobs").size() == 1);
  CHECK(beta.at("jobs").at(0).at("job") == "carol-1");
  const auto bad_state = f.admin({"jobs", "--state", "pendng"});
  CHECK(bad_state.status == std::optional<int>{2});
  CHECK(bad_state.output.find("--state: 'pendng' is not one of scheduled, pending, refused; did you mean 'pending'?") != std::string::npos);

  const auto users = f.admin({"users"});
  INFO(users.output);
  CHECK(std::regex_search(users.output, std::regex{R"(^USER +JOBS +PENDING +PROCS +QUANTA +DEMAND\n)"}));
  CHECK(std::regex_search(users.output, std::regex{R"(\nbob +2 +1 +4 +8 +\d+)"}));
  const auto uj = json_of(f.admin({"--json", "users"}));
  bool alice = false;
  for (const auto& u : uj.at("users"))
    if (u.at("user") == "alice") alice = u.at("processes") == 8 && u.at("quanta") == 8;
  CHECK(alice);

  // qoccupancy's filters: one pool; a state; a node pattern.
  const auto beta_occ = f.admin({"qoccupancy", "--pool", "beta"});
  INFO(beta_occ.output);
  CHECK(!row_of(beta_occ.output, "b1").empty());
  CHECK(row_of(beta_occ.output, "a1").empty());
  REQUIRE(f.admin({"vary-off", "a2"}).status == std::optional<int>{0});
  const auto off = json_of(f.admin({"--json", "qoccupancy", "--state", "varied_off"}));
  std::vector<std::string> off_nodes;
  for (const auto& p : off.at("pools"))
    for (const auto& n : p.at("nodes")) off_nodes.push_back(n.at("node").get<std::string>());
  CHECK(off_nodes == std::vector<std::string>{"a2"});
  const auto pattern = f.admin({"qoccupancy", "--node", "b*"});
  CHECK(!row_of(pattern.output, "b2").empty());
  CHECK(row_of(pattern.output, "a3").empty());
  const auto no_pool = f.admin({"qoccupancy", "--pool", "gamma"});
  CHECK(no_pool.status == std::optional<int>{1});
  CHECK(no_pool.output.find("no top-level nodepool 'gamma' (pools: alpha, beta)") != std::string::npos);

  // whatif with --json after it; --admin without tcp://.
  const auto w = f.admin({"whatif", "--user", "dan", "--memory-mb", "1024", "--json"});
  CHECK(json_of(w).at("plan").at("order") == 1);
  const auto bare = f.admin_endpoint().substr(std::string{"tcp://"}.size());
  const auto plain = ts::run_to_end(RMBUS_ADMIN_BIN, {"--admin", bare, "status"}, 20s);
  INFO(plain.output);
  CHECK(plain.status == std::optional<int>{0});
}
