// Below its fair share by design or by starvation (issue 17): the plan's capped_by and explain's held_back
// name the cap step that holds a job back on purpose (initialization cap, doubling, max_processes,
// reclaim grace), apart from waiting for preemptions; orders read in GB beside the number.
#include <catch2/catch.hpp>

#include "tests/core/scheduler_harness.hpp"

using namespace rmbus::test;

TEST_CASE("a job held at the initialization cap is capped by design, not starved") {
  auto c = fair_class("normal");
  c.initialization_cap = 1;
  harness h(one_pool({c}));
  h.machines("n", 8, 1);
  auto& j = h.job("j", "u", "normal", 1, 100);
  j.state = work_state::waiting;
  h.initialize = false;  // its processes stay initializing
  h.round();
  REQUIRE(h.count("j") == 1);
  // Fair share 8 (alone on 8 quanta), demand 100: held at 1 by the initialization cap.
  CHECK(h.plan("j").status == job_status::scheduled);
  CHECK(h.plan("j").reason_text.empty());  // rm.state's reason stays empty for scheduled work
  CHECK(h.plan("j").capped_by == "initialization_cap");
  const auto e = h.s.explain(job_id("j"));
  CHECK(e.held_back == "initialization_cap");
  CHECK(e.held_back_kind == "design");
  CHECK(e.held_back_text ==
        "held at the initialization cap (1 of its fair share 8 processes) until one of its "
        "processes has initialized");
  CHECK(e.text().find("below fair share (by design, initialization_cap): held at the initialization cap") !=
        std::string::npos);
}

TEST_CASE("a job at its max_processes is capped by design, and one holding its fair share is not held back") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 8, 1);
  auto& j = h.job("j", "u", "normal", 1, 100);
  j.max_processes = 3;
  for (int r = 0; r < 4; ++r) h.round();
  REQUIRE(h.count("j") == 3);
  CHECK(h.plan("j").capped_by == "max_processes");
  CHECK(h.s.explain(job_id("j")).held_back_text == "capped by its max_processes at 3 of its fair share 8");

  harness free(one_pool({fair_class("normal")}));
  free.machines("n", 4, 1);
  free.job("k", "u", "normal", 1, 100);
  for (int r = 0; r < 6; ++r) free.round();
  REQUIRE(free.count("k") == 4);  // all 4 quanta: its fair share
  CHECK(free.plan("k").capped_by.empty());
  CHECK(free.s.explain(job_id("k")).held_back.empty());
}

TEST_CASE("waiting for preemptions is starvation, and under a reclaim grace it is the grace, by design") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 10, 1);
  h.job("a", "u1", "normal", 1);
  for (int r = 0; r < 6; ++r) h.round(false), h.orchestrate();
  REQUIRE(h.count("a") == 10);
  h.job("b", "u2", "normal", 1);
  h.round(false);  // the orchestrator has not yet ended a's preempted processes
  REQUIRE(h.plan("b").reason == reason_code::waiting_for_preemptions);
  const auto e = h.s.explain(job_id("b"));
  CHECK(e.held_back == "waiting_for_preemptions");
  CHECK(e.held_back_kind == "starvation");
  CHECK(h.plan("b").capped_by.empty());

  auto graced = fair_class("normal");
  graced.reclaim_grace_ms = 25000;
  harness g(one_pool({graced}));
  g.machines("n", 10, 1);
  g.job("a", "u1", "normal", 1);
  for (int r = 0; r < 6; ++r) g.round();
  REQUIRE(g.count("a") == 10);
  g.job("b", "u2", "normal", 1);
  g.round();
  REQUIRE(g.plan("b").reason == reason_code::waiting_for_preemptions);
  const auto ge = g.s.explain(job_id("b"));
  CHECK(ge.held_back == "reclaim_grace");
  CHECK(ge.held_back_kind == "design");
}
