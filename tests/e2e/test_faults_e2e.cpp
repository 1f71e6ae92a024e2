// Fault injection through real processes: the real rmbus on loopback, a fake cluster (agents + orchestrator)
// on its bus, faults injected by killing the RM, silencing or resizing agents. Each rule of
// docs/reliability.md that crosses processes is shown here. Waits are on published messages with generous
// deadlines; nothing asserts a timing.
#include <algorithm>
#include <csignal>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include "messages/topics.hpp"
#include "tests/e2e/rm_fixture.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::layout;
using rmbus::e2e::rm_fixture;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;

namespace {

constexpr auto deadline = 60s;

ts::job_spec job(const std::string& id, const std::string& user, std::uint64_t mb, std::uint64_t max_processes = 0) {
  ts::job_spec j;
  j.id = id;
  j.user = user;
  j.class_name = "normal";
  j.memory_mb = mb;
  j.max_processes = max_processes;
  return j;
}

bool has_event(const ts::fake_cluster& c, const std::string& kind) {
  const auto evs = c.events();
  return std::any_of(evs.begin(), evs.end(), [&](const msg::rm_event& e) { return e.kind == kind; });
}

std::size_t count_events(const ts::fake_cluster& c, const std::string& kind, const std::string& key, const std::string& value) {
  std::size_t n = 0;
  for (const auto& e : c.events()) {
    auto it = e.detail.find(key);
    n += e.kind == kind && it != e.detail.end() && it->second == value ? 1 : 0;
  }
  return n;
}

bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

// The fixture's configuration with one more [timing] key.
void set_timing(const rm_fixture& f, const std::string& line) {
  std::string text = rmbus::e2e::test_config();
  const std::string anchor = "round_timeout_ms = 3000\n";
  text.replace(text.find(anchor), anchor.size(), anchor + line + "\n");
  std::ofstream{f.config_path()} << text;
}

std::size_t shares_with(const msg::rm_state& s, const std::string& id, msg::share_status st) {
  const auto* j = ts::find_job(s, id);
  if (j == nullptr) return 0;
  return static_cast<std::size_t>(std::count_if(j->shares.begin(), j->shares.end(), [&](const auto& sh) { return sh.status == st; }));
}

// The reason a job waits while the RM settles after a restart (core: reason_code::settling).
bool settling(const msg::job_schedule& j) { return j.reason.rfind("settling", 0) == 0; }

}  // namespace

TEST_CASE("a restarted RM settles: it publishes what it recovered and gives or takes nothing until the window ends") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  // alice alone fills pool alpha: 4 nodes x 8 GB = 32 quanta of 1 GB processes.
  c.submit(job("alice-1", "alice", 1024));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 32; }, deadline));
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));  // every process shown once more
  f.kill_rm(SIGKILL);
  f.wait_rm(10s);
  // While the RM is down bob submits; his fair share (16 of 32) would preempt half of alice's processes.
  c.submit(job("bob-1", "bob", 1024));
  set_timing(f, "settle_ms = 4000");
  f.start_rm();

  // The first rounds report alice's 32 recovered processes as running, give bob nothing and preempt nothing.
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) {
        const auto* b = ts::find_job(s, "bob-1");
        return shares_with(s, "alice-1", msg::share_status::running) == 32 && b != nullptr && settling(*b);
      },
      deadline));
  CHECK(has_event(c, "settling"));
  // Every state until the window ends keeps alice whole and bob empty.
  bool settled_whole = true;
  REQUIRE(c.wait_state(
      [&](const msg::rm_state& s) {
        const auto* b = ts::find_job(s, "bob-1");
        if (b != nullptr && settling(*b)) {
          settled_whole = settled_whole && b->shares.empty() && shares_with(s, "alice-1", msg::share_status::preempt) == 0 &&
                          shares_with(s, "alice-1", msg::share_status::running) == 32;
          return false;
        }
        return true;  // the first state after the window
      },
      deadline));
  CHECK(settled_whole);
  CHECK(wait_for([&] { return has_event(c, "settled"); }, 10s));
  // Then fair share as usual: 32 / 2 users = 16 each.
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 16 && ts::active_shares(s, "bob-1") == 16; },
      deadline));
}

TEST_CASE("settle_ms = 0: a restarted RM schedules at once") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", 1024));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 32; }, deadline));
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  f.kill_rm(SIGKILL);
  f.wait_rm(10s);
  c.submit(job("bob-1", "bob", 1024));
  set_timing(f, "settle_ms = 0");
  f.start_rm();
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 16 && ts::active_shares(s, "bob-1") == 16; },
      deadline));
  CHECK_FALSE(has_event(c, "settling"));
}

TEST_CASE("a node that flaps faster than it can be declared down is never evicted") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", 1024, 8));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 8; }, deadline));
  const auto node = ts::nodes_of(*c.last_state(), "alice-1").front();
  // Down after node_stability = 4 missed heartbeats of 300 ms (1.2 s): silent 0.5 s, then back for 0.5 s, ten times.
  for (int i = 0; i < 10; ++i) {
    c.set_alive(node, false);
    std::this_thread::sleep_for(500ms);
    c.set_alive(node, true);
    std::this_thread::sleep_for(500ms);
  }
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  CHECK(count_events(c, "evict", "node", node) == 0);
  CHECK(ts::active_shares(*c.last_state(), "alice-1") == 8);
}

TEST_CASE("a node that goes down, comes back and goes down again evicts each process once") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", 8192, 1));  // one 8 GB process: one whole node
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 1; }, deadline));
  const auto node = ts::nodes_of(*c.last_state(), "alice-1").front();
  for (int flap = 0; flap < 3; ++flap) {
    c.set_alive(node, false);
    REQUIRE(c.wait_state([&](const msg::rm_state& s) {
      const auto nodes = ts::nodes_of(s, "alice-1");
      return ts::active_shares(s, "alice-1") == 1 && std::find(nodes.begin(), nodes.end(), node) == nodes.end();
    }, deadline));
    c.set_alive(node, true);
    std::this_thread::sleep_for(1s);
  }
  // Only the first flap found alice's process on that node: one eviction event for it, not one per flap.
  CHECK(wait_for([&] { return count_events(c, "evict", "node", node) >= 1; }, 10s));
  CHECK(count_events(c, "evict", "node", node) == 1);
}

TEST_CASE("a node back with less memory than its shares hold loses only the shares above its new size") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", 2048, 16));  // 16 processes of 2 GB: 4 on each 8 GB node of alpha
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 16; }, deadline));
  const auto node = ts::nodes_of(*c.last_state(), "alice-1").front();
  // The agent comes back reporting 5 GB: 2 processes of 2 GB fit, the other 2 of the node are evicted.
  c.add_node(node, 5120);
  REQUIRE(c.wait_state(
      [&](const msg::rm_state& s) {
        std::size_t evicted = 0, kept = 0;
        if (const auto* j = ts::find_job(s, "alice-1"))
          for (const auto& sh : j->shares)
            if (sh.node == node) {
              evicted += sh.status == msg::share_status::evict;
              kept += sh.status == msg::share_status::running;
            }
        return evicted == 2 && kept == 2;
      },
      deadline));
  // Once the orchestrator ends them, the node holds 4 of its 5 quanta and nothing is double-booked.
  REQUIRE(c.wait_state([&](const msg::rm_state& s) {
    return shares_with(s, "alice-1", msg::share_status::evict) == 0;
  }, deadline));
  auto quanta = rmbus::e2e::node_quanta();
  quanta[node] = 5;
  CHECK(ts::double_bookings(*c.last_state(), quanta).empty());
}

namespace {

ts::job_spec beta_job(const std::string& id, const std::string& user, std::uint64_t max_processes) {
  auto j = job(id, user, 1024, max_processes);
  j.class_name = "beta-normal";
  return j;
}

// What a failed check saw: the named jobs' status, reason and shares in the last schedule.
std::string describe_jobs(const msg::rm_state& s, const std::vector<std::string>& ids) {
  std::string out = "round " + std::to_string(s.cycle) + ":";
  for (const auto& id : ids) {
    const auto* j = ts::find_job(s, id);
    if (j == nullptr) {
      out += "\n  " + id + ": not listed";
      continue;
    }
    out += "\n  " + id + ": " + std::string{msg::to_string(j->status)} + " given " + std::to_string(j->given) +
           (j->reason.empty() ? "" : " (" + j->reason + ")");
    for (const auto& sh : j->shares) out += "\n    " + sh.id + " on " + sh.node + " " + std::string{msg::to_string(sh.status)};
  }
  return out;
}

std::map<std::string, std::string> share_nodes(const msg::rm_state& s, const std::string& id) {
  std::map<std::string, std::string> out;
  if (const auto* j = ts::find_job(s, id))
    for (const auto& sh : j->shares)
      if (sh.status == msg::share_status::running) out[sh.id] = sh.node;
  return out;
}

// Round 30 comes a few seconds after start (a round per 200 ms work map): both pools have scheduled by then.
void scheduler_failure_is_contained(const std::string& fault) {
  rm_fixture f{layout::single};
  f.set_extra_args({"--inject-fault", fault + ":beta:30"});
  f.kill_rm(SIGKILL);
  f.wait_rm(10s);
  f.start_rm();
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", 1024, 4));
  c.submit(beta_job("carol-1", "carol", 3));
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 4 && shares_with(s, "carol-1", msg::share_status::running) == 3; },
      deadline));
  const auto carol = share_nodes(*c.last_state(), "carol-1");
  // Beta's scheduler fails in round 30 and is replaced, with an event saying so.
  REQUIRE(wait_for([&] { return count_events(c, "pool_restarted", "pool", "beta") >= 1; }, deadline));
  // The round it failed in was published without it, with its last good plan and an event saying so.
  CHECK(wait_for([&] { return count_events(c, "round_timeout", "pool", "beta") >= 1; }, deadline));
  // Meanwhile and after, alpha keeps scheduling: new work there is placed.
  c.submit(job("bob-1", "bob", 1024, 4));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "bob-1") == 4; }, deadline));
  // The new beta scheduler recovers carol's processes where they run, with their share ids, and schedules
  // new work in beta again.
  c.submit(beta_job("dave-1", "dave", 2));
  const bool recovered = c.wait_state(
      [&](const msg::rm_state& s) { return share_nodes(s, "carol-1") == carol && ts::active_shares(s, "dave-1") == 2; },
      deadline);
  if (!recovered) {
    std::string before;
    for (const auto& [id, node] : carol) before += " " + id + "@" + node;
    INFO("carol's running shares before the fault:" << before);
    INFO(describe_jobs(*c.last_state(), {"carol-1", "dave-1"}));
    FAIL("the new beta scheduler did not keep carol's processes and place dave's");
  }
  // Nothing double-booked: beta's two 8 GB nodes hold carol's 3 and dave's 2 processes of 1 GB.
  CHECK(ts::double_bookings(*c.last_state(), rmbus::e2e::node_quanta()).empty());
  CHECK(count_events(c, "pool_restarted", "pool", "alpha") == 0);
}

}  // namespace

TEST_CASE("a pool scheduler that throws is replaced, the other pool keeps scheduling and nothing is lost") {
  scheduler_failure_is_contained("throw");
}

TEST_CASE("a pool scheduler that hangs is replaced after round_timeout_ms, its round is published with its last plan") {
  scheduler_failure_is_contained("hang");
}

TEST_CASE("rmbus refuses a malformed --inject-fault with the reason") {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--inject-fault", "explode:beta:3"}, {"--inject-fault", "throw:beta:0"}, {"--inject-fault", "throw:beta"}}) {
    auto r = ts::run_to_end(RMBUS_BIN, [&] {
      auto a = args;
      a.push_back("--check-config");
      return a;
    }(), 20s);
    CHECK(r.status == std::optional<int>{2});
    CHECK(r.output.find("--inject-fault") != std::string::npos);
  }
}

namespace {

// A node whose name moves from pool alpha to pool beta in a reconfiguration while alpha's work runs on it:
// the fair-share processes there are evicted and re-placed in alpha, the FIXED_SHARE one keeps running with
// its share id, and beta places nothing on the node until that process ends; nothing is ever double-booked.
void node_moves_to_another_pool(layout how) {
  rm_fixture f{how};
  auto& c = f.cluster();
  c.start();
  // Alpha's 32 quanta: fred's one 4 GB FIXED_SHARE process and 28 of alice's 1 GB processes fill it.
  auto fred = job("fred-1", "fred", 4096, 1);
  fred.class_name = "fixed";
  c.submit(fred);
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return shares_with(s, "fred-1", msg::share_status::running) == 1; }, deadline));
  c.submit(job("alice-1", "alice", 1024, 28));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return shares_with(s, "alice-1", msg::share_status::running) == 28; }, deadline));
  const auto moved = ts::nodes_of(*c.last_state(), "fred-1").front();
  const auto fred_share = share_nodes(*c.last_state(), "fred-1").begin()->first;
  std::size_t alice_there = 0;
  for (const auto& [id, node] : share_nodes(*c.last_state(), "alice-1")) alice_there += node == moved;
  REQUIRE(alice_there == 4);  // 8 quanta: fred's 4 and 4 of alice's

  std::set<std::string> double_booked;
  bool beta_joined_fred = false;  // a state with dave's and fred's processes on the moved node at once
  c.set_state_observer([&](const msg::rm_state& s) {
    for (const auto& n : ts::double_bookings(s, rmbus::e2e::node_quanta())) double_booked.insert(n);
    const auto fred_nodes = ts::nodes_of(s, "fred-1");
    const auto dave_nodes = ts::nodes_of(s, "dave-1");
    beta_joined_fred = beta_joined_fred || (std::find(fred_nodes.begin(), fred_nodes.end(), moved) != fred_nodes.end() &&
                                            std::find(dave_nodes.begin(), dave_nodes.end(), moved) != dave_nodes.end());
  });
  // The new configuration lists the node in beta instead of alpha.
  auto text = rmbus::e2e::test_config();
  const auto quoted = "\"" + moved + "\"";
  const auto in_alpha = text.find(quoted);
  REQUIRE(in_alpha != std::string::npos);
  text.erase(in_alpha, quoted.size() + (text.compare(in_alpha + quoted.size(), 2, ", ") == 0 ? 2 : 0));
  if (text.compare(in_alpha - 2, 3, ", ]") == 0) text.erase(in_alpha - 2, 2);
  const auto beta_nodes = text.find("nodes = [\"b1\", \"b2\"]");
  REQUIRE(beta_nodes != std::string::npos);
  text.insert(beta_nodes + std::string{"nodes = [\"b1\", \"b2\""}.size(), ", " + quoted);
  INFO(text);
  { std::ofstream{f.config_path()} << text; }
  auto reconfigured = f.admin({"reconfigure"});
  INFO(reconfigured.output);
  REQUIRE(reconfigured.status == 0);

  // The node reports in beta; alice's 4 processes there are evicted and made up in alpha's 24 quanta
  // (32 - 8 of the moved node); fred's process keeps its share id and keeps running, its job whole.
  REQUIRE(c.wait_nodes([&](const msg::rm_nodes& n) {
    return std::any_of(n.nodes.begin(), n.nodes.end(), [&](const msg::node_report& r) { return r.node == moved && r.pool == "beta"; });
  }, deadline));
  REQUIRE(c.wait_state([&](const msg::rm_state& s) {
    std::size_t there = 0;
    for (const auto& [id, node] : share_nodes(s, "alice-1")) there += node == moved;
    const auto* j = ts::find_job(s, "fred-1");
    return there == 0 && shares_with(s, "alice-1", msg::share_status::running) == 24 && j != nullptr &&
           j->status != msg::job_status::refused && share_nodes(s, "fred-1") == std::map<std::string, std::string>{{fred_share, moved}};
  }, deadline));
  // Beta wants 24 quanta of its own: it gets b1 and b2 (16), and nothing on the node while fred runs there.
  c.submit(beta_job("dave-1", "dave", 24));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return shares_with(s, "dave-1", msg::share_status::running) == 16; }, deadline));
  for (int round = 0; round < 5; ++round) REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  REQUIRE(c.wait_nodes([&](const msg::rm_nodes& n) {
    return std::any_of(n.nodes.begin(), n.nodes.end(),
                       [&](const msg::node_report& r) { return r.node == moved && r.state == msg::node_state::blacklisted; });
  }, deadline));
  // Fred's job ends: the node is beta's to fill.
  c.complete("fred-1");
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return shares_with(s, "dave-1", msg::share_status::running) == 24; }, deadline));
  CHECK(ts::nodes_of(*c.last_state(), "dave-1").size() == 3);
  c.set_state_observer({});
  CHECK(double_booked.empty());
  CHECK_FALSE(beta_joined_fred);
}

}  // namespace

TEST_CASE("one process: a node moved to another pool by a reconfiguration is never double-booked and its work is not lost") {
  node_moves_to_another_pool(layout::single);
}

TEST_CASE("two processes: a node moved to the other process's pool by a reconfiguration is never double-booked") {
  node_moves_to_another_pool(layout::split);
}

TEST_CASE("a scheduler process restarted alone learns its pool's machines again and schedules it") {
  // Process B (scheduler:beta) joins a bus whose intake (process A) announced beta's machines long before:
  // its scheduler asks for them on its first work slice. (From the work map alone it would know only the
  // nodes that running processes name: recovery registers those.)
  const auto how = GENERATE(layout::split, layout::split_proxy);
  rm_fixture f{how};
  auto& c = f.cluster();
  // One process of 2 quanta: on one of b1, b2 (8 quanta each); the other stays empty.
  c.submit(rmbus::e2e::job("jb", "bob", "beta-normal", 2048, 1));
  c.start();
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "jb") > 0; }, deadline));
  // Ten rounds more, so that everything sent after A's start is long sent.
  int rounds = 0;
  REQUIRE(c.wait_state([&](const msg::rm_state&) { return ++rounds >= 10; }, deadline));
  f.restart_rm_process(1);
  // A whole-node process (8 quanta) for another user fits only on the empty node. Knowing both nodes (16
  // quanta: bob 2, carl 8) B places it there and jb keeps its process. A B that knew only jb's node (the
  // one recovery registers from the work map) could not: it evicted jb to make room (seen without the fix).
  c.submit(rmbus::e2e::job("jb2", "carl", "beta-normal", 8192, 1));
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) { return ts::active_shares(s, "jb2") == 1 && ts::active_shares(s, "jb") == 1; },
      deadline));
  const auto st = c.last_state();
  REQUIRE(st);
  CHECK(ts::nodes_of(*st, "jb") != ts::nodes_of(*st, "jb2"));
  // Process A's intake answered B's request.
  std::ifstream log{f.log_file()};
  std::stringstream text;
  text << log.rdbuf();
  CHECK(text.str().find("live machines announced again") != std::string::npos);
}
