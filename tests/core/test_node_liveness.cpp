// node_liveness: DUCC's heartbeat watchdog as pure logic (shared/ducc-rm.md section 2.3).
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/node_liveness.hpp"

using namespace rmbus::core;

namespace {
const machine_id n1("n1");
}

TEST_CASE("interval 30 s, stability 6: missing after one missed heartbeat, down at 3 minutes") {
  node_liveness w(liveness_config{30000, 6, {}});
  auto first = w.heartbeat(n1, 0);
  REQUIRE(first);
  CHECK(first->first_heard);
  CHECK(first->to == node_status::up);

  // tick at 30 s: counter 1 -- normal, the heartbeat of this interval may simply not have come yet
  CHECK(w.tick(30000).empty());
  CHECK(w.status(n1) == node_status::up);
  // tick at 60 s: counter 2 -- a whole interval without a heartbeat: missing
  auto t = w.tick(60000);
  REQUIRE(t.size() == 1);
  CHECK(t[0].from == node_status::up);
  CHECK(t[0].to == node_status::missing);
  CHECK(t[0].missed == 2);
  CHECK(t[0].at_ms == 60000);
  // ticks at 90, 120, 150 s: counters 3, 4, 5 -- still missing, nothing new to report
  for (std::int64_t now = 90000; now <= 150000; now += 30000) CHECK(w.tick(now).empty());
  CHECK(w.missed(n1) == 5);
  // tick at 180 s = 6 x 30 s = 3 minutes: counter 6 = stability -> down
  t = w.tick(180000);
  REQUIRE(t.size() == 1);
  CHECK(t[0].from == node_status::missing);
  CHECK(t[0].to == node_status::down);
  CHECK(t[0].at_ms == 3 * 60 * 1000);
  // down nodes are no longer counted or reported
  CHECK(w.tick(210000).empty());
  CHECK(w.missed(n1) == 6);
  // a heartbeat brings it back up, reported with the count it had reached
  auto back = w.heartbeat(n1, 215000);
  REQUIRE(back);
  CHECK_FALSE(back->first_heard);
  CHECK(back->from == node_status::down);
  CHECK(back->to == node_status::up);
  CHECK(back->missed == 6);
  CHECK(w.missed(n1) == 0);
  CHECK(w.last_heard_ms(n1) == 215000);
}

TEST_CASE("a node heartbeating once per interval never changes status") {
  node_liveness w(liveness_config{30000, 6, {}});
  w.heartbeat(n1, 0);
  for (int k = 1; k <= 100; ++k) {
    // heartbeat somewhere inside each interval, tick at its end: counter reads 1 at every tick
    CHECK_FALSE(w.heartbeat(n1, k * 30000 - 12345));
    CHECK(w.tick(k * 30000).empty());
  }
  CHECK(w.status(n1) == node_status::up);
}

TEST_CASE("a missing node that heartbeats is back up at once") {
  node_liveness w;
  w.heartbeat(n1, 0);
  w.tick(30000);
  w.tick(60000);
  w.tick(90000);  // counter 3: missing
  REQUIRE(w.status(n1) == node_status::missing);
  auto t = w.heartbeat(n1, 95000);
  REQUIRE(t);
  CHECK(t->from == node_status::missing);
  CHECK(t->to == node_status::up);
  CHECK(t->missed == 3);
  // and it needs two more silent ticks to be missing again
  CHECK(w.tick(120000).empty());
  CHECK(w.tick(150000).size() == 1);
}

TEST_CASE("transitions of one tick come out in node-name order") {
  node_liveness w(liveness_config{1000, 3, {}});
  for (const char* n : {"zeta", "alpha", "mid"}) w.heartbeat(machine_id(n), 0);
  w.tick(1000);
  auto t = w.tick(2000);  // all three at counter 2: missing
  REQUIRE(t.size() == 3);
  CHECK(t[0].node == machine_id("alpha"));
  CHECK(t[1].node == machine_id("mid"));
  CHECK(t[2].node == machine_id("zeta"));
  t = w.tick(3000);  // counter 3 = stability: down
  REQUIRE(t.size() == 3);
  CHECK(t[0].to == node_status::down);
  CHECK(w.nodes_with(node_status::down) ==
        std::vector<machine_id>{machine_id("alpha"), machine_id("mid"), machine_id("zeta")});
}

TEST_CASE("stability 2: the first real miss is already death (missing is skipped)") {
  node_liveness w(liveness_config{500, 2, {}});
  w.heartbeat(n1, 0);
  CHECK(w.tick(500).empty());  // counter 1
  auto t = w.tick(1000);       // counter 2 = stability
  REQUIRE(t.size() == 1);
  CHECK(t[0].from == node_status::up);
  CHECK(t[0].to == node_status::down);
}

TEST_CASE("bad configuration is refused with the value named: forget removes a node") {
  CHECK_THROWS_AS(node_liveness(liveness_config{0, 6, {}}), std::invalid_argument);
  CHECK_THROWS_AS(node_liveness(liveness_config{30000, 1, {}}), std::invalid_argument);
  node_liveness w;
  w.heartbeat(n1, 0);
  CHECK(w.known(n1));
  CHECK(w.forget(n1));
  CHECK_FALSE(w.forget(n1));
  CHECK(w.tick(30000).empty());
  CHECK_FALSE(w.known(n1));
}

TEST_CASE("a heartbeat is late only when more than 1.5 intervals after the node's previous one") {
  // interval 1000 ms: late means a gap above 1500 ms
  CHECK_FALSE(heartbeat_late(1000, 1000));
  CHECK_FALSE(heartbeat_late(1500, 1000));  // exactly 1.5 intervals: jitter, not late
  CHECK(heartbeat_late(1501, 1000));
  CHECK(heartbeat_late(4999, 1000));
  CHECK_FALSE(heartbeat_late(0, 1000));
}

TEST_CASE("a heartbeat just before a tick belongs to that tick's interval: jitter never makes a node missing") {
  // Interval 1000 ms. The agent's heartbeats land 10 ms before the watchdog's ticks, then 10 ms after them.
  node_liveness w(liveness_config{1000, 6, {}});
  w.heartbeat(n1, 990);
  CHECK(w.tick(1000).empty());  // heard 10 ms ago (< 500): this interval had its heartbeat, counter stays 0
  CHECK(w.missed(n1) == 0);
  CHECK(w.tick(2000).empty());  // 1010 ms since: counter 1, forgiven as jitter
  w.heartbeat(n1, 2010);        // arrives just after the tick
  CHECK(w.tick(3000).empty());  // 990 ms since: counter 1
  CHECK(w.status(n1) == node_status::up);
  // A node that really stops: heard at 990, then silent.
  node_liveness s(liveness_config{1000, 6, {}});
  s.heartbeat(n1, 990);
  CHECK(s.tick(1000).empty());  // counter 0
  CHECK(s.tick(2000).empty());  // counter 1
  auto t = s.tick(3000);        // counter 2: missing, one interval later than counting alone would say
  REQUIRE(t.size() == 1);
  CHECK(t[0].to == node_status::missing);
}

TEST_CASE("down_since lists the nodes down at or before a cutoff, a heartbeat takes a node off it, a forgotten node is new again") {
  node_liveness w(liveness_config{1000, 2, {}});
  const machine_id a("a"), b("b"), c("c");
  w.heartbeat(a, 0);
  w.heartbeat(b, 0);
  w.heartbeat(c, 0);
  // b keeps heartbeating until 2,000 ms, c throughout; with stability 2 a node is down at its second counted
  // tick without a heartbeat.
  w.tick(1000);  // a: 1
  w.heartbeat(b, 1900);
  w.heartbeat(c, 1900);
  w.tick(2000);  // a: 2 -> down at 2,000 ms
  w.heartbeat(c, 2900);
  w.tick(3000);  // b: 1
  w.heartbeat(c, 3900);
  w.tick(4000);  // b: 2 -> down at 4,000 ms
  CHECK(w.status(a) == node_status::down);
  CHECK(w.status(b) == node_status::down);
  CHECK(w.status(c) == node_status::up);
  // Forget time 1,500 ms at now = 3,500: cutoff 2,000 -> only a (down at 2,000); b went down at 4,000.
  CHECK(w.down_since(3500 - 1500) == std::vector<machine_id>{a});
  // At now = 5,500: cutoff 4,000 -> a and b, in name order; c is up.
  CHECK(w.down_since(5500 - 1500) == std::vector<machine_id>{a, b});
  // a heartbeats again: up, so no longer a candidate.
  w.heartbeat(a, 5600);
  CHECK(w.down_since(5600) == std::vector<machine_id>{b});
  // b forgotten: unknown, and its next heartbeat is a first one.
  CHECK(w.forget(b));
  CHECK_FALSE(w.known(b));
  CHECK(w.down_since(10000).empty());
  auto t = w.heartbeat(b, 6000);
  REQUIRE(t);
  CHECK(t->first_heard);
}

TEST_CASE("with many nodes heard in scrambled order, tick, down_since and nodes_with list them in name order") {
  // The nodes are kept hashed; every list that comes out must still be in name order, whatever the order
  // they were heard in (here a fixed scramble of 500 names, some sharing long prefixes).
  node_liveness w(liveness_config{1000, 3, {}});
  std::vector<machine_id> names;
  for (int i = 0; i < 500; ++i) names.emplace_back("node" + std::to_string((i * 7919) % 500) + ".cluster");
  for (const auto& n : names) w.heartbeat(n, 0);
  std::vector<machine_id> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  const auto nodes_of = [](const std::vector<liveness_transition>& ts) {
    std::vector<machine_id> out;
    for (const auto& t : ts) out.push_back(t.node);
    return out;
  };
  w.tick(1000);
  CHECK(nodes_of(w.tick(2000)) == sorted);  // all missing
  CHECK(w.nodes_with(node_status::missing) == sorted);
  CHECK(nodes_of(w.tick(3000)) == sorted);  // all down
  CHECK(w.nodes_with(node_status::down) == sorted);
  CHECK(w.down_since(3000) == sorted);
  // Every other one speaks again: the rest stay listed, still in order.
  std::vector<machine_id> still_down;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i % 2 == 0) w.heartbeat(names[i], 3500);
    else still_down.push_back(names[i]);
  }
  std::sort(still_down.begin(), still_down.end());
  CHECK(w.down_since(3500) == still_down);
  CHECK(w.nodes_with(node_status::up).size() == names.size() - still_down.size());
}

TEST_CASE("a heartbeat hands back the node's previous last-heard time: 0 for a node never heard") {
  node_liveness w(liveness_config{1000, 3, {}});
  std::int64_t before = -1;
  w.heartbeat(n1, 500, &before);
  CHECK(before == 0);
  w.heartbeat(n1, 1700, &before);
  CHECK(before == 500);
  CHECK(w.last_heard_ms(n1) == 1700);
  // A forgotten node is new again.
  w.forget(n1);
  w.heartbeat(n1, 2000, &before);
  CHECK(before == 0);
}

TEST_CASE("a tick names exactly the nodes whose missed count moved past the forgiven first one") {
  // Interval 1000 ms, stability 4. a heartbeats every interval, b stops after 0, c stops after 1,900 and is
  // down from the start of the last tick on: only silent nodes are named, once per tick while they are
  // counted, and a down node no longer.
  node_liveness w(liveness_config{1000, 4, {}});
  const machine_id a("a"), b("b"), c("c");
  for (const auto& n : {a, b, c}) w.heartbeat(n, 0);
  const auto named = [&](std::int64_t now) {
    std::vector<machine_id> out;
    w.tick(now, &out);
    std::sort(out.begin(), out.end());
    return out;
  };
  CHECK(named(1000).empty());  // all at counter 1: forgiven, nothing a reader sees moved
  w.heartbeat(a, 1900);
  w.heartbeat(c, 1900);
  CHECK(named(2000) == std::vector<machine_id>{b});  // b: counter 2, missing
  w.heartbeat(a, 2900);
  CHECK(named(3000) == std::vector<machine_id>{b});  // b: 3 (missed 2); c: 1, forgiven
  w.heartbeat(a, 3900);
  std::vector<machine_id> out;
  const auto t = w.tick(4000, &out);  // b: 4 = down; c: 2, missing
  std::sort(out.begin(), out.end());
  CHECK(out == std::vector<machine_id>{b, c});
  REQUIRE(t.size() == 2);  // the transitions are among the nodes named
  CHECK(t[0].node == b);
  CHECK(t[0].to == node_status::down);
  CHECK(t[1].node == c);
  CHECK(t[1].to == node_status::missing);
  w.heartbeat(a, 4900);
  CHECK(named(5000) == std::vector<machine_id>{c});  // b is down: no longer counted
  // Without the list the tick counts the same way.
  w.heartbeat(a, 5900);
  CHECK(w.tick(6000).size() == 1);  // c: 4 = down
  CHECK(w.status(c) == node_status::down);
  CHECK(w.status(a) == node_status::up);
}

TEST_CASE("a node's slot reaches its record without its name until the node is forgotten, and a freed slot is reused") {
  node_liveness w(liveness_config{1000, 3, {}});
  const machine_id a("a"), b("b");
  node_liveness::slot sa = 99, sb = 99;
  REQUIRE(w.heartbeat(a, 0, nullptr, &sa));
  REQUIRE(w.heartbeat(b, 0, nullptr, &sb));
  CHECK(sa != sb);
  CHECK(w.slot_of(a) == sa);
  CHECK(w.slot_of(b) == sb);
  CHECK_FALSE(w.slot_of(machine_id("nobody")));
  // By slot, a heartbeat does what one by name does: a's previous time comes back, b is untouched.
  std::int64_t before = -1;
  CHECK_FALSE(w.heartbeat_at(sa, 700, &before));
  CHECK(before == 0);
  CHECK(w.last_heard_ms(a) == 700);
  CHECK(w.last_heard_ms(b) == 0);
  w.tick(1000);
  w.tick(2000);  // b: counter 2, missing; a: heard at 700, counter 2 too
  CHECK(w.missed_at(sb) == 2);
  CHECK(w.status_at(sb) == node_status::missing);
  auto back = w.heartbeat_at(sb, 2100);
  REQUIRE(back);  // missing -> up, reported as a heartbeat by name would
  CHECK(back->node == b);
  CHECK(back->from == node_status::missing);
  CHECK(back->missed == 2);
  CHECK(w.status_at(sb) == node_status::up);
  // Forgotten: its slot refuses, and a new node takes the slot over.
  CHECK(w.forget(a));
  CHECK_THROWS_AS(w.heartbeat_at(sa, 2200), std::out_of_range);
  CHECK_THROWS_AS(w.status_at(sa), std::out_of_range);
  CHECK_THROWS_AS(w.missed_at(12345), std::out_of_range);
  node_liveness::slot sc = 99;
  auto first = w.heartbeat(machine_id("c"), 2300, nullptr, &sc);
  REQUIRE(first);
  CHECK(first->first_heard);
  CHECK(sc == sa);
  CHECK(w.missed_at(sc) == 0);
  CHECK(w.status_at(sc) == node_status::up);
  CHECK(w.nodes_with(node_status::up) == std::vector<machine_id>{b, machine_id("c")});
}

TEST_CASE("the index hashes names with the hash it is given, and stays right when every name collides") {
  int calls = 0;
  liveness_config cfg{1000, 3, {}};
  cfg.name_hash = [&calls](std::string_view) -> std::uint64_t {
    ++calls;
    return 42;  // one bucket for all: what crafted names would do to an unkeyed hash
  };
  node_liveness w(cfg);
  for (int i = 0; i < 200; ++i) w.heartbeat(machine_id{"n" + std::to_string(i)}, 0);
  CHECK(calls >= 200);
  for (int i = 0; i < 200; ++i) CHECK(w.known(machine_id{"n" + std::to_string(i)}));
  CHECK_FALSE(w.known(machine_id{"n200"}));
  // Only n7 speaks again, just before the third tick: after it, n7 alone is up, the others down.
  w.tick(1000);
  w.tick(2000);
  w.heartbeat(machine_id{"n7"}, 2500);
  w.tick(3000);
  CHECK(w.status(machine_id{"n7"}) == node_status::up);
  CHECK(w.status(machine_id{"n8"}) == node_status::down);
  CHECK(w.nodes_with(node_status::up) == std::vector<machine_id>{machine_id{"n7"}});
}
