// Defragmentation on the internals chapter's picture (shared/ducc-rm.md 5.1 #3): three order-3
// machines; job A wants 5 order-1 processes, job B 2 order-2 processes. Fragmented layout
// {A,A,_} {A,A,_} {B,A}: B holds 1 of its 2, and two 1-holes cannot hold an order-2 process.
#include <catch2/catch.hpp>

#include "tests/core/scheduler_harness.hpp"

using namespace rmbus::test;

namespace {

process_report proc(const std::string& id, const std::string& node) {
  process_report p;
  p.id = share_id(id);
  p.node = machine_id(node);
  p.state = process_state::running;  // initialized
  p.run_ms = 1000;
  return p;
}

harness fragmented(int threshold) {
  scheduler_config cfg = one_pool({fair_class("normal")});
  cfg.settings.fragmentation_threshold = threshold;
  harness h(cfg);
  h.machines("m", 3, 3);  // m000 m001 m002, order 3
  auto& a = h.job("A", "ua", "normal", 1);
  a.max_processes = 5;
  a.processes = {proc("old.1", "m000"), proc("old.2", "m000"), proc("old.3", "m001"), proc("old.4", "m001"),
                 proc("old.5", "m002")};
  auto& b = h.job("B", "ub", "normal", 2);
  b.max_processes = 2;
  b.processes = {proc("old.6", "m002")};
  return h;
}

}  // namespace

TEST_CASE("fragmentation, threshold 8: A (5 processes) is no donor, B waits for defragmentation") {
  harness h = fragmented(8);
  h.round();
  // How Much: 9 quanta, A = 5 x 1, B = 2 x 2. B is needy by 1, but A holds 5 < 8 processes
  CHECK(h.plan("A").given == 5);
  CHECK(h.plan("B").given == 2);
  CHECK(h.count("B") == 1);
  CHECK(h.plan("B").reason == reason_code::waiting_for_defragmentation);
  CHECK(h.plan("B").reason_text == "Waiting for defragmentation.");
  CHECK(h.last.counts.preempted == 0);
  const auto before = h.last.jobs;
  h.round();
  // nothing changes: no churn
  CHECK(h.last.jobs == before);
}

TEST_CASE("fragmentation, threshold 4: one A process is preempted and the good layout follows") {
  harness h = fragmented(4);
  h.round(false);  // the orchestrator has not confirmed anything yet
  // A holds 5 >= 4 and is initialized: a donor. m000 (free 1 + A's 2) is the first machine that can be
  // cleared to a 2-hole by preempting one A process.
  CHECK(h.with_status("A", share_status::preempt) == 1);
  CHECK(h.last.counts.preempted == 1);
  int preempted_on_m000 = 0;
  for (const auto& sh : h.plan("A").shares)
    preempted_on_m000 += sh.status == share_status::preempt && sh.node.str() == "m000";
  CHECK(preempted_on_m000 == 1);
  CHECK(h.plan("B").reason == reason_code::waiting_for_defragmentation);

  h.round(false);
  // Before the exit is confirmed, A is counted 5 and holds 4: it re-expands into the 1-hole on m001,
  // NOT into m000, which is kept for B. Nothing more is preempted.
  CHECK(h.on_machine("A", "m001") == 3);
  CHECK(h.on_machine("A", "m000") == 1);
  CHECK(h.last.counts.preempted == 0);
  h.orchestrate();
  h.round();  // the exit is confirmed: B takes the 2-hole on m000
  CHECK(h.count("B") == 2);
  CHECK(h.on_machine("B", "m000") == 1);
  CHECK(h.count("A") == 5);
  CHECK(h.plan("B").reason == reason_code::none);
  // the good layout: {A,B} {A,A,A} {B,A}
  CHECK(h.on_machine("A", "m000") == 1);
  CHECK(h.on_machine("A", "m002") == 1);
  CHECK(h.no_machine_overbooked());
  h.round();  // B's new share is now shown running
  const auto settled = h.last.jobs;
  h.round();
  // an unchanged input gives an unchanged schedule
  CHECK(h.last.jobs == settled);
  CHECK(h.last.counts.given == 0);
  CHECK(h.last.counts.preempted == 0);
}
