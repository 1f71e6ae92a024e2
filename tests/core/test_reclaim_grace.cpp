// Reclaim with a grace period (issue 12, EGO's reclaim grace) and probe_first (CiGri's test campaigns),
// through the scheduler: core/preemption.hpp and core/job_cap.hpp say the rules.
#include <catch2/catch.hpp>

#include "tests/core/scheduler_harness.hpp"

using namespace rmbus::test;

namespace {

resource_class graced(std::string name, std::int64_t grace_ms) {
  auto c = fair_class(std::move(name));
  c.reclaim_grace_ms = grace_ms;
  return c;
}

// Shares of `id` that carry a reclaim deadline, and whether all of them carry `at`.
int with_deadline(const harness& h, const std::string& id) {
  int n = 0;
  for (const auto& sh : h.plan(id).shares) n += sh.reclaim_at_ms > 0 ? 1 : 0;
  return n;
}
bool all_deadlines_at(const harness& h, const std::string& id, std::int64_t at) {
  for (const auto& sh : h.plan(id).shares)
    if (sh.reclaim_at_ms != 0 && sh.reclaim_at_ms != at) return false;
  return true;
}

// 10 machines of 1 quantum; job a of u1 holds all 10 in a class with a 25 s grace; then job b of u2 arrives
// in the round at now = 20000 (the harness advances now by 10000 per round).
struct contested {
  harness h{one_pool({graced("normal", 25000)})};
  contested() {
    h.machines("n", 10, 1);
    h.job("a", "u1", "normal", 1);
    h.round();  // now 10000
    REQUIRE(h.count("a") == 10);
    h.job("b", "u2", "normal", 1);
    h.round();  // now 20000
  }
};

}  // namespace

TEST_CASE("reclaim grace: the victims keep running and carry reclaim_at = now + grace") {
  contested c;
  auto& h = c.h;
  // two users: 10 / 2 = 5 each; a is counted 5 and must shed 5, but under a 25 s grace they keep running
  // with the deadline 20000 + 25000 = 45000
  CHECK(h.plan("a").given == 5);
  CHECK(h.with_status("a", share_status::preempt) == 0);
  CHECK(h.count("a") == 10);
  CHECK(with_deadline(h, "a") == 5);
  CHECK(all_deadlines_at(h, "a", 45000));
  CHECK(h.last.counts.preempted == 0);
  CHECK(h.count("b") == 0);
  CHECK(h.plan("b").reason == reason_code::waiting_for_preemptions);
  // explain counts them apart from the processes being removed
  const auto e = h.s.explain(job_id("a"));
  CHECK(e.reclaiming == 5);
  CHECK(e.preempting == 0);
  CHECK(e.text().find("running until a reclaim deadline: 5") != std::string::npos);
}

TEST_CASE("reclaim grace: nothing is preempted before the deadline, and once it passes with the need standing it is") {
  contested c;
  auto& h = c.h;
  h.round();  // now 30000 < 45000
  h.round();  // now 40000 < 45000
  CHECK(h.with_status("a", share_status::preempt) == 0);
  CHECK(with_deadline(h, "a") == 5);
  CHECK(all_deadlines_at(h, "a", 45000));  // a deadline, once given, holds
  CHECK(h.count("b") == 0);
  h.round();  // now 50000 >= 45000 and b still wants 5: the five are preempted
  CHECK(h.with_status("a", share_status::preempt) == 5);
  CHECK(h.last.counts.preempted == 5);
  CHECK(h.count("a") == 5);
  CHECK(with_deadline(h, "a") == 0);
  h.round();  // the orchestrator confirmed the exits: b gets its 5
  CHECK(h.count("b") == 5);
  CHECK(h.no_machine_overbooked());
}

TEST_CASE("reclaim grace: a deadline that passes between quiet rounds is not skipped as an unchanged round") {
  contested c;
  auto& h = c.h;
  // Nothing changes in the work map from here on; only time passes. The rounds at 30000 and 40000 change
  // nothing; the one at 50000 must still run because the deadline 45000 has passed.
  h.round();
  h.round();
  REQUIRE(h.with_status("a", share_status::preempt) == 0);
  h.round();
  CHECK(h.with_status("a", share_status::preempt) == 5);
}

TEST_CASE("reclaim grace: the claimant leaves before the deadline, and the deadlines are dropped") {
  contested c;
  auto& h = c.h;
  h.work.erase(job_id("b"));
  h.round();  // now 30000: a is alone again, counted 10
  CHECK(h.plan("a").given == 10);
  CHECK(with_deadline(h, "a") == 0);
  h.round();
  h.round();  // now 50000: past the old deadline, nothing is preempted
  CHECK(h.with_status("a", share_status::preempt) == 0);
  CHECK(h.count("a") == 10);
}

TEST_CASE("reclaim grace: the claimant shrinks before the deadline, and only the surplus keeps a deadline") {
  contested c;
  auto& h = c.h;
  // b now has 2 work items left (1 thread each): its cap is 2, so a is counted 10 - 2 = 8 and must shed 2
  h.work[job_id("b")].items_total = 2;
  h.round();  // now 30000
  CHECK(h.plan("a").given == 8);
  CHECK(with_deadline(h, "a") == 2);
  CHECK(all_deadlines_at(h, "a", 45000));  // the two kept are among those already given the deadline
  h.round();  // 40000
  h.round();  // 50000: the two are preempted, the other three were never touched
  CHECK(h.with_status("a", share_status::preempt) == 2);
  CHECK(h.count("a") == 8);
  h.round();
  CHECK(h.count("b") == 2);
}

TEST_CASE("reclaim grace: the claimant finishes before the deadline, and the deadlines are dropped") {
  contested c;
  auto& h = c.h;
  h.work[job_id("b")].state = work_state::completed;
  h.round();
  CHECK(with_deadline(h, "a") == 0);
  CHECK(h.plan("a").given == 10);
}

TEST_CASE("reclaim grace: clearing for FIXED_SHARE work never waits") {
  harness h(one_pool({fixed_class("fixed", 5), graced("normal", 60000)}));
  h.machines("n", 4, 1);
  h.job("a", "u1", "normal", 1);
  h.round();
  REQUIRE(h.count("a") == 4);
  h.job("svc", "u2", "fixed", 1).max_processes = 2;
  h.round();
  // the fixed job (priority 5) is counted 2 on a's machines; a keeps 4 - 2 = 2, and the 2 go now
  CHECK(h.with_status("a", share_status::preempt) == 2);
  CHECK(with_deadline(h, "a") == 0);
  h.round();
  CHECK(h.count("svc") == 2);
}

TEST_CASE("reclaim grace: clearing a machine for a reservation never waits") {
  harness h(one_pool({reserve_class("reserve", 1), graced("normal", 60000)}));
  h.machines("n", 2, 4);
  h.job("a", "u1", "normal", 1);
  h.round();
  REQUIRE(h.count("a") == 8);
  h.job("r", "u2", "reserve", 4).kind = work_kind::reservation;
  h.round();
  // the reservation takes one whole 4-quantum machine: the 4 processes of a on it are preempted at once
  CHECK(h.with_status("a", share_status::preempt) == 4);
  CHECK(with_deadline(h, "a") == 0);
  h.round();
  CHECK(h.count("r") == 1);
}

TEST_CASE("reclaim grace: evictions never wait") {
  contested c;
  auto& h = c.h;
  REQUIRE(with_deadline(h, "a") == 5);
  h.s.machine_down(machine_id("n000"));
  h.s.machine_down(machine_id("n001"));
  h.round(false);  // now 30000
  // a's processes on the two dead nodes are evicted at once, whether or not they carried a deadline
  CHECK(h.with_status("a", share_status::evict) == 2);
  for (const auto& sh : h.plan("a").shares)
    if (sh.status == share_status::evict) CHECK(sh.reclaim_at_ms == 0);
}

TEST_CASE("reclaim grace: whatif lists the processes a newcomer would claim under a grace") {
  harness h(one_pool({graced("normal", 25000)}));
  h.machines("n", 10, 1);
  h.job("a", "u1", "normal", 1);
  h.round();
  const auto b = job_item("b", "u2", "normal", 1);
  // 10 / 2 = 5: five of a's processes would be claimed (preempted at the deadline if the need stands)
  CHECK(h.s.whatif(b).preempted.size() == 5);
}

TEST_CASE("probe_first: one process until one has initialized and finished a work item, then the normal caps") {
  auto probe = fair_class("test");
  probe.probe_first = true;
  harness h(one_pool({probe}));
  h.machines("n", 8, 1);
  h.job("t", "u1", "test", 1);  // 1000 items, 1 thread: by work 1000, no init cap, no doubling
  h.round();
  CHECK(h.count("t") == 1);
  CHECK(h.s.explain(job_id("t")).cap.decided_by == std::string("probe_first"));
  // its process is running (initialized), but no work item is done yet: still one
  h.round();
  CHECK(h.count("t") == 1);
  // a work item done: probed; the cap is by work again and the job takes all 8 machines
  h.work[job_id("t")].items_done = 1;
  h.round();
  CHECK(h.count("t") == 8);
  CHECK(h.s.explain(job_id("t")).cap.decided_by == std::string("work"));
}

TEST_CASE("probe_first: items done without an initialized process is not a probe") {
  auto probe = fair_class("test");
  probe.probe_first = true;
  harness h(one_pool({probe}));
  h.initialize = false;  // processes stay "initializing"
  h.machines("n", 8, 1);
  auto& t = h.job("t", "u1", "test", 1);
  t.state = work_state::waiting;  // no process has initialized
  t.items_done = 3;               // (a map could say so after a restart; the rule wants both)
  h.round();
  h.round();
  CHECK(h.count("t") == 1);
}

TEST_CASE("probe_first: a class without it ramps as before") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 8, 1);
  h.job("t", "u1", "normal", 1);
  h.round();
  CHECK(h.count("t") == 8);
}
