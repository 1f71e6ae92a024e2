// rmbus-top's model: snapshots replace, derived tables sum what they should, the round is recognised whole,
// and nothing fed from the bus grows without bound.
#include <catch2/catch.hpp>
#include <limits>

#include "tests/tools/top/top_fixtures.hpp"
#include "tools/top/monitor_model.hpp"
#include "tools/top/render.hpp"

namespace msg = rmbus::messages;
using namespace rmbus::top;
using namespace rmbus::top::fixtures;

TEST_CASE("pools count nodes by state, and quanta and free quanta are of the nodes up") {
  monitor_model m;
  m.on_nodes(two_pools(), 0);
  const auto p = m.pools();
  REQUIRE(p.size() == 2);
  CHECK(p[0].pool == "alpha");
  CHECK(p[0].nodes == 3);
  CHECK(p[0].count(msg::node_state::up) == 2);
  CHECK(p[0].count(msg::node_state::missing) == 1);
  CHECK(p[0].count(msg::node_state::down) == 0);
  // up: a1 (8, 2 free) + a2 (8, 0 free; its nested pool counts in its top-level one); missing a3 is not
  CHECK(p[0].quanta == 16);
  CHECK(p[0].free_quanta == 2);
  CHECK(p[1].pool == "beta");
  CHECK(p[1].count(msg::node_state::down) == 1);
  CHECK(p[1].count(msg::node_state::varied_off) == 1);
  // up: b2 only (16, 5 free)
  CHECK(p[1].quanta == 16);
  CHECK(p[1].free_quanta == 5);
}

TEST_CASE("classes and users sum their jobs: active processes, quanta, given, demand, fair share") {
  monitor_model m;
  m.on_state(schedule(), 0);
  const auto c = m.classes();
  REQUIRE(c.size() == 3);
  // by class name: "" (refused before reaching a class), fixed, normal
  CHECK(c[0].class_name.empty());
  CHECK(c[1].class_name == "fixed");
  REQUIRE(c[2].class_name == "normal");
  REQUIRE(c[2].users.size() == 2);
  const auto& alice = c[2].users[0];
  const auto& bob = c[2].users[1];
  CHECK(alice.user == "alice");
  CHECK(bob.user == "bob");
  // alice: j-alice holds 1 running share (its preempted one is leaving), j-alice2 none.
  // given 1 + 0, demand 5 + 2, fair share 4 + 0; 1 < min(7, 4): below her fair share
  CHECK(alice.jobs == 2);
  CHECK(alice.active == 1);
  CHECK(alice.quanta == 2);
  CHECK(alice.given == 1);
  CHECK(alice.demand == 7);
  CHECK(alice.fair_share == 4);
  CHECK(alice.below_fair_share());
  // bob: 2 running + 1 new of 2 quanta each; given 4 = fair share 4: not below it
  CHECK(bob.active == 3);
  CHECK(bob.quanta == 6);
  CHECK_FALSE(bob.below_fair_share());
  // the class: 3 jobs, 1 + 3 active, 2 + 6 quanta, given 1 + 4, demand 7 + 10, fair 4 + 4
  const auto& normal = c[2].total;
  CHECK(normal.jobs == 3);
  CHECK(normal.active == 4);
  CHECK(normal.quanta == 8);
  CHECK(normal.given == 5);
  CHECK(normal.demand == 17);
  CHECK(normal.fair_share == 8);
  // carol's service: 1 running, 1 evicted (leaving); fair share 0 (not FAIR_SHARE) is never "below"
  CHECK(c[1].total.active == 1);
  CHECK_FALSE(c[1].users[0].below_fair_share());
}

TEST_CASE("a class or group is below its fair share when one of its users is, not by its summed figures") {
  // As rmbus-top showed it under tmux: alice capped by design (given what she wants, 2 of a fair share of
  // 32), erin wanting 1000 with a fair share of 0. Summed, the class was given 2 < min(1002, 32): "below fair
  // share", though neither user is.
  user_summary alice;
  alice.given = 2;
  alice.wanted = 2;
  alice.demand = 40;
  alice.fair_share = 32;
  alice.capped_jobs = 1;
  user_summary erin;
  erin.given = 0;
  erin.wanted = erin.demand = 1000;
  erin.fair_share = 0;
  REQUIRE_FALSE(alice.below_fair_share());
  REQUIRE_FALSE(erin.below_fair_share());
  user_summary group;
  add_sums(group, alice);
  add_sums(group, erin);
  CHECK(group.given == 2);
  CHECK(group.fair_share == 32);
  CHECK(group.parts == 2);
  CHECK_FALSE(group.below_fair_share());
  user_summary klass;
  add_sums(klass, group);
  CHECK_FALSE(klass.below_fair_share());
  // bob, short of his own share, makes his group and the class below it.
  user_summary bob;
  bob.given = 1;
  bob.wanted = bob.demand = 8;
  bob.fair_share = 4;
  add_sums(group, bob);
  CHECK(group.below_fair_share());
  user_summary klass2;
  add_sums(klass2, group);
  CHECK(klass2.below_fair_share());
  // More jobs of the same row (as_part false) keep the row judged by its own sums.
  user_summary one_user;
  add_sums(one_user, alice, false);
  add_sums(one_user, bob, false);
  CHECK(one_user.parts == 0);
  CHECK(one_user.below_fair_share() == (one_user.given < std::min(one_user.wanted, one_user.fair_share)));
}

TEST_CASE("jobs: pending first, then refused, then scheduled, by id, with active and leaving processes") {
  monitor_model m;
  m.on_state(schedule(), 0);
  const auto j = m.jobs();
  REQUIRE(j.size() == 5);
  CHECK(j[0].id == "j-alice2");
  CHECK(j[1].id == "lost");
  CHECK(j[2].id == "j-alice");
  CHECK(j[3].id == "j-bob");
  CHECK(j[4].id == "svc");
  CHECK(j[0].reason == "Waiting for preemptions.");
  CHECK(j[2].active == 1);
  CHECK(j[2].leaving == 1);  // preempt
  CHECK(j[3].active == 3);
  CHECK(j[3].leaving == 0);
  CHECK(j[4].leaving == 1);  // evict
}

TEST_CASE("preemptions and evictions are remembered per job while the RM lists it") {
  monitor_model m;
  m.on_state(schedule(), 0);
  m.on_event(preempt_event("j-alice", "j-alice.2"), 1000);
  m.on_event(preempt_event("j-alice", "j-alice.3"), 2000);
  m.on_event(evict_event("svc", "svc.2"), 1500);
  m.on_event({"preempt", {{"share", "x.1"}}}, 1600);  // no job named: listed, not attributed
  auto rows = m.jobs();
  CHECK(rows[2].losses.preempted == 2);
  CHECK(rows[2].losses.evicted == 0);
  CHECK(rows[2].losses.last_at_ms == 2000);
  CHECK(rows[4].losses.evicted == 1);
  CHECK(rows[3].losses.preempted == 0);
  CHECK(m.events().size() == 4);
  CHECK(m.events_by_kind().at("preempt") == 3);
  // j-alice finished: the next rm.state no longer lists it, and a job of the same name later starts clean
  auto next = schedule();
  next.jobs.erase(next.jobs.begin() + 1);
  m.on_state(next, 3000);
  next = schedule();
  m.on_state(next, 4000);
  rows = m.jobs();
  CHECK(rows[2].id == "j-alice");
  CHECK(rows[2].losses.preempted == 0);
  CHECK(rows[4].losses.evicted == 1);
}

TEST_CASE("each rm.state and rm.nodes replaces the last: a late joiner is whole after one round") {
  monitor_model m;
  CHECK_FALSE(m.complete());
  CHECK(m.pools().empty());
  CHECK(m.classes().empty());
  CHECK(m.jobs().empty());
  // rm.state before any rm.nodes: the schedule is there, the pools are not yet
  m.on_state(schedule(), 100, "rmbus.1.2");
  CHECK_FALSE(m.complete());
  CHECK(m.jobs().size() == 5);
  CHECK(m.pools().empty());
  CHECK(m.state_src() == "rmbus.1.2");
  m.on_nodes(two_pools(), 110);
  CHECK(m.complete());
  // a later, smaller round replaces it: nothing accumulates
  msg::rm_state later;
  later.cycle = 43;
  later.jobs = {schedule().jobs[0]};
  m.on_state(later, 200);
  REQUIRE(m.classes().size() == 1);
  CHECK(m.classes()[0].total.jobs == 1);
  CHECK(m.classes()[0].users[0].user == "bob");
  msg::rm_nodes fewer;
  fewer.nodes = {two_pools().nodes[4]};
  m.on_nodes(fewer, 210);
  REQUIRE(m.pools().size() == 1);
  CHECK(m.pools()[0].pool == "beta");
  CHECK(m.pools()[0].nodes == 1);
}

TEST_CASE("a round is whole when its rm.nodes follows its rm.state and every pool has its rm.cycle") {
  monitor_model m;
  m.on_nodes(two_pools(), 0);  // the tail of an earlier round
  m.on_state(schedule(), 10);  // round 42
  CHECK(m.complete());
  CHECK_FALSE(m.round_complete());  // these nodes came before this state
  m.on_cycle(cycle("alpha", 42), 11);
  m.on_cycle(cycle("beta", 41), 11);  // an older round's
  m.on_nodes(two_pools(), 12);
  CHECK_FALSE(m.round_complete());  // beta's rm.cycle is not of round 42
  m.on_cycle(cycle("beta", 42), 13);
  CHECK(m.round_complete());
  // an RM restarted and counting rounds from 1 again: its old pools' numbers do not pass for the new round
  msg::rm_state restarted;
  restarted.cycle = 1;
  m.on_state(restarted, 20);
  m.on_nodes(two_pools(), 21);
  CHECK_FALSE(m.round_complete());
}

TEST_CASE("the round period is observed, and a silent RM is called stale only well past it") {
  monitor_model m;
  m.on_state(schedule(), 1000);
  CHECK_FALSE(m.round_interval());
  CHECK_FALSE(m.stale(1'000'000));  // one round seen: no period to judge by
  m.on_state(schedule(), 1500);
  REQUIRE(m.round_interval());
  CHECK(*m.round_interval() == 500);
  // 3 periods = 1.5 s, but never under 2 s
  CHECK_FALSE(m.stale(1500 + 2000));
  CHECK(m.stale(1500 + 2001));
  m.on_state(schedule(), 11'500);  // rounds every 10 s now
  CHECK_FALSE(m.stale(11'500 + 30'000));
  CHECK(m.stale(11'500 + 30'001));
}

TEST_CASE("bad messages: the monitor's own decode failures are counted, the subscriber's only listed") {
  monitor_model m;
  bus_health h;
  h.received = 10;
  h.bad_messages = 2;  // the subscriber's count
  m.set_bus(h);
  m.on_bad_message("rm.state: jobs[0].id: expected string, got unsigned integer", 5, false);
  m.on_bad_message("(no topic): bad envelope", 6, true);
  CHECK(m.bus().bad_messages == 3);
  REQUIRE(m.events().size() == 2);
  CHECK(m.events()[1].kind == "bad_message");
  CHECK(m.events()[1].text == "received here: rm.state: jobs[0].id: expected string, got unsigned integer");
  // the RM's own bad_message events are the RM's business: listed and counted by kind, not as the bus's
  m.on_event(
      {"bad_message", {{"error", "orchestrator.workmap: truncated body"}, {"topic", "orchestrator.workmap"}}},
      7);
  CHECK(m.bus().bad_messages == 3);
  CHECK(m.events_by_kind().at("bad_message") == 1);
}

TEST_CASE("everything fed from the bus is bounded") {
  model_limits limits;
  limits.max_events = 3;
  limits.max_event_text = 20;
  limits.max_event_kinds = 2;
  limits.max_pools = 2;
  limits.max_job_records = 1;
  monitor_model m{limits};
  for (int i = 0; i < 10; ++i) m.on_event({"node_up", {{"node", "n" + std::to_string(i)}}}, i);
  REQUIRE(m.events().size() == 3);
  CHECK(m.events().front().text == "node=n9");
  CHECK(m.events().back().text == "node=n7");
  m.on_event({"x", {{"a", std::string(1000, 'y')}, {"b", "z"}}}, 20);
  CHECK(m.events().front().text.size() == 20);
  m.on_event({"another_kind", {}}, 21);
  CHECK(m.events_by_kind().size() == 2);  // node_up, x: the third kind is listed but not counted
  CHECK(m.events().front().kind == "another_kind");
  m.on_cycle(cycle("p1", 1), 0);
  m.on_cycle(cycle("p2", 1), 0);
  m.on_cycle(cycle("p3", 1), 0);
  m.on_cycle(cycle("p1", 2), 0);  // a known pool is still updated
  REQUIRE(m.cycles().size() == 2);
  CHECK(m.cycles().at("p1").cycle.cycle == 2);
  m.on_state(schedule(), 0);
  m.on_event(preempt_event("j-alice", "j-alice.2"), 30);
  m.on_event(preempt_event("j-bob", "j-bob.1"), 31);  // over the bound: not remembered
  const auto rows = m.jobs();
  CHECK(rows[2].losses.preempted == 1);
  CHECK(rows[3].losses.preempted == 0);
}

TEST_CASE("sums of hostile counts stick at the top instead of wrapping") {
  const auto top = std::numeric_limits<std::uint64_t>::max();
  msg::rm_state s;
  s.jobs = {job("a", "u", "c", msg::job_status::scheduled, {}, top, top, 1),
            job("b", "u", "c", msg::job_status::scheduled, {}, 5, 1, top)};
  monitor_model m;
  m.on_state(s, 0);
  const auto& u = m.classes().at(0).users.at(0);
  CHECK(u.given == top);
  CHECK(u.demand == top);
  CHECK(u.fair_share == top);
}

TEST_CASE("share groups: a class lists its jobs' innermost groups with their users, and users in none") {
  monitor_model m;
  m.on_state(grouped_schedule(), 0);
  const auto c = m.classes();
  REQUIRE(c.size() == 2);
  // fixed has no group: its user directly under it, as without groups at all
  CHECK(c[0].class_name == "fixed");
  CHECK(c[0].groups.empty());
  REQUIRE(c[0].users.size() == 1);
  CHECK(c[0].users[0].user == "carol");
  REQUIRE(c[1].class_name == "normal");
  const auto& normal = c[1];
  // dan is in no group: directly under the class; the groups by name, bio before physics
  REQUIRE(normal.users.size() == 1);
  CHECK(normal.users[0].user == "dan");
  REQUIRE(normal.groups.size() == 2);
  const auto& bio = normal.groups[0];
  const auto& physics = normal.groups[1];
  CHECK(bio.group == "bio");
  CHECK(physics.group == "physics");
  REQUIRE(physics.users.size() == 2);
  CHECK(physics.users[0].user == "ann");
  CHECK(physics.users[1].user == "cat");
  // ann: j-ann 3 running + j-ann2 1 running, 2 quanta each: active 4, quanta 8; given 3 + 1, demand 8 + 1,
  // fair 6 + 1
  CHECK(physics.users[0].active == 4);
  CHECK(physics.users[0].quanta == 8);
  CHECK(physics.users[0].given == 4);
  CHECK(physics.users[0].demand == 9);
  CHECK(physics.users[0].fair_share == 7);
  // physics = ann + cat (1 running + 1 new): jobs 2 + 1, active 4 + 2, quanta 8 + 4, given 4 + 2, demand
  // 9 + 2, fair 7 + 2; 6 < min(11, 9): below its fair share
  CHECK(physics.total.jobs == 3);
  CHECK(physics.total.active == 6);
  CHECK(physics.total.quanta == 12);
  CHECK(physics.total.given == 6);
  CHECK(physics.total.demand == 11);
  CHECK(physics.total.fair_share == 9);
  CHECK(physics.total.below_fair_share());
  // bio = bob: 2 running (his preempted share is leaving), quanta 4, given 2, demand 4, fair 2; 2 < min(4, 2)
  // is false
  REQUIRE(bio.users.size() == 1);
  CHECK(bio.users[0].user == "bob");
  CHECK(bio.total.jobs == 1);
  CHECK(bio.total.active == 2);
  CHECK(bio.total.quanta == 4);
  CHECK_FALSE(bio.total.below_fair_share());
  // the class sums every job, grouped or not: physics + bio + dan: jobs 3 + 1 + 1, active 6 + 2 + 1, quanta
  // 12 + 4 + 2, given 6 + 2 + 1, demand 11 + 4 + 3, fair 9 + 2 + 1
  CHECK(normal.total.jobs == 5);
  CHECK(normal.total.active == 9);
  CHECK(normal.total.quanta == 18);
  CHECK(normal.total.given == 9);
  CHECK(normal.total.demand == 18);
  CHECK(normal.total.fair_share == 12);
  // without groups a class has none, and every user directly under it
  m.on_state(schedule(), 1);
  for (const auto& cls : m.classes()) CHECK(cls.groups.empty());
  CHECK(m.classes()[2].users.size() == 2);
}

TEST_CASE("reclaim deadlines: held processes counted per job, the soonest moved onto the monitor's clock") {
  monitor_model m;
  // sent at the RM's grouped_sent_at_ms, arrived here at 10.0 s on the monitor's clock
  m.on_state(grouped_schedule(), 10'000, "rm", grouped_sent_at_ms);
  const auto rows = m.jobs();
  REQUIRE(rows.size() == 6);
  REQUIRE(rows[0].id == "j-ann");
  // j-ann: deadlines 4.0 s and 1.5 s after sending; the soonest lands at 10.0 + 1.5 s here
  CHECK(rows[0].reclaiming == 2);
  CHECK(rows[0].reclaim_at_ms == std::optional<millis>{11'500});
  REQUIRE(rows[2].id == "j-bob");
  // j-bob: one running share, deadline 0.2 s before sending (10.0 - 0.2 s here); the preempted share's
  // deadline is not counted, it is leaving already
  CHECK(rows[2].reclaiming == 1);
  CHECK(rows[2].reclaim_at_ms == std::optional<millis>{9'800});
  CHECK(rows[2].leaving == 1);
  REQUIRE(rows[1].id == "j-ann2");
  CHECK(rows[1].reclaiming == 0);
  CHECK_FALSE(rows[1].reclaim_at_ms);
  // over every job: 2 + 1
  CHECK(m.reclaiming() == 3);
  // without the time it was sent, the count stands and the time is unknown
  m.on_state(grouped_schedule(), 12'000);
  CHECK(m.jobs()[0].reclaiming == 2);
  CHECK_FALSE(m.jobs()[0].reclaim_at_ms);
  // no deadlines: nothing reclaiming
  m.on_state(schedule(), 13'000, "rm", grouped_sent_at_ms);
  CHECK(m.reclaiming() == 0);
}

TEST_CASE("hostile reclaim deadlines far from the send time are bounded, never overflowing") {
  const auto top = std::numeric_limits<std::uint64_t>::max();
  auto s = grouped_schedule();
  s.jobs[0].shares[0].reclaim_at_ms = top;
  s.jobs[0].shares[1].reclaim_at_ms = top;
  s.jobs[3].shares[1].reclaim_at_ms = 0;
  monitor_model m;
  m.on_state(s, 10'000, "rm", grouped_sent_at_ms);
  const auto rows = m.jobs();
  // at most 2^40 ms (about 35 years) either way of the arrival
  CHECK(rows[0].reclaim_at_ms == std::optional<millis>{10'000 + (millis{1} << 40)});
  CHECK(rows[2].reclaim_at_ms == std::optional<millis>{10'000 - (millis{1} << 40)});
  m.on_state(s, 10'000, "rm", top);
  CHECK(m.jobs()[0].reclaim_at_ms == std::optional<millis>{10'000});
}

TEST_CASE("HA: the monitor shows the highest epoch's schedule and its active instance, ignoring a deposed one's",
          "[ha]") {
  monitor_model m;
  auto old = schedule();
  old.cycle = 10;
  m.on_state(old, 1000, "rmbus.1.a:publisher", std::nullopt, 3);
  CHECK(m.state_epoch() == std::optional<std::uint64_t>{3});
  auto next = schedule();
  next.cycle = 2;
  m.on_state(next, 2000, "rmbus.2.b:publisher", std::nullopt, 4);  // the new active
  CHECK(m.state()->cycle == 2);
  CHECK(m.state_src() == "rmbus.2.b:publisher");
  m.on_state(old, 2500, "rmbus.1.a:publisher", std::nullopt, 3);  // the deposed one, late
  CHECK(m.state()->cycle == 2);
  CHECK(m.stale_states() == 1);
  m.on_nodes(two_pools(), 2600);
  render_options o;
  o.now_ms = 3000;
  o.width = 200;
  const auto s = render(m, o);
  REQUIRE_FALSE(s.lines.empty());
  CHECK_THAT(s.lines[0], Catch::Matchers::Contains("active rmbus.2.b epoch 4 (1 stale ignored)"));
  // HA off: no epoch, shown as before.
  monitor_model plain;
  plain.on_state(schedule(), 1000, "rmbus.9.z:publisher");
  plain.on_nodes(two_pools(), 1100);
  CHECK_THAT(render(plain, o).lines[0], Catch::Matchers::Contains("from rmbus.9.z:publisher"));
}
