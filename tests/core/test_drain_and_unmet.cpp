// Two things admin reads or sets on the core that How Much itself does not show: a drained machine (Slurm's
// DRAIN: what runs stays, nothing new is placed) and the demand no machine can meet (work of an order larger
// than every machine, listed apart from How Much's per-class load).
#include <catch2/catch.hpp>

#include "tests/core/scheduler_harness.hpp"

using namespace rmbus::test;

TEST_CASE("a drained machine keeps its work and takes nothing new: undrained it takes work again") {
  harness h{one_pool({fair_class("normal")})};
  h.machine("m1", 8);
  h.job("a", "alice", "normal", 1).max_processes = 8;
  h.round();
  REQUIRE(h.on_machine("a", "m1") == 8);
  REQUIRE(h.s.set_drained(machine_id("m1"), true));
  CHECK_FALSE(h.s.set_drained(machine_id("nosuch"), true));
  // The pool's capacity is m2's 16 quanta (a drained machine counts no more than a quiescing one): a's 8 and
  // b's 8 are each half. a's 8 stay on m1, none evicted; b's 8 go to m2, none to m1.
  h.machine("m2", 16);
  h.job("b", "bob", "normal", 1).max_processes = 24;
  h.round();
  h.round();
  CHECK(h.on_machine("a", "m1") == 8);
  CHECK(h.with_status("a", share_status::evict) == 0);
  CHECK(h.with_status("a", share_status::preempt) == 0);
  CHECK(h.on_machine("b", "m1") == 0);
  CHECK(h.on_machine("b", "m2") == 8);
  const auto view = h.s.view();
  CHECK(view.machines.at(0).drained);
  CHECK(view.machines.at(0).state == machine_state::up);
  // A heartbeat that refreshes the machine keeps the drain; a's work ends, and b still gets nothing on m1.
  h.machine("m1", 8);
  h.work.erase(job_id("a"));
  h.round();
  h.round();
  CHECK(h.on_machine("b", "m1") == 0);
  CHECK(h.on_machine("b", "m2") == 16);
  // Undrained: b expands onto it.
  REQUIRE(h.s.set_drained(machine_id("m1"), false));
  h.round();
  h.round();
  CHECK(h.on_machine("b", "m1") == 8);
}

TEST_CASE("a drained machine is kept when the intake forgets it, as a varied-off one is") {
  harness h{one_pool({fair_class("normal")})};
  h.machine("m1", 8);
  h.s.set_drained(machine_id("m1"), true);
  h.s.machine_down(machine_id("m1"));
  const auto out = h.s.forget_machines({machine_id("m1")});
  CHECK(out.kept == std::vector<machine_id>{machine_id("m1")});
}

TEST_CASE("the demand no machine can meet is listed by class and order, apart from How Much's load") {
  harness h{one_pool({fair_class("normal"), fair_class("batch", 50)})};
  h.machines("m", 2, 8);
  h.job("small", "alice", "normal", 1).max_processes = 4;
  h.job("big-1", "bob", "normal", 200).max_processes = 3;
  h.job("big-2", "carol", "normal", 200).max_processes = 2;
  h.job("huge", "dan", "batch", 300);
  h.round();
  CHECK(h.plan("big-1").reason == reason_code::no_machine_of_order);
  const auto v = h.s.view();
  for (const auto& c : v.classes) CHECK(c.demand_by_order.count(200) == 0);  // How Much leaves them out
  REQUIRE(v.unmet.size() == 2);
  // normal, order 200: two jobs; each asks for at least one process (their caps, when How Much gave one).
  CHECK(v.unmet[0].class_name == "batch");
  CHECK(v.unmet[0].order == 300);
  CHECK(v.unmet[0].jobs == 1);
  CHECK(v.unmet[1].class_name == "normal");
  CHECK(v.unmet[1].order == 200);
  CHECK(v.unmet[1].jobs == 2);
  CHECK(v.unmet[1].processes >= 2);
  CHECK(v.unmet[1].reason == reason_code::no_machine_of_order);
  CHECK(v.unmet[1].text.rfind("no machine of order 200 (200 GB) in pool default", 0) == 0);
  // A machine large enough joins: nothing is unmet any more.
  h.machine("big", 512);
  h.round();
  CHECK(h.s.view().unmet.empty());
}
