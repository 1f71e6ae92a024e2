// rm.nodes kept between publications: the intake's table merged with the pools' machines, each entry by the
// rules of the report built afresh, and only the nodes named since rebuilt. Random sequences of batches,
// plans and snapshots check the kept report against a fresh build after every step; a report still held by
// its encoder is never changed under it.
#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

#include "actors/node_report_table.hpp"

namespace msg = rmbus::messages;
using namespace rmbus::actors;

namespace {

msg::node_entry entry(const std::string& node, const std::string& pool, msg::node_liveness state = msg::node_liveness::up,
                      std::uint64_t missed = 0) {
  msg::node_entry e;
  e.node = node;
  e.pool = pool;
  e.nodepool = pool;
  e.state = state;
  e.missed = missed;
  e.memory_mb = 16384;
  e.quanta = 16;
  return e;
}

msg::machine_summary machine(const std::string& node, const std::string& nodepool, msg::machine_status state,
                             std::uint64_t quanta, std::uint64_t free) {
  return {node, nodepool, state, false, quanta * 1024, quanta, free};
}

msg::pool_plan plan_of(const std::string& pool, std::vector<msg::machine_summary> machines, bool complete = false) {
  msg::pool_plan p;
  p.pool = pool;
  p.machines = std::move(machines);
  p.machines_complete = complete;
  return p;
}

const msg::rm_nodes& nodes_of(const std::shared_ptr<const msg::payload>& p) { return std::get<msg::rm_nodes>(*p); }

}  // namespace

TEST_CASE("rm.nodes merges the intake's liveness with the pool's machines") {
  node_report_table t;
  std::vector<liveness_change> ch;
  msg::node_changes b;
  b.seq = 1;
  b.changed = {entry("n1", "default"), entry("n2", "default", msg::node_liveness::down, 4), entry("n3", "default")};
  t.apply("intake", b, ch);
  t.take_machines(plan_of("default", {machine("n1", "default/a", msg::machine_status::up, 16, 10),
                                      machine("n2", "default", msg::machine_status::up, 16, 16),
                                      machine("x9", "default", msg::machine_status::varied_off, 8, 0)}));
  const auto report = t.report();
  const auto& nodes = nodes_of(report).nodes;
  REQUIRE(nodes.size() == 4);
  CHECK(nodes[0].node == "n1");
  CHECK(nodes[0].nodepool == "default/a");  // the plan's nested pool
  CHECK(nodes[0].free_quanta == 10);
  CHECK(nodes[1].state == msg::node_state::down);  // the intake's down wins over the plan's up
  CHECK(nodes[1].missed == 4);
  CHECK(nodes[2].node == "n3");
  CHECK(nodes[2].free_quanta == 0);  // no plan listed it yet: no memory promised
  CHECK(nodes[3].node == "x9");      // a machine the intake does not know, listed after, in name order
  CHECK(nodes[3].state == msg::node_state::varied_off);
  CHECK(t.order_of("n1") == 16u);
  CHECK_FALSE(t.order_of("n3").has_value());
}

TEST_CASE("a node the intake forgets takes its machine and its order with it") {
  node_report_table t;
  std::vector<liveness_change> ch;
  msg::node_changes b;
  b.seq = 1;
  b.changed = {entry("n1", "default"), entry("n2", "default")};
  t.apply("intake", b, ch);
  t.take_machines(plan_of("default", {machine("n1", "default", msg::machine_status::up, 16, 4),
                                      machine("n2", "default", msg::machine_status::up, 16, 4)}));
  REQUIRE(nodes_of(t.report()).nodes.size() == 2);
  msg::node_changes gone;
  gone.seq = 2;
  gone.forgotten = {"n2"};
  t.apply("intake", gone, ch);
  const auto& nodes = nodes_of(t.report()).nodes;
  REQUIRE(nodes.size() == 1);
  CHECK(nodes[0].node == "n1");
  CHECK_FALSE(t.order_of("n2").has_value());
  CHECK(t.machine("n2") == nullptr);
}

TEST_CASE("the kept rm.nodes equals a fresh build after every batch, plan and snapshot") {
  const std::vector<std::string> pools{"alpha", "beta"};
  const auto seed = GENERATE(1u, 2u, 3u, 4u);
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto name = [](int i) { return "n" + std::to_string(i); };

  node_report_table t;
  std::map<std::string, msg::node_entry> intake;  // what the intake's table holds, to snapshot it
  std::uint64_t seq = 0;
  std::vector<liveness_change> ch;
  std::shared_ptr<const msg::payload> held;  // a report still in the encoder's hands
  msg::rm_nodes held_copy;
  int rebuilt_whole = 0;

  for (int step = 0; step < 400; ++step) {
    const int what = pick(10);
    if (what < 4) {  // an intake batch: some nodes change, new ones join, now and then one is forgotten
      msg::node_changes b;
      b.seq = ++seq;
      for (int k = 0, n = 1 + pick(4); k < n; ++k) {
        const auto node = name(pick(40));
        auto e = entry(node, pools[static_cast<std::size_t>(pick(2))],
                       static_cast<msg::node_liveness>(pick(3)), static_cast<std::uint64_t>(pick(5)));
        e.quiesced = pick(4) == 0;
        if (auto it = intake.find(node); it != intake.end()) e.pool = it->second.pool;  // a node keeps its pool
        intake[node] = e;
        b.changed.push_back(e);
      }
      if (pick(8) == 0 && !intake.empty()) {
        auto it = std::next(intake.begin(), pick(static_cast<int>(intake.size())));
        if (std::none_of(b.changed.begin(), b.changed.end(), [&](const auto& e) { return e.node == it->first; })) {
          b.forgotten.push_back(it->first);
          intake.erase(it);
        }
      }
      t.apply("intake", b, ch);
    } else if (what < 8) {  // a pool's plan: the machines that changed, now and then all of them
      const auto& pool = pools[static_cast<std::size_t>(pick(2))];
      std::vector<msg::machine_summary> ms;
      for (const auto& [node, e] : intake)
        if (e.pool == pool && pick(3) == 0)
          ms.push_back(machine(node, pool + (pick(2) == 0 ? "" : "/nested"), static_cast<msg::machine_status>(pick(4)),
                               16, static_cast<std::uint64_t>(pick(17))));
      t.take_machines(plan_of(pool, std::move(ms), pick(6) == 0));
    } else if (what == 8) {  // a snapshot of the intake's table (a replica that fell out of step)
      msg::node_snapshot snap;
      snap.seq = seq;
      for (const auto& [node, e] : intake) snap.nodes.push_back(e);
      t.apply("intake", snap, ch);
      ++rebuilt_whole;
    } else {  // publication: the kept report must be the fresh one, and a held one must not have moved
      const auto report = t.report();
      CHECK(nodes_of(report) == t.build_report());
      // Its entries kept packed, each the entry as it is now.
      const auto& kept = nodes_of(report);
      REQUIRE(kept.encoded_nodes.size() == kept.nodes.size());
      for (std::size_t k = 0; k < kept.nodes.size(); ++k)
        REQUIRE(kept.encoded_nodes[k] == msg::encode_node_entry(kept.nodes[k]));
      if (held) CHECK(nodes_of(held) == held_copy);
      if (held) CHECK(nodes_of(held).encoded_nodes == held_copy.encoded_nodes);
      if (pick(2) == 0) {
        held = report;
        held_copy = nodes_of(report);
      } else {
        held.reset();
      }
    }
    ch.clear();
  }
  CHECK(nodes_of(t.report()) == t.build_report());
  if (held) CHECK(nodes_of(held) == held_copy);
  CHECK(rebuilt_whole > 0);
}

TEST_CASE("a report still being encoded is copied, not changed, when a node changes") {
  node_report_table t;
  std::vector<liveness_change> ch;
  msg::node_changes b;
  b.seq = 1;
  b.changed = {entry("n1", "default"), entry("n2", "default")};
  t.apply("intake", b, ch);
  t.take_machines(plan_of("default", {machine("n1", "default", msg::machine_status::up, 16, 16)}));
  const auto first = t.report();
  const auto same = t.report();
  CHECK(first == same);  // nothing changed: the same report, shared
  t.take_machines(plan_of("default", {machine("n1", "default", msg::machine_status::up, 16, 3)}));
  const auto second = t.report();
  CHECK(second != first);
  CHECK(nodes_of(first).nodes[0].free_quanta == 16);  // the encoder's copy is as it was handed out
  CHECK(nodes_of(second).nodes[0].free_quanta == 3);
}
