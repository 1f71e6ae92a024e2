// Nodes that misbehave, through nodepool_scheduler's public API: one that comes back smaller than what its
// shares hold, and one that flaps down and up.
#include <catch2/catch.hpp>

#include "tests/core/scheduler_harness.hpp"

using namespace rmbus::test;

TEST_CASE("a node back with less memory: shares above the new size are evicted, youngest first, the rest kept") {
  harness h(one_pool({fair_class("normal")}));
  h.machine("n000", 8);  // order 8
  h.job("a", "u1", "normal", 2).max_processes = 4;  // 4 processes of order 2 fill n000
  h.round();
  REQUIRE(h.count("a") == 4);
  std::vector<std::string> oldest_two;
  for (const auto& sh : h.plan("a").shares)
    if (oldest_two.size() < 2) oldest_two.push_back(sh.id.str());

  // The agent now reports 5 GB: order 5 holds two processes of order 2 (4 quanta); 8 - 5 = 3 quanta too
  // many, so two processes (4 quanta) must go, the two youngest.
  h.machine("n000", 5);
  h.round(false);
  CHECK(h.with_status("a", share_status::evict) == 2);
  CHECK(h.count("a") == 2);
  std::vector<std::string> kept;
  for (const auto& sh : h.plan("a").shares)
    if (sh.status == share_status::running) kept.push_back(sh.id.str());
  CHECK(kept == oldest_two);
  CHECK(h.last.counts.evicted == 2);
  h.orchestrate();
  h.round();
  CHECK(h.count("a") == 2);  // nothing new fits: 5 - 4 = 1 free quantum, a process needs 2
  CHECK(h.no_machine_overbooked());
}

TEST_CASE("a node back with the same or more memory keeps every share") {
  harness h(one_pool({fair_class("normal")}));
  h.machine("n000", 4);
  h.job("a", "u1", "normal", 2).max_processes = 2;
  h.round();
  REQUIRE(h.count("a") == 2);
  h.machine("n000", 4);
  h.round(false);
  CHECK(h.with_status("a", share_status::evict) == 0);
  h.machine("n000", 6);
  h.round(false);
  CHECK(h.with_status("a", share_status::evict) == 0);
  CHECK(h.count("a") == 2);
}

TEST_CASE("a shrunk node keeps an unmanaged reservation, as a node that goes down does") {
  harness h(one_pool({fair_class("normal"), reserve_class("reserve")}));
  h.machine("n000", 4);
  auto& r = h.job("r", "u1", "reserve", 4);
  r.kind = work_kind::reservation;
  h.round();
  REQUIRE(h.count("r") == 1);
  h.machine("n000", 2);
  h.round(false);
  CHECK(h.with_status("r", share_status::evict) == 0);
  CHECK(h.count("r") == 1);
}

TEST_CASE("a node that flaps down and up evicts its work once, and takes new work only while up") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 2, 2);  // n000, n001: 4 quanta
  h.job("a", "u1", "normal", 1).max_processes = 4;
  h.round();
  REQUIRE(h.on_machine("a", "n001") == 2);
  h.s.machine_down(machine_id("n001"));
  h.s.machine_down(machine_id("n001"));  // a second report of the same fault changes nothing
  h.round(false);
  CHECK(h.with_status("a", share_status::evict) == 2);
  CHECK(h.last.counts.evicted == 2);
  h.orchestrate();  // the orchestrator ends the evicted processes
  // Down again before anything came back: nothing left to evict.
  h.s.machine_down(machine_id("n001"));
  h.round();
  CHECK(h.last.counts.evicted == 0);
  CHECK(h.on_machine("a", "n001") == 0);
  // Up again: the job grows back onto it.
  h.machine("n001", 2);
  h.round();
  CHECK(h.on_machine("a", "n001") == 2);
  CHECK(h.count("a") == 4);
}
