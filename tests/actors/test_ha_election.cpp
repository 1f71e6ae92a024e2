// The HA election alone, with a fake clock: one total order (epoch, rank, instance), a standby takes over after
// takeover_ms of silence with a ballot above every epoch it has heard (messages/ha_ballot.hpp: round * 10000 +
// rank), the lowest rank first, an active steps down at once on a higher epoch from any source, handovers,
// partitions, candidates of one rank, and the bounds on the peer table and on epochs.
#include <algorithm>

#include <catch2/catch.hpp>

#include "actors/ha_election.hpp"
#include "messages/ha_ballot.hpp"

using namespace rmbus::actors;
using rmbus::messages::ha_state;
using rmbus::messages::rm_ha;
using change = ha_election::change;
using rmbus::messages::ballot;

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

TEST_CASE("a standby takes over after takeover_ms without an active, in the round after every epoch it heard",
          "[ha]") {
  auto e = candidate("b", 1);
  CHECK(e.role() == ha_role::standby);
  e.heard_workmap(std::nullopt, 0);
  e.heard_beacon(beacon("a", ballot(4, 0), ha_state::active), 100);
  CHECK(e.tick(1099).what == change::none);  // 999 ms of silence
  CHECK(e.active_peer()->instance == "a");
  // The orchestrator echoes round 6 of rank 3: an epoch it accepted that this standby never heard itself.
  e.heard_workmap(ballot(6, 3), 500);
  const auto o = e.tick(1100);
  REQUIRE(o.what == change::took_over);
  CHECK(o.epoch == ballot(7, 1));  // 70001: round 7, its own rank 1
  CHECK(o.silence_ms == 1000);
  CHECK(o.by == "a");
  CHECK(e.role() == ha_role::active);
  CHECK(e.epoch() == 70001);
  CHECK(e.beacon(1100).state == ha_state::active);
  CHECK(e.beacon(1100).epoch == 70001);
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
  f.heard_workmap(ballot(9, 2), 200);
  const auto o = f.tick(1000);
  REQUIRE(o.what == change::took_over);
  // Above the orchestrator's echo: both RMs restarted at once still continue above it.
  CHECK(o.epoch == ballot(10, 0));
  // An echo from before ballots (epochs 1, 2, 3...) is round 0.
  auto g = candidate("d", 4, 0);
  g.heard_workmap(7, 200);
  REQUIRE(g.tick(1000).what == change::took_over);
  CHECK(g.epoch() == ballot(1, 4));
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
  CHECK(low.epoch() == ballot(1, 0));
  CHECK(high.epoch() == ballot(2, 5));
}

TEST_CASE("a better standby that never takes over holds the others back at most 2 takeover_ms", "[ha]") {
  auto e = candidate("s2", 2);
  e.heard_workmap(std::nullopt, 0);
  for (std::int64_t t = 0; t < 1900; t += 100) e.heard_beacon(beacon("s1", 0, ha_state::standby, 1), t);
  CHECK(e.tick(1500).what == change::none);
  CHECK(e.tick(2000).what == change::took_over);
}

TEST_CASE("an active steps down at once on a higher epoch from any source", "[ha]") {
  const auto own = ballot(3, 0);
  auto make_active = [own] {
    auto e = candidate("a", 0);
    e.heard_workmap(ballot(2, 1), 0);
    REQUIRE(e.tick(1000).what == change::took_over);
    REQUIRE(e.epoch() == own);
    return e;
  };
  SECTION("a beacon of a higher epoch, even a standby's") {
    auto e = make_active();
    // Round 3 of rank 9: the same round as its own, above it by rank.
    const auto o = e.heard_beacon(beacon("b", ballot(3, 9), ha_state::standby, 9), 1100);
    REQUIRE(o.what == change::demoted);
    CHECK(o.epoch == ballot(3, 9));
    CHECK(o.by == "b");
    CHECK(e.role() == ha_role::standby);
    CHECK(e.beacon(1100).state == ha_state::standby);
    CHECK(e.epoch() == ballot(3, 9));
    // Deposed, it does not take over again while the new active is heard.
    e.heard_beacon(beacon("b", ballot(3, 9), ha_state::active, 9), 1300);
    CHECK(e.tick(2200).what == change::none);
  }
  SECTION("another RM's schedule of a higher epoch") {
    auto e = make_active();
    CHECK(e.heard_schedule(own, "a", 1100).what == change::none);  // its own, back from the bus
    CHECK(e.heard_schedule(ballot(2, 1), "old", 1100).what == change::none);
    CHECK(e.heard_schedule(ballot(4, 2), "b", 1100).what == change::demoted);
  }
  SECTION("the orchestrator's echo above its own epoch") {
    auto e = make_active();
    CHECK(e.heard_workmap(own, 1100).what == change::none);
    const auto o = e.heard_workmap(ballot(3, 1), 1200);
    CHECK(o.what == change::demoted);
    CHECK(o.by == "orchestrator");
  }
  SECTION("another active of the same epoch (a candidate of its rank) that comes first by instance") {
    auto e = make_active();  // rank 0, instance "a"
    CHECK(e.heard_beacon(beacon("0", own, ha_state::active, 0), 1100).what == change::demoted);
    auto g = make_active();
    const auto raised = g.heard_beacon(beacon("b", own, ha_state::active, 0), 1100);  // g comes first
    CHECK(raised.what == change::raised);
    CHECK(raised.epoch == ballot(4, 0));
    CHECK(g.role() == ha_role::active);
  }
  SECTION("a schedule of the same epoch from a peer known to come first") {
    auto e = make_active();
    e.heard_beacon(beacon("b", ballot(2, 0), ha_state::standby, 0), 1050);  // rank 0, "b" > "a": comes after
    CHECK(e.heard_schedule(own, "b", 1100).what == change::none);
    auto f = candidate("m", 0);
    f.heard_workmap(ballot(2, 1), 0);
    REQUIRE(f.tick(1000).what == change::took_over);
    f.heard_beacon(beacon("b", ballot(2, 0), ha_state::standby, 0), 1050);  // rank 0, "b" < "m": comes first
    CHECK(f.heard_schedule(own, "b", 1100).what == change::demoted);
  }
  SECTION("lower epochs change nothing") {
    auto e = make_active();
    CHECK(e.heard_beacon(beacon("z", ballot(2, 7), ha_state::active, 7), 1100).what == change::none);
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
    CHECK(b.epoch == ballot(1, 0));
    auto s1 = candidate("s1", 1);
    auto s2 = candidate("s2", 2);
    const auto o = s1.heard_beacon(b, 3210);
    REQUIRE(o.what == change::took_over);
    CHECK(o.epoch == ballot(2, 1));
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
    CHECK(o.epoch == ballot(2, 0));
  }
}

TEST_CASE("two candidates that never hear each other coin different epochs, and the higher one is the only "
          "active once they meet",
          "[ha]") {
  // A partition between the RM hosts: both heard the same active and the same echo, neither hears the other.
  auto b = candidate("b", 2);
  auto c = candidate("c", 3);
  for (auto* e : {&b, &c}) {
    e->heard_workmap(ballot(1, 1), 0);
    e->heard_beacon(beacon("a", ballot(1, 1), ha_state::active, 1), 0);
  }
  REQUIRE(b.tick(1000).what == change::took_over);
  REQUIRE(c.tick(1000).what == change::took_over);
  // The same round, each with its own rank: a fence by epoch can tell them apart.
  CHECK(b.epoch() == ballot(2, 2));
  CHECK(c.epoch() == ballot(2, 3));
  CHECK(b.epoch() != c.epoch());
  // Healed: the lower epoch steps down on the higher one's beacon; the higher one stays as it is.
  CHECK(c.heard_beacon(b.beacon(1200), 1200).what == change::none);
  const auto o = b.heard_beacon(c.beacon(1200), 1200);
  CHECK(o.what == change::demoted);
  CHECK(o.by == "c");
  CHECK(b.role() == ha_role::standby);
  CHECK(c.role() == ha_role::active);
  CHECK(c.epoch() == ballot(2, 3));
}

TEST_CASE("two actives of one round cut off from each other: the orchestrator's echo of the higher epoch deposes "
          "the lower within one map, which stays a standby while the partition lasts and after it heals",
          "[ha]") {
  auto b = candidate("b", 2);
  b.heard_workmap(ballot(1, 1), 0, 10);
  REQUIRE(b.tick(1000).what == change::took_over);
  REQUIRE(b.epoch() == ballot(2, 2));
  // The orchestrator accepted c's ballot(2, 3): its next map deposes b.
  const auto o = b.heard_workmap(ballot(2, 3), 1300, 12);
  REQUIRE(o.what == change::demoted);
  CHECK(o.by == "orchestrator");
  // For ten seconds of partition the echoed cycle advances under c's epoch: b never takes over again.
  std::int64_t t = 1300;
  std::uint64_t cycle = 12;
  for (int i = 0; i < 50; ++i) {
    t += 200;
    b.heard_workmap(ballot(2, 3), t, ++cycle);
    CHECK(b.tick(t).what == change::none);
  }
  // Healed: c's beacons arrive; b stays a standby and names c as the active.
  b.heard_beacon(beacon("c", ballot(2, 3), ha_state::active, 3), t + 50);
  CHECK(b.tick(t + 100).what == change::none);
  CHECK(b.role() == ha_role::standby);
  CHECK(b.active_peer()->instance == "c");
}

TEST_CASE("candidates of one rank: each sees the other as a configuration error, and equal epochs end in a raise", "[ha]") {
  auto a = candidate("a", 1);
  auto a2 = candidate("a2", 1);
  a.heard_workmap(std::nullopt, 0);
  a2.heard_workmap(std::nullopt, 0);
  CHECK(a.same_rank_peers(0).empty());
  a.heard_beacon(a2.beacon(100), 100);
  a.heard_beacon(beacon("other", 0, ha_state::standby, 2), 100);
  const auto same = a.same_rank_peers(150);
  REQUIRE(same.size() == 1);
  CHECK(same[0].instance == "a2");
  CHECK(a.same_rank_peers(1100).empty());  // not heard for takeover_ms: gone
  CHECK_FALSE(a.ever_active());
  // Cut off from each other, both take over in round 1 with rank 1: the one epoch they then share is what the
  // fence cannot tell apart. When they meet, the first in the order raises to a new ballot and the other steps
  // down.
  REQUIRE(a.tick(3000).what == change::took_over);
  REQUIRE(a2.tick(3000).what == change::took_over);
  CHECK(a.ever_active());
  REQUIRE(a.epoch() == a2.epoch());
  const auto raised = a.heard_beacon(a2.beacon(3100), 3100);
  CHECK(raised.what == change::raised);
  CHECK(raised.epoch == ballot(2, 1));
  CHECK(a2.heard_beacon(a.beacon(3100), 3100).what == change::demoted);
}

TEST_CASE("an epoch above max_epoch is not a ballot: ignored wherever it is heard", "[ha]") {
  const auto huge = rmbus::messages::max_epoch + 1;
  auto e = candidate("e", 0);
  e.heard_workmap(huge, 0);
  CHECK(e.heard_beacon(beacon("x", huge, ha_state::active, 1), 10).what == change::none);
  CHECK(e.heard_schedule(huge, "x", 20).what == change::none);
  CHECK(e.highest_heard() == 0);
  CHECK(e.peers(30).empty());
  REQUIRE(e.tick(1000).what == change::took_over);
  CHECK(e.epoch() == ballot(1, 0));
  CHECK(e.heard_workmap(huge, 1100).what == change::none);
  CHECK(e.role() == ha_role::active);
  CHECK_THROWS_AS(candidate("r", rmbus::messages::ballot_ranks), std::invalid_argument);
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
  // The link between the candidates is cut, not their links to the orchestrator: "a" took over in round 1
  // with rank 0, the other side in the same round with rank 1, and the orchestrator echoes the other's epoch.
  const auto other = ballot(1, 1);
  auto e = candidate("a", 0);
  e.heard_workmap(std::nullopt, 0);
  REQUIRE(e.tick(1000).what == change::took_over);
  REQUIRE(e.epoch() == ballot(1, 0));
  const auto o = e.heard_workmap(other, 1500, 40);
  REQUIRE(o.what == change::demoted);
  // Every map shows a new schedule of the other's epoch acted on: its active is alive, beacons or not.
  std::int64_t t = 1500;
  std::uint64_t cycle = 40;
  for (int i = 0; i < 30; ++i) {
    t += 200;
    e.heard_workmap(other, t, ++cycle);
    CHECK(e.tick(t).what == change::none);
  }
  CHECK(e.role() == ha_role::standby);
  // That active dies: the maps repeat its last cycle. takeover_ms after the last advance, a takeover above it.
  const auto last_advance = t;
  for (int i = 0; i < 4; ++i) {
    t += 200;
    e.heard_workmap(other, t, cycle);
    CHECK(e.tick(t).what == change::none);
  }
  const auto taken = e.tick(last_advance + takeover);
  REQUIRE(taken.what == change::took_over);
  CHECK(taken.epoch == ballot(2, 0));
  CHECK(taken.silence_ms == takeover);
}

TEST_CASE("the echoed rm_cycle does not hold back a standby that heard the active's beacons, nor one whose "
          "orchestrator sends no rm_cycle",
          "[ha]") {
  SECTION("the epoch echoed is the one whose beacons it heard: beacons decide, as in a plain failover") {
    auto e = candidate("b", 1);
    e.heard_workmap(std::nullopt, 0);
    e.heard_beacon(beacon("a", ballot(4, 0), ha_state::active), 100);
    for (std::int64_t t = 200; t < 1100; t += 200) e.heard_workmap(ballot(4, 0), t, static_cast<std::uint64_t>(t));
    CHECK(e.tick(1099).what == change::none);
    CHECK(e.tick(1100).what == change::took_over);
  }
  SECTION("maps without rm_cycle (an orchestrator from before it): silence decides") {
    auto e = candidate("a", 0);
    e.heard_workmap(std::nullopt, 0);
    REQUIRE(e.tick(1000).what == change::took_over);
    REQUIRE(e.heard_workmap(ballot(1, 1), 1500).what == change::demoted);
    for (std::int64_t t = 1700; t < 2500; t += 200) e.heard_workmap(ballot(1, 1), t);
    CHECK(e.tick(2499).what == change::none);
    const auto o = e.tick(2500);
    CHECK(o.what == change::took_over);
    CHECK(o.epoch == ballot(2, 0));
  }
}

TEST_CASE("a handover with a third candidate partitioned: the standby beacons relaying the new active's epoch do "
          "not hide the orchestrator's witness of it, so the third stays a standby",
          "[ha]") {
  // c hears a (on one forwarder) but not b, whom a hands over to. a, now a standby, beacons the highest epoch
  // it heard: b's. Only the orchestrator's echo, its cycles advancing under b's epoch, shows b alive to c.
  auto c = candidate("c", 2);
  const auto a_epoch = ballot(1, 0), b_epoch = ballot(2, 1);
  c.heard_workmap(a_epoch, 0, 1);
  c.heard_beacon(beacon("a", a_epoch, ha_state::active, 0), 0);
  c.heard_beacon(beacon("a", a_epoch, ha_state::handover, 0, "b"), 200);
  std::int64_t t = 200;
  std::uint64_t cycle = 1;
  for (int i = 0; i < 40; ++i) {  // eight seconds, five takeover times
    t += 200;
    c.heard_beacon(beacon("a", b_epoch, ha_state::standby, 0), t);
    c.heard_workmap(b_epoch, t, ++cycle);
    CHECK(c.tick(t).what == change::none);
  }
  CHECK(c.role() == ha_role::standby);
}
