// The HA election alone, with a fake clock: one total order (epoch, rank, instance), a standby takes over after
// takeover_ms of silence above every epoch it has heard, the lowest rank first, an active steps down at once on
// a higher epoch from any source, handovers, and the bound on the peer table.
#include <algorithm>

#include <catch2/catch.hpp>

#include "actors/ha_election.hpp"

using namespace rmbus::actors;
using rmbus::messages::ha_state;
using rmbus::messages::rm_ha;
using change = ha_election::change;

namespace {

constexpr std::int64_t takeover = 1000;

ha_election candidate(const std::string& instance, std::uint64_t rank, std::int64_t now = 0) {
  return ha_election{{instance, rank, takeover, "tcp://" + instance + ":5562"}, now};
}

rm_ha beacon(const std::string& instance, std::uint64_t epoch, ha_state state, std::uint64_t rank = 0,
             std::string to = {}) {
  return rm_ha{epoch, instance, rank, state, "tcp://" + instance + ":5562", std::move(to)};
}

}  // namespace

TEST_CASE("one total order: higher epoch, then lower rank, then smaller instance", "[ha]") {
  CHECK(outranks({3, 9, "z"}, {2, 0, "a"}));
  CHECK_FALSE(outranks({2, 0, "a"}, {3, 9, "z"}));
  CHECK(outranks({3, 0, "z"}, {3, 1, "a"}));
  CHECK(outranks({3, 1, "a"}, {3, 1, "b"}));
  CHECK_FALSE(outranks({3, 1, "a"}, {3, 1, "a"}));  // irreflexive
}

TEST_CASE("a standby takes over after takeover_ms without an active, one above every epoch it heard", "[ha]") {
  auto e = candidate("b", 1);
  CHECK(e.role() == ha_role::standby);
  e.heard_workmap(std::nullopt, 0);
  e.heard_beacon(beacon("a", 4, ha_state::active), 100);
  CHECK(e.tick(1099).what == change::none);  // 999 ms of silence
  CHECK(e.active_peer()->instance == "a");
  // The orchestrator echoes 6: some RM's epoch 6 was accepted that this standby never heard itself.
  e.heard_workmap(6, 500);
  const auto o = e.tick(1100);
  REQUIRE(o.what == change::took_over);
  CHECK(o.epoch == 7);
  CHECK(o.silence_ms == 1000);
  CHECK(o.by == "a");
  CHECK(e.role() == ha_role::active);
  CHECK(e.epoch() == 7);
  CHECK(e.beacon(1100).state == ha_state::active);
  CHECK(e.beacon(1100).epoch == 7);
  CHECK(e.tick(5000).what == change::none);  // an active never "takes over" again
}

TEST_CASE("an active's beacons keep a standby a standby, and rm.state of the active counts as alive too", "[ha]") {
  auto e = candidate("b", 1);
  e.heard_workmap(std::nullopt, 0);
  for (std::int64_t t = 0; t < 10'000; t += 200) {
    e.heard_beacon(beacon("a", 1, ha_state::active), t);
    CHECK(e.tick(t + 150).what == change::none);
  }
  // Beacons lost, schedules still arriving.
  for (std::int64_t t = 10'000; t < 13'000; t += 300) {
    e.heard_schedule(1, "a", t);
    CHECK(e.tick(t + 100).what == change::none);
  }
  CHECK(e.tick(14'000).what == change::took_over);
}

TEST_CASE("a fresh process waits to hear a work map, at most 3 takeover_ms", "[ha]") {
  auto e = candidate("b", 0, 0);
  CHECK(e.tick(1500).what == change::none);
  CHECK(e.tick(2999).what == change::none);
  CHECK(e.tick(3000).what == change::took_over);
  auto f = candidate("c", 0, 0);
  f.heard_workmap(9, 200);
  const auto o = f.tick(1000);
  REQUIRE(o.what == change::took_over);
  CHECK(o.epoch == 10);  // above the orchestrator's echo: both RMs restarted at once still continue above it
}

TEST_CASE("among standbys the lowest rank takes over, the others wait for it at most twice takeover_ms", "[ha]") {
  auto low = candidate("s-low", 0);
  auto high = candidate("s-high", 5);
  for (auto* e : {&low, &high}) e->heard_workmap(1, 0);
  for (std::int64_t t = 0; t <= 1000; t += 200) {
    high.heard_beacon(low.beacon(t), t);
    low.heard_beacon(high.beacon(t), t);
  }
  CHECK(high.tick(1000).what == change::none);  // s-low is alive and comes first
  const auto o = low.tick(1000);
  REQUIRE(o.what == change::took_over);
  high.heard_beacon(low.beacon(1050), 1050);
  CHECK(high.active_peer()->instance == "s-low");
  CHECK(high.tick(2049).what == change::none);
  // Had s-low died as well (nothing heard since 1050), s-high goes after takeover_ms of its silence.
  CHECK(high.tick(2050).what == change::took_over);
  CHECK(high.epoch() == 3);
}

TEST_CASE("a better standby that never takes over holds the others back at most 2 takeover_ms", "[ha]") {
  auto e = candidate("s2", 2);
  e.heard_workmap(std::nullopt, 0);
  for (std::int64_t t = 0; t < 1900; t += 100) e.heard_beacon(beacon("s1", 0, ha_state::standby, 1), t);
  CHECK(e.tick(1500).what == change::none);
  CHECK(e.tick(2000).what == change::took_over);
}

TEST_CASE("an active steps down at once on a higher epoch from any source", "[ha]") {
  auto make_active = [] {
    auto e = candidate("a", 0);
    e.heard_workmap(2, 0);
    REQUIRE(e.tick(1000).what == change::took_over);
    REQUIRE(e.epoch() == 3);
    return e;
  };
  SECTION("a beacon of a higher epoch, even a standby's") {
    auto e = make_active();
    const auto o = e.heard_beacon(beacon("b", 4, ha_state::standby, 9), 1100);
    REQUIRE(o.what == change::demoted);
    CHECK(o.epoch == 4);
    CHECK(o.by == "b");
    CHECK(e.role() == ha_role::standby);
    CHECK(e.beacon(1100).state == ha_state::standby);
    CHECK(e.epoch() == 4);
    // Deposed, it does not take over again while the new active is heard.
    e.heard_beacon(beacon("b", 4, ha_state::active, 9), 1300);
    CHECK(e.tick(2200).what == change::none);
  }
  SECTION("another RM's schedule of a higher epoch") {
    auto e = make_active();
    CHECK(e.heard_schedule(3, "a", 1100).what == change::none);  // its own, back from the bus
    CHECK(e.heard_schedule(2, "old", 1100).what == change::none);
    CHECK(e.heard_schedule(5, "b", 1100).what == change::demoted);
  }
  SECTION("the orchestrator's echo above its own epoch") {
    auto e = make_active();
    CHECK(e.heard_workmap(3, 1100).what == change::none);
    const auto o = e.heard_workmap(4, 1200);
    CHECK(o.what == change::demoted);
    CHECK(o.by == "orchestrator");
  }
  SECTION("another active of the same epoch that comes first by rank, then by instance") {
    auto e = make_active();  // rank 0, instance "a", epoch 3
    CHECK(e.heard_beacon(beacon("0", 3, ha_state::active, 0), 1100).what == change::demoted);
    auto g = make_active();
    CHECK(g.heard_beacon(beacon("b", 3, ha_state::active, 1), 1100).what == change::raised);  // g comes first
    CHECK(g.role() == ha_role::active);
  }
  SECTION("a schedule of the same epoch from a peer known to come first") {
    auto e = make_active();
    e.heard_beacon(beacon("b", 2, ha_state::standby, 0), 1050);  // rank 0, "b" > "a": comes after
    CHECK(e.heard_schedule(3, "b", 1100).what == change::none);
    auto f = candidate("m", 4);
    f.heard_workmap(2, 0);
    REQUIRE(f.tick(1000).what == change::took_over);
    f.heard_beacon(beacon("b", 2, ha_state::standby, 1), 1050);
    CHECK(f.heard_schedule(3, "b", 1100).what == change::demoted);
  }
  SECTION("lower epochs change nothing") {
    auto e = make_active();
    CHECK(e.heard_beacon(beacon("z", 2, ha_state::active), 1100).what == change::none);
    CHECK(e.role() == ha_role::active);
  }
}

TEST_CASE("handover: to the best standby, to a named one, and the errors", "[ha]") {
  auto a = candidate("a", 0);
  a.heard_workmap(std::nullopt, 0);
  REQUIRE(a.tick(3000).what == change::took_over);
  SECTION("no standby heard") {
    const auto r = a.handover(std::nullopt, 3100);
    CHECK_FALSE(r.ok);
    CHECK(r.error == "no standby heard in the last 1000 ms: nothing to hand over to");
    CHECK(a.role() == ha_role::active);
  }
  a.heard_beacon(beacon("s2", 0, ha_state::standby, 2), 3100);
  a.heard_beacon(beacon("s1", 0, ha_state::standby, 1), 3100);
  SECTION("a named standby not heard") {
    const auto r = a.handover(std::string{"s9"}, 3200);
    CHECK_FALSE(r.ok);
    CHECK(r.error == "no standby 's9' heard in the last 1000 ms (standbys heard: s1, s2)");
    CHECK(a.role() == ha_role::active);
  }
  SECTION("the best standby by rank, which takes over at once on the handover beacon") {
    const auto r = a.handover(std::nullopt, 3200);
    REQUIRE(r.ok);
    CHECK(r.target == "s1");
    CHECK(a.role() == ha_role::standby);
    const auto b = a.beacon(3200);
    CHECK(b.state == ha_state::handover);
    CHECK(b.to == "s1");
    CHECK(b.epoch == 1);
    auto s1 = candidate("s1", 1);
    auto s2 = candidate("s2", 2);
    const auto o = s1.heard_beacon(b, 3210);
    REQUIRE(o.what == change::took_over);
    CHECK(o.epoch == 2);
    CHECK(o.by == "a");
    CHECK(s2.heard_beacon(b, 3210).what == change::none);  // not named: it waits
    // The old active hears the new one: its handover is done, it is a plain standby.
    a.heard_beacon(s1.beacon(3300), 3300);
    CHECK(a.beacon(3300).state == ha_state::standby);
    CHECK(a.active_peer()->instance == "s1");
  }
  SECTION("a named standby, though another ranks better") {
    const auto r = a.handover(std::string{"s2"}, 3200);
    REQUIRE(r.ok);
    CHECK(r.target == "s2");
    CHECK(a.beacon(3200).to == "s2");
  }
  SECTION("a standby cannot hand over") {
    auto s = candidate("s", 0);
    CHECK_FALSE(s.handover(std::nullopt, 0).ok);
  }
  SECTION("a handover nobody takes up ends in the usual takeover") {
    REQUIRE(a.handover(std::nullopt, 3200).ok);
    CHECK(a.tick(4100).what == change::none);
    const auto o = a.tick(4200);
    CHECK(o.what == change::took_over);
    CHECK(o.epoch == 2);
  }
}

TEST_CASE("two actives at once (a partition): when they hear each other the lower one steps down", "[ha]") {
  auto a = candidate("a", 0);
  auto b = candidate("b", 1);
  a.heard_workmap(1, 0);
  b.heard_workmap(1, 0);
  REQUIRE(a.tick(1000).what == change::took_over);  // epoch 2
  // b never heard a: it takes over too, with the same epoch.
  REQUIRE(b.tick(1000).what == change::took_over);
  CHECK(a.epoch() == b.epoch());
  // Healed: a comes first (rank 0), so b steps down, and a raises its epoch so that b's late schedules, of the
  // shared epoch, are refused by the orchestrators.
  const auto b_beacon = b.beacon(1200);
  const auto raised = a.heard_beacon(b_beacon, 1200);
  CHECK(raised.what == change::raised);
  CHECK(raised.epoch == 3);
  CHECK(a.epoch() == 3);
  CHECK(a.beacon(1200).epoch == 3);
  CHECK(b.heard_beacon(a.beacon(1200), 1200).what == change::demoted);
  CHECK(a.role() == ha_role::active);
  CHECK(b.role() == ha_role::standby);
  CHECK(b.epoch() == 3);
  // b's old beacon, late, changes nothing any more.
  CHECK(a.heard_beacon(b_beacon, 1250).what == change::none);
}

TEST_CASE("the peer table is bounded: a flood of invented instances keeps at most max_peers", "[ha]") {
  auto e = candidate("me", 0);
  for (int i = 0; i < 1000; ++i) e.heard_beacon(beacon("x" + std::to_string(i), 0, ha_state::standby), i);
  const auto peers = e.peers(1000);
  CHECK(peers.size() <= ha_election::max_peers);
  // The newest are kept.
  CHECK(std::any_of(peers.begin(), peers.end(), [](const ha_peer& p) { return p.instance == "x999"; }));
  // Our own beacon back from the bus is not a peer.
  e.heard_beacon(e.beacon(1000), 1000);
  for (const auto& p : e.peers(1000)) CHECK(p.instance != "me");
}

TEST_CASE("a standby deposed by the orchestrator's echo, hearing no beacon of that epoch, waits while the echoed "
          "rm_cycle advances and takes over once it stops",
          "[ha]") {
  // The link between the candidates is cut, not their links to the orchestrator: "a" took over at epoch 1,
  // the other side took over at 2 and the orchestrator echoes 2.
  auto e = candidate("a", 0);
  e.heard_workmap(std::nullopt, 0);
  REQUIRE(e.tick(1000).what == change::took_over);
  REQUIRE(e.epoch() == 1);
  const auto o = e.heard_workmap(2, 1500, 40);
  REQUIRE(o.what == change::demoted);
  // Every map shows a new schedule of epoch 2 acted on: its active is alive, beacons or not.
  std::int64_t t = 1500;
  std::uint64_t cycle = 40;
  for (int i = 0; i < 30; ++i) {
    t += 200;
    e.heard_workmap(2, t, ++cycle);
    CHECK(e.tick(t).what == change::none);
  }
  CHECK(e.role() == ha_role::standby);
  // That active dies: the maps repeat its last cycle. takeover_ms after the last advance, a takeover above 2.
  const auto last_advance = t;
  for (int i = 0; i < 4; ++i) {
    t += 200;
    e.heard_workmap(2, t, cycle);
    CHECK(e.tick(t).what == change::none);
  }
  const auto taken = e.tick(last_advance + takeover);
  REQUIRE(taken.what == change::took_over);
  CHECK(taken.epoch == 3);
  CHECK(taken.silence_ms == takeover);
}

TEST_CASE("the echoed rm_cycle does not hold back a standby that heard the active's beacons, nor one whose "
          "orchestrator sends no rm_cycle",
          "[ha]") {
  SECTION("the epoch echoed is the one whose beacons it heard: beacons decide, as in a plain failover") {
    auto e = candidate("b", 1);
    e.heard_workmap(std::nullopt, 0);
    e.heard_beacon(beacon("a", 4, ha_state::active), 100);
    for (std::int64_t t = 200; t < 1100; t += 200) e.heard_workmap(4, t, static_cast<std::uint64_t>(t));
    CHECK(e.tick(1099).what == change::none);
    CHECK(e.tick(1100).what == change::took_over);
  }
  SECTION("maps without rm_cycle (an orchestrator from before it): silence decides") {
    auto e = candidate("a", 0);
    e.heard_workmap(std::nullopt, 0);
    REQUIRE(e.tick(1000).what == change::took_over);
    REQUIRE(e.heard_workmap(2, 1500).what == change::demoted);
    for (std::int64_t t = 1700; t < 2500; t += 200) e.heard_workmap(2, t);
    CHECK(e.tick(2499).what == change::none);
    const auto o = e.tick(2500);
    CHECK(o.what == change::took_over);
    CHECK(o.epoch == 3);
  }
}
