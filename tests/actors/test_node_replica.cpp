// A reader's copy of the node table from numbered changes (the Clone pattern): in step from batch 1, a
// snapshot when it joins late, sees a gap or a restarted intake, and only batches above the snapshot after it.
#include <algorithm>
#include <map>
#include <random>

#include <catch2/catch.hpp>

#include "actors/node_replica.hpp"

namespace msg = rmbus::messages;
using namespace rmbus::actors;
using outcome = node_replica::outcome;

namespace {

msg::node_entry entry(const std::string& node, msg::node_liveness state = msg::node_liveness::up,
                      std::uint64_t missed = 0) {
  msg::node_entry e;
  e.node = node;
  e.pool = "default";
  e.nodepool = "default";
  e.state = state;
  e.missed = missed;
  e.memory_mb = 16384;
  e.quanta = 16;
  return e;
}

msg::node_changes batch(std::uint64_t seq, std::vector<msg::node_entry> changed) {
  msg::node_changes b;
  b.seq = seq;
  b.changed = std::move(changed);
  return b;
}

}  // namespace

TEST_CASE("a reader there from the start applies batch 1 on and reports liveness changes") {
  node_replica r;
  std::vector<liveness_change> ch;
  CHECK(r.apply("intake-a", batch(1, {entry("n1"), entry("n2")}), ch) == outcome::applied);
  CHECK(r.in_step());
  CHECK(r.nodes().size() == 2);
  REQUIRE(ch.size() == 2);
  CHECK_FALSE(ch[0].before.has_value());  // new to the table
  ch.clear();
  // n1 goes missing, n2 reports only a new missed count: one liveness change.
  CHECK(r.apply("intake-a", batch(2, {entry("n1", msg::node_liveness::missing, 1)}), ch) == outcome::applied);
  REQUIRE(ch.size() == 1);
  CHECK(ch[0] == liveness_change{"n1", msg::node_liveness::up, msg::node_liveness::missing});
  CHECK(r.find("n1")->missed == 1);
  CHECK(r.find("n2")->state == msg::node_liveness::up);  // untouched: not in the batch
  CHECK(r.seq() == 2);
}

TEST_CASE("a late reader asks for a snapshot once, then applies only the batches above it") {
  node_replica r;
  std::vector<liveness_change> ch;
  CHECK(r.apply("intake-a", batch(7, {entry("n3")}), ch) == outcome::need_snapshot);
  CHECK(r.apply("intake-a", batch(8, {entry("n1", msg::node_liveness::down, 5)}), ch) == outcome::waiting);
  CHECK_FALSE(r.in_step());
  CHECK(r.nodes().empty());
  // The snapshot is as of batch 7: batch 7 is in it, batch 8 is applied after it.
  msg::node_snapshot snap;
  snap.seq = 7;
  snap.nodes = {entry("n1"), entry("n2"), entry("n3")};
  CHECK(r.apply("intake-a", snap, ch) == outcome::applied);
  CHECK(r.in_step());
  CHECK(r.seq() == 8);
  CHECK(r.nodes().size() == 3);
  CHECK(r.find("n1")->state == msg::node_liveness::down);
  // n1 appeared up (snapshot), then went down (batch 8): eviction sees the down.
  CHECK(std::count(ch.begin(), ch.end(), liveness_change{"n1", msg::node_liveness::up, msg::node_liveness::down}) == 1);
}

TEST_CASE("a gap in the batch numbers puts the reader out of step until a snapshot") {
  node_replica r;
  std::vector<liveness_change> ch;
  REQUIRE(r.apply("intake-a", batch(1, {entry("n1")}), ch) == outcome::applied);
  CHECK(r.apply("intake-a", batch(1, {entry("n1")}), ch) == outcome::applied);  // a duplicate: ignored
  CHECK(r.seq() == 1);
  CHECK(r.apply("intake-a", batch(3, {entry("n2")}), ch) == outcome::need_snapshot);  // batch 2 was lost
  CHECK_FALSE(r.in_step());
  CHECK(r.find("n2") == nullptr);  // nothing applied out of order
  msg::node_snapshot snap;
  snap.seq = 3;
  snap.nodes = {entry("n1"), entry("n2")};
  CHECK(r.apply("intake-a", snap, ch) == outcome::applied);
  CHECK(r.find("n2") != nullptr);
  CHECK(r.apply("intake-a", batch(4, {}), ch) == outcome::applied);
}

TEST_CASE("a restarted intake (another src) starts afresh: its snapshot replaces the table") {
  node_replica r;
  std::vector<liveness_change> ch;
  REQUIRE(r.apply("intake-a", batch(1, {entry("n1"), entry("old")}), ch) == outcome::applied);
  CHECK(r.apply("intake-b", batch(1, {entry("n1")}), ch) == outcome::need_snapshot);
  msg::node_snapshot snap;
  snap.seq = 1;
  snap.nodes = {entry("n1")};
  CHECK(r.apply("intake-b", snap, ch) == outcome::applied);
  CHECK(r.source() == "intake-b");
  CHECK(r.nodes().size() == 1);
  CHECK(r.find("old") == nullptr);
}

TEST_CASE("kept batches are bounded: a snapshot that no longer meets them is asked for again") {
  node_replica r{2};
  std::vector<liveness_change> ch;
  CHECK(r.apply("intake-a", batch(5, {}), ch) == outcome::need_snapshot);
  CHECK(r.apply("intake-a", batch(6, {}), ch) == outcome::waiting);
  CHECK(r.apply("intake-a", batch(7, {}), ch) == outcome::waiting);  // batch 5 dropped: at most 2 kept
  msg::node_snapshot snap;
  snap.seq = 4;  // older than the kept batches: 5 is missing in between
  CHECK(r.apply("intake-a", snap, ch) == outcome::need_snapshot);
  CHECK_FALSE(r.in_step());
  snap.seq = 7;
  CHECK(r.apply("intake-a", snap, ch) == outcome::applied);
  CHECK(r.in_step());
}

TEST_CASE("a batch's forgotten nodes leave the table and are reported, as are nodes a snapshot no longer has") {
  node_replica r;
  std::vector<liveness_change> ch;
  REQUIRE(r.apply("intake-a", batch(1, {entry("n1"), entry("n2", msg::node_liveness::down), entry("n3")}), ch) ==
          outcome::applied);
  ch.clear();
  auto b = batch(2, {entry("n3", msg::node_liveness::missing, 1)});
  b.forgotten = {"n2", "never-known"};
  CHECK(r.apply("intake-a", b, ch) == outcome::applied);
  CHECK(r.find("n2") == nullptr);
  CHECK(r.nodes().size() == 2);
  // n3's liveness change, then n2 forgotten (in its last state, with its pool); the unknown name is skipped.
  REQUIRE(ch.size() == 2);
  CHECK(ch[0] == liveness_change{"n3", msg::node_liveness::up, msg::node_liveness::missing});
  CHECK(ch[1] == liveness_change{"n2", msg::node_liveness::down, msg::node_liveness::down, true, "default"});
  // A forgotten node that heartbeats again is new to the table.
  ch.clear();
  CHECK(r.apply("intake-a", batch(3, {entry("n2")}), ch) == outcome::applied);
  REQUIRE(ch.size() == 1);
  CHECK_FALSE(ch[0].before.has_value());
  // A snapshot without n1 (forgotten in a batch this reader lost) reports it forgotten too.
  ch.clear();
  msg::node_snapshot snap;
  snap.seq = 9;
  snap.nodes = {entry("n2"), entry("n3", msg::node_liveness::missing, 1)};
  CHECK(r.apply("intake-a", batch(9, {}), ch) == outcome::need_snapshot);
  CHECK(r.apply("intake-a", snap, ch) == outcome::applied);
  CHECK(std::count(ch.begin(), ch.end(), liveness_change{"n1", msg::node_liveness::up, msg::node_liveness::up, true, "default"}) == 1);
  CHECK(r.find("n1") == nullptr);
}

TEST_CASE("the pool sizes follow the table through new nodes, moves between pools, forgotten nodes and snapshots") {
  // What eviction's guard asks at every tick, kept as the table changes: checked against a count of the table
  // after every step of a random run.
  const auto counted = [](const node_replica& r) {
    std::map<std::string, std::size_t> sizes;
    for (const auto& [name, e] : r.nodes()) ++sizes[e.pool];
    return sizes;
  };
  std::mt19937 rng{7};
  const auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const auto in_pool = [](const std::string& node, int pool) {
    auto e = entry(node);
    e.pool = "pool" + std::to_string(pool);
    return e;
  };
  node_replica r;
  std::vector<liveness_change> ch;
  std::uint64_t seq = 0;
  bool moved = false, emptied = false;
  std::map<std::string, std::size_t> pools;
  for (int step = 0; step < 2000; ++step) {
    if (step % 97 == 96) {
      // A restarted intake's snapshot: a table of its own, a name twice kept once.
      msg::node_snapshot snap;
      snap.seq = seq = 1;
      for (int i = 0; i < 10; ++i) snap.nodes.push_back(in_pool("n" + std::to_string(pick(12)), pick(3)));
      snap.nodes.push_back(snap.nodes.front());
      REQUIRE(r.apply("intake-" + std::to_string(step), batch(1, {}), ch) == outcome::need_snapshot);
      REQUIRE(r.apply("intake-" + std::to_string(step), snap, ch) == outcome::applied);
    } else {
      auto b = batch(++seq, {});
      for (int i = pick(4); i > 0; --i) {
        const auto node = "n" + std::to_string(pick(12));
        const auto* before = r.find(node);
        b.changed.push_back(in_pool(node, pick(3)));
        moved = moved || (before != nullptr && before->pool != b.changed.back().pool);
      }
      for (int i = pick(3); i > 0; --i) b.forgotten.push_back("n" + std::to_string(pick(12)));
      REQUIRE(r.apply(r.source().empty() ? "intake-a" : r.source(), b, ch) == outcome::applied);
    }
    const auto before = pools;
    pools = r.pool_sizes();
    REQUIRE(pools == counted(r));
    for (const auto& [pool, n] : before) emptied = emptied || pools.count(pool) == 0;
  }
  CHECK(moved);    // the run did move nodes between pools
  CHECK(emptied);  // and emptied a pool, which then is absent
}
