// A restarted RM's settle window (round_input::settling): a settling round reports what is held and
// recovered, gives nothing new, preempts nothing, and the first full round after it schedules as usual.
#include <catch2/catch.hpp>

#include "tests/core/scheduler_harness.hpp"

using namespace rmbus::test;

namespace {

// A settling round of the harness: the work map applied, then a round that may only report.
const schedule_plan& settle(harness& h) {
  h.s.apply_work(h.work);
  round_input in;
  in.now_ms = h.now += 10000;
  in.settling = true;
  h.last = h.s.schedule(in);
  h.orchestrate();
  return h.last;
}

process_report running_on(const std::string& id, const std::string& node) {
  process_report p;
  p.id = share_id(id);
  p.node = machine_id(node);
  p.state = process_state::running;
  return p;
}

}  // namespace

TEST_CASE("a settling round keeps the recovered shares and gives nothing new") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 4, 2);  // 4 machines of 2 quanta = 8 quanta
  // Before the restart, a held 2 processes of 1 quantum on n000; b is new work that arrived meanwhile.
  auto& a = h.job("a", "u1", "normal", 1);
  a.processes = {running_on("old.1", "n000"), running_on("old.2", "n000")};
  h.job("b", "u2", "normal", 1);
  settle(h);
  CHECK(h.with_status("a", share_status::running) == 2);
  CHECK(h.plan("a").shares.size() == 2);  // nothing new, though 6 quanta are free
  CHECK(h.plan("a").given == 2);
  CHECK(h.plan("b").shares.empty());
  CHECK(h.plan("b").status == job_status::pending);
  CHECK(h.plan("b").reason == reason_code::settling);
  CHECK(h.last.counts.given == 0);
  CHECK(h.last.counts.preempted == 0);

  // The window ends: a full round gives fair share. 8 quanta, two users of equal weight: 4 each.
  h.round();
  CHECK(h.count("a") == 4);
  CHECK(h.count("b") == 4);
  CHECK(h.plan("b").reason == reason_code::none);
  CHECK(h.no_machine_overbooked());
}

TEST_CASE("a settling round preempts nothing, even from work above its fair share") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 2, 2);  // 4 quanta
  // a holds the whole cluster; b's fair share (2 of 4 quanta) would preempt 2 of a's processes.
  auto& a = h.job("a", "u1", "normal", 1);
  a.processes = {running_on("old.1", "n000"), running_on("old.2", "n000"), running_on("old.3", "n001"),
                 running_on("old.4", "n001")};
  h.job("b", "u2", "normal", 1);
  settle(h);
  CHECK(h.with_status("a", share_status::running) == 4);
  CHECK(h.with_status("a", share_status::preempt) == 0);
  CHECK(h.last.counts.preempted == 0);
  settle(h);  // a second settling round changes nothing either
  CHECK(h.with_status("a", share_status::running) == 4);

  // After the window: 4 quanta / 2 users = 2 each, so 2 of a's processes are preempted for b.
  h.round(false);
  CHECK(h.with_status("a", share_status::preempt) == 2);
  CHECK(h.last.counts.preempted == 2);
}

TEST_CASE("a node found down while settling is still evicted") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 2, 2);
  auto& a = h.job("a", "u1", "normal", 1);
  a.processes = {running_on("old.1", "n000"), running_on("old.2", "n001")};
  settle(h);
  REQUIRE(h.with_status("a", share_status::running) == 2);
  h.s.machine_down(machine_id("n001"));
  settle(h);
  // the process on n001 is evicted; nothing replaces it until the window ends
  CHECK(h.on_machine("a", "n001") == 0);
  CHECK(h.count("a") == 1);
  CHECK(h.last.counts.given == 0);
}

TEST_CASE("a settling round repeated with nothing changed gives the same plan, and one after a change shows it") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 2, 2);  // 4 quanta
  auto& a = h.job("a", "u1", "normal", 1);
  a.processes = {running_on("old.1", "n000")};
  h.job("b", "u2", "normal", 1);
  const auto first = settle(h);
  const auto again = settle(h);  // the same map, no machine news: the plan of the first, at the new time
  CHECK(again.now_ms == first.now_ms + 10000);
  REQUIRE(again.jobs.size() == first.jobs.size());
  for (std::size_t k = 0; k < first.jobs.size(); ++k) {
    CHECK(again.jobs[k].id == first.jobs[k].id);
    CHECK(again.jobs[k].status == first.jobs[k].status);
    CHECK(again.jobs[k].reason == first.jobs[k].reason);
    CHECK(again.jobs[k].shares.size() == first.jobs[k].shares.size());
  }
  CHECK(again.counts.schedulable_nodes == first.counts.schedulable_nodes);
  CHECK(h.s.plan_changed_entries().empty());

  // News while settling: a machine reports and job c arrives. The next settling round shows both, and still
  // gives nothing.
  h.machine("m000", 4);
  h.job("c", "u3", "normal", 1);
  settle(h);
  CHECK(h.last.counts.schedulable_nodes == first.counts.schedulable_nodes + 1);
  CHECK(h.plan("c").shares.empty());
  CHECK(h.plan("c").reason == reason_code::settling);
  CHECK(h.plan("a").given == 1);
  CHECK(h.last.counts.given == 0);
  settle(h);  // unchanged again

  // The window ends with nothing changed since the last settling round: the full round still runs. 8 quanta,
  // three users: a, b and c get 2 or 3 each, all 8 given.
  h.round();
  CHECK(h.count("a") + h.count("b") + h.count("c") == 8);
  CHECK(h.count("b") >= 2);
  CHECK(h.count("c") >= 2);
  CHECK(h.plan("b").reason == reason_code::none);
  CHECK(h.no_machine_overbooked());
}
