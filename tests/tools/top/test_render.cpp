// rmbus-top's model and screen over hand-built messages: exact lines, so a wrong number or order fails.
#include <catch2/catch.hpp>

#include <algorithm>

#include "tools/top/monitor_model.hpp"
#include "tools/top/render.hpp"

namespace msg = rmbus::messages;
using namespace rmbus::top;

namespace {

msg::job_schedule job(std::string id, std::string user, std::string cls, msg::job_status st,
                      std::vector<msg::share_status> shares, std::uint64_t given, std::uint64_t demand,
                      std::uint64_t fair, std::string reason = {}) {
  msg::job_schedule j;
  j.id = std::move(id);
  j.user = std::move(user);
  j.class_name = std::move(cls);
  j.status = st;
  j.reason = std::move(reason);
  j.memory_mb = 2048;
  int n = 0;
  for (auto s : shares) j.shares.push_back({j.id + "." + std::to_string(++n), "n1", 2, s});
  j.given = given;
  j.demand = demand;
  j.fair_share = fair;
  return j;
}

msg::rm_nodes two_pools() {
  using st = msg::node_state;
  msg::rm_nodes n;
  n.nodes = {{"a1", "alpha", "alpha", st::up, 8192, 8, 2, 0},
             {"a2", "alpha", "alpha-nested", st::up, 8192, 8, 0, 0},
             {"a3", "alpha", "alpha", st::missing, 8192, 8, 8, 1},
             {"b1", "beta", "beta", st::down, 16384, 16, 16, 6},
             {"b2", "beta", "beta", st::up, 16384, 16, 5, 0}};
  return n;
}

msg::rm_state schedule() {
  using ss = msg::share_status;
  msg::rm_state s;
  s.cycle = 42;
  s.jobs = {job("j-bob", "bob", "normal", msg::job_status::scheduled, {ss::running, ss::running, ss::new_}, 3, 10, 4),
            job("j-alice", "alice", "normal", msg::job_status::scheduled, {ss::running, ss::preempt}, 1, 5, 4),
            job("j-alice2", "alice", "normal", msg::job_status::pending, {}, 0, 2, 0,
                "no machine of order 64 in pool alpha"),
            job("svc", "carol", "fixed", msg::job_status::scheduled, {ss::running, ss::evict}, 1, 1, 0),
            job("lost", "dave", "", msg::job_status::refused, {}, 0, 0, 0, "Cannot find class gpu for the work")};
  return s;
}

bool has_line(const std::vector<std::string>& lines, const std::string& want) {
  return std::find(lines.begin(), lines.end(), want) != lines.end();
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

}  // namespace

TEST_CASE("pools count nodes by state, and quanta and free quanta are of the nodes up") {
  monitor_model m;
  m.on_nodes(two_pools(), 0);
  const auto p = m.pools();
  REQUIRE(p.size() == 2);
  CHECK(p[0].pool == "alpha");
  CHECK(p[0].nodes == 3);
  CHECK(p[0].nodes_by_state.at(msg::node_state::up) == 2);
  CHECK(p[0].nodes_by_state.at(msg::node_state::missing) == 1);
  // up: a1 (8, 2 free) + a2 (8, 0 free); the missing a3 is not counted
  CHECK(p[0].quanta == 16);
  CHECK(p[0].free_quanta == 2);
  CHECK(p[1].quanta == 16);
  CHECK(p[1].free_quanta == 5);
}

TEST_CASE("users sum their jobs: processes held are running or new, given, demand and fair share in processes") {
  monitor_model m;
  m.on_state(schedule(), 0);
  const auto u = m.users();
  REQUIRE(u.size() == 4);
  // by class then user: "" (dave), fixed (carol), normal (alice, bob)
  CHECK(u[0].user == "dave");
  CHECK(u[1].user == "carol");
  CHECK(u[2].user == "alice");
  CHECK(u[3].user == "bob");
  // alice: j-alice holds 1 (its preempted share is leaving), j-alice2 none; given 1 + 0, demand 5 + 2, fair 4 + 0
  CHECK(u[2].jobs == 2);
  CHECK(u[2].processes == 1);
  CHECK(u[2].quanta == 2);
  CHECK(u[2].given == 1);
  CHECK(u[2].demand == 7);
  CHECK(u[2].fair_share == 4);
  // bob: 2 running + 1 new, 2 quanta each
  CHECK(u[3].processes == 3);
  CHECK(u[3].quanta == 6);
}

TEST_CASE("the screen: header, pools, users, jobs needing attention first, cycle timings, events") {
  monitor_model m;
  m.on_state(schedule(), 10'000);
  m.on_nodes(two_pools(), 10'000);
  msg::rm_cycle c;
  c.pool = "alpha";
  c.cycle = 42;
  c.jobs = 5;
  c.nodes = 2;
  c.given = 1;
  c.preempted = 1;
  c.evicted = 0;
  c.how_much_us = 120;
  c.what_of_us = 45;
  c.preempt_us = 7;
  c.defrag_us = 3;
  c.total_us = 200;
  m.on_cycle(c);
  m.on_event({"preempt", {{"job", "j-alice"}, {"reason", "fair share"}, {"share", "j-alice.2"}}}, 9'000);
  m.on_event({"node_missing", {{"node", "a3"}}}, 9'500);
  m.set_bus({120, 2, 5, 1, 0});
  render_options o;
  o.now_ms = 12'500;
  o.width = 130;
  const auto lines = render(m, o);
  INFO(joined(lines));
  CHECK(lines[0] == "rmbus-top  cycle 42  (rm.state 2.5 s ago)  jobs 5  nodes 5");
  CHECK(lines[1] == "bus: 120 messages, 2 gaps (5 missing), 1 publisher restarts, 0 bad messages");
  CHECK(has_line(lines, "alpha                     3     2       1     0     0        0           0       16        2"));
  CHECK(has_line(lines, "beta                      2     1       0     1     0        0           0       16        5"));
  CHECK(has_line(lines, "normal           alice                2      1       2      1       7      4"));
  CHECK(has_line(lines, "normal           bob                  1      3       6      3      10      4"));
  CHECK(has_line(lines, "-                dave                 1      0       0      0       0      0"));
  // jobs: refused, then pending, then scheduled by id
  const auto first_job = std::find_if(lines.begin(), lines.end(), [](const auto& l) { return l.rfind("JOB ", 0) == 0; });
  REQUIRE(std::distance(first_job, lines.end()) > 5);
  CHECK(first_job[1] == "lost                     dave         -            refused        0       0      0  Cannot find class gpu for the work");
  CHECK(first_job[2] == "j-alice2                 alice        normal       pending        0       0      0  no machine of order 64 in pool alpha");
  CHECK(first_job[3] == "j-alice                  alice        normal       scheduled      1       1      0");
  CHECK(first_job[4] == "j-bob                    bob          normal       scheduled      3       0      0");
  CHECK(first_job[5] == "svc                      carol        fixed        scheduled      1       0      1");
  CHECK(has_line(lines, "alpha                     42      5      2      1         1       0       120       45        7       3      200"));
  // newest event first, with its age
  const auto events = std::find(lines.begin(), lines.end(), "RECENT EVENTS (newest first)");
  REQUIRE(std::distance(events, lines.end()) == 3);
  CHECK(events[1] == "    3.0 s ago  node_missing node=a3");
  CHECK(events[2] == "    3.5 s ago  preempt      job=j-alice reason=fair share share=j-alice.2");
}

TEST_CASE("a monitor started before the RM says what it waits for, and the next complete state fills it in") {
  monitor_model m;
  render_options o;
  o.endpoint = "tcp://127.0.0.1:5561";
  auto lines = render(m, o);
  CHECK(lines[0] == "rmbus-top");
  CHECK(has_line(lines, "waiting for the RM's first rm.state on tcp://127.0.0.1:5561"));
  CHECK(has_line(lines, "  (no rm.nodes yet)"));
  // rm.state alone: jobs shown, pools still waiting
  m.on_state(schedule(), 0);
  lines = render(m, o);
  CHECK_FALSE(has_line(lines, "waiting for the RM's first rm.state on tcp://127.0.0.1:5561"));
  CHECK(has_line(lines, "  (no rm.nodes yet)"));
  // a later, smaller rm.state replaces the first: nothing accumulates
  msg::rm_state later;
  later.cycle = 43;
  later.jobs = {schedule().jobs[0]};
  m.on_state(later, 0);
  REQUIRE(m.users().size() == 1);
  CHECK(m.users()[0].user == "bob");
}

TEST_CASE("narrow screens cut lines and control bytes from the bus are not passed to the terminal") {
  monitor_model m;
  auto s = schedule();
  s.jobs[0].id = "evil\x1b[2Jjob";
  m.on_state(s, 0);
  m.on_bad_message("rm.state: jobs[0].id: expected str", 0);
  render_options o;
  o.width = 40;
  const auto lines = render(m, o);
  for (const auto& l : lines) {
    CHECK(l.size() <= 40);
    CHECK(l.find('\x1b') == std::string::npos);
  }
  CHECK(has_line(lines, "evil?[2Jjob              bob          no"));
  // the monitor's own decode failure counts as a bad message
  CHECK(m.bus().bad_messages == 1);
  m.on_bad_message("bad envelope", 0, true);
  CHECK(m.bus().bad_messages == 1);  // the subscriber counted that one itself
}

TEST_CASE("recent events are bounded") {
  monitor_model m{3};
  for (int i = 0; i < 10; ++i) m.on_event({"node_up", {{"node", "n" + std::to_string(i)}}}, i);
  REQUIRE(m.events().size() == 3);
  CHECK(m.events().front().text == "node=n9");
  CHECK(m.events().back().text == "node=n7");
}
