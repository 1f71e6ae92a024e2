// A node whose name moves to another top-level pool in a reconfiguration while work runs on it. Both pools'
// schedulers start afresh after a reconfiguration: the work's pool (by its class) recovers the process on a
// *foreign* machine (accounted and published, the job whole, nothing new placed there, not its capacity),
// and the node's new pool is told how many such processes run on each of its nodes and places nothing on
// them until they end (docs/reliability.md, "Nodes that misbehave").
#include <catch2/catch.hpp>

#include "tests/core/scheduler_harness.hpp"

using namespace rmbus::test;

namespace {

// Pool "default" has n000..n00k (given by the harness); pool "other" lists x1.
scheduler_config two_pools(std::vector<resource_class> classes) {
  scheduler_config cfg = one_pool(std::move(classes));
  nodepool_def other;
  other.name = "other";
  other.nodes = {"x1"};
  cfg.nodepools.push_back(other);
  return cfg;
}

process_report running_on(const std::string& id, const std::string& node, std::uint64_t node_mb = 4096) {
  process_report p;
  p.id = share_id(id);
  p.node = machine_id(node);
  p.node_memory_mb = node_mb;
  p.state = process_state::running;
  return p;
}

const planned_share* share_of(const job_plan& j, const std::string& id) {
  for (const auto& sh : j.shares)
    if (sh.id.str() == id) return &sh;
  return nullptr;
}

}  // namespace

TEST_CASE("node moved away: a fair-share process left on it is evicted, the job stays whole and is re-placed at home") {
  harness h(two_pools({fair_class("normal")}));
  h.machines("n", 2, 4);  // 8 quanta at home
  auto& a = h.job("a", "u", "normal", 1);
  a.max_processes = 3;
  a.processes = {running_on("old.1", "n000"), running_on("old.2", "x1")};
  h.round(false);
  const auto& j = h.plan("a");
  CHECK(j.status != job_status::refused);
  REQUIRE(share_of(j, "old.2") != nullptr);
  CHECK(share_of(j, "old.2")->node.str() == "x1");
  CHECK(share_of(j, "old.2")->status == share_status::evict);
  CHECK(share_of(j, "old.1")->status == share_status::running);
  // Its 3 processes are made up at home: old.1 plus 2 new ones, none of them on x1.
  CHECK(h.count("a") == 3);
  CHECK(h.on_machine("a", "x1") == 0);
  // x1 is not this pool's: not reported, not counted.
  CHECK(h.last.counts.nodes == 2);
  for (const auto& m : h.s.view().machines) CHECK(m.name.str() != "x1");
  // The orchestrator ends the evicted process: the share is gone and nothing ever goes to x1.
  h.orchestrate();
  h.round();
  h.round();
  CHECK(share_of(h.plan("a"), "old.2") == nullptr);
  CHECK(h.on_machine("a", "x1") == 0);
  CHECK(h.no_machine_overbooked());
}

TEST_CASE("node moved away: a FIXED_SHARE process on it keeps running and counts for its job, and nothing joins it") {
  harness h(two_pools({fixed_class("fixed")}));
  h.machines("n", 1, 4);
  auto& s = h.job("s", "u", "fixed", 1);
  s.max_processes = 2;
  s.processes = {running_on("old.7", "x1")};
  h.round();
  h.round();
  const auto& j = h.plan("s");
  CHECK(j.status != job_status::refused);
  REQUIRE(share_of(j, "old.7") != nullptr);
  CHECK(share_of(j, "old.7")->status == share_status::running);
  // Non-preemptable work is never evicted by a reconfiguration; its second process goes to a home machine.
  CHECK(h.count("s") == 2);
  CHECK(h.on_machine("s", "x1") == 1);
  CHECK(h.on_machine("s", "n000") == 1);
}

TEST_CASE("node moved in: a node holding another pool's processes gets nothing new until they end") {
  scheduler_config cfg = two_pools({fair_class("normal", 100, 10, "other")});
  harness h(cfg, "other");
  h.machine("x1", 4);
  h.job("b", "u", "normal", 1).max_processes = 4;
  h.s.set_foreign_processes({{machine_id("x1"), 1}});
  h.round();
  // 4 quanta free on paper, but the process of the other pool's job there is not ours to count: blacklisted.
  CHECK(h.count("b") == 0);
  REQUIRE(h.s.view().machines.size() == 1);
  CHECK(h.s.view().machines[0].state == machine_state::blacklisted);
  // The count changes without ending: still nothing.
  h.s.set_foreign_processes({{machine_id("x1"), 2}});
  h.round();
  CHECK(h.count("b") == 0);
  // They ended (the next map lists none there): x1 is ours to fill.
  h.s.set_foreign_processes({});
  h.round();
  CHECK(h.count("b") == 4);
  CHECK(h.s.view().machines[0].state == machine_state::up);
}

TEST_CASE("a foreign machine becomes one of ours when its heartbeat comes to this pool, with its shares") {
  // Also with a full machine of x1's size already at home: the largest machine order does not move when x1
  // joins then, and only the model's count of machine changes tells How Much that its tables are stale.
  const bool one_of_its_size_at_home = GENERATE(false, true);
  INFO("a machine of its size at home: " << one_of_its_size_at_home);
  harness h(two_pools({fixed_class("fixed")}));
  if (one_of_its_size_at_home) {
    h.machine("n000", 4);
    h.job("home", "u", "fixed", 4).max_processes = 1;  // fills n000
  }
  const int home = one_of_its_size_at_home ? 1 : 0;
  auto& s = h.job("s", "u", "fixed", 1);
  s.max_processes = 1;
  s.processes = {running_on("old.3", "x1")};
  h.round();
  CHECK(h.last.counts.nodes == home);
  // The reconfiguration is undone: x1 is this pool's again and reports itself here.
  h.s.update_machine({machine_id("x1"), "10.0.0.9", 4096, false});
  h.job("t", "u", "fixed", 1).max_processes = 2;
  h.round();
  CHECK(h.last.counts.nodes == home + 1);
  CHECK(h.on_machine("s", "x1") == 1);
  // x1 has 4 quanta: s holds 1, so t gets 2 there.
  CHECK(h.on_machine("t", "x1") == 2);
  CHECK(h.no_machine_overbooked());
}
