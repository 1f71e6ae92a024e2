// The wire <-> core conversions the actor shells rely on, and the envelope stamper.
#include <catch2/catch.hpp>

#include "actors/internal.hpp"

namespace msg = rmbus::messages;
using namespace rmbus::actors;

TEST_CASE("a sender's sequence numbers count per topic from 1") {
  envelope_stamper st{"rmbus.1.x:diff"};
  const auto first = st.next("rm.internal.round");
  CHECK(first.src == "rmbus.1.x:diff");
  CHECK(first.seq == 1);
  CHECK(st.next("rm.internal.round").seq == 2);
  CHECK(st.next("rm.internal.plan").seq == 1);  // another topic starts at 1
}

TEST_CASE("a wire work item converts to the core's item") {
  msg::work_item w;
  w.id = "j1";
  w.kind = msg::work_kind::service;
  w.user = "alice";
  w.class_name = "fixed";
  w.memory_mb = 3000;
  w.submitted_ms = 42;
  w.state = msg::work_state::running;
  w.max_processes = 3;
  w.threads = 0;  // unknown -> the core gets 1
  w.items_total = 10;
  w.processes.push_back({"s.1", "n1", msg::process_state::running, 5, 6, 8192});
  const auto c = to_core(w);
  CHECK(c.id.str() == "j1");
  CHECK(c.kind == rmbus::core::work_kind::service);
  CHECK(c.threads == 1);
  CHECK(c.max_processes == 3);
  REQUIRE(c.processes.size() == 1);
  CHECK(c.processes[0].node_memory_mb == 8192);
  CHECK(c.processes[0].state == rmbus::core::process_state::running);
}

TEST_CASE("a job plan becomes the rm.state entry the orchestrator reads") {
  rmbus::core::job_plan p;
  p.id = rmbus::core::job_id{"j1"};
  p.status = rmbus::core::job_status::scheduled;
  p.reason_text = "";
  p.memory_mb_per_process = 2048;
  p.shares.push_back({rmbus::core::share_id{"x-0.1"}, rmbus::core::machine_id{"n1"}, 2, rmbus::core::share_status::new_share, 0});
  p.shares.push_back({rmbus::core::share_id{"x-0.2"}, rmbus::core::machine_id{"n2"}, 2, rmbus::core::share_status::preempt, 0});
  p.user = rmbus::core::user_id{"alice"};
  p.class_name = "normal";
  p.given = 3;
  p.demand = 7;
  p.fair_share = 2;
  const auto j = to_schedule(p);
  CHECK(j.id == "j1");
  CHECK(j.status == msg::job_status::scheduled);
  CHECK(j.memory_mb == 2048);
  REQUIRE(j.shares.size() == 2);
  CHECK(j.shares[0].status == msg::share_status::new_);
  CHECK(j.shares[1].status == msg::share_status::preempt);
  CHECK(j.shares[1].node == "n2");
  CHECK(j.shares[1].quanta == 2);
  CHECK_FALSE(j.shares[0].reclaim_at_ms.has_value());  // no deadline: the key stays off the wire
  CHECK(j.user == "alice");
  CHECK(j.class_name == "normal");
  CHECK(j.given == 3);
  CHECK(j.demand == 7);
  CHECK(j.fair_share == 2);
  // A refused job with negative numbers never shows them as huge unsigned ones.
  p.status = rmbus::core::job_status::refused;
  p.demand = -1;
  const auto r = to_schedule(p);
  CHECK(r.status == msg::job_status::refused);
  CHECK(r.demand == 0);
}

TEST_CASE("a share under a reclaim grace carries its deadline into rm.state, still running") {
  rmbus::core::job_plan p;
  p.id = rmbus::core::job_id{"j1"};
  p.status = rmbus::core::job_status::scheduled;
  p.shares.push_back({rmbus::core::share_id{"x-0.1"}, rmbus::core::machine_id{"n1"}, 1,
                      rmbus::core::share_status::running, 1'700'000'045'000});
  const auto j = to_schedule(p);
  REQUIRE(j.shares.size() == 1);
  CHECK(j.shares[0].status == msg::share_status::running);
  REQUIRE(j.shares[0].reclaim_at_ms.has_value());
  CHECK(*j.shares[0].reclaim_at_ms == 1'700'000'045'000ULL);
}

TEST_CASE("a job plan's share group reaches its rm.state entry") {
  rmbus::core::job_plan p;
  p.id = rmbus::core::job_id{"j1"};
  p.class_name = "normal";
  p.group = 0;
  rmbus::core::schedule_plan plan;
  plan.group_names = {"lhc"};
  CHECK(to_schedule(p, plan.group_of(p)).group == "lhc");
  p.group = -1;
  CHECK(plan.group_of(p).empty());
  CHECK(to_schedule(p, plan.group_of(p)).group.empty());
}
