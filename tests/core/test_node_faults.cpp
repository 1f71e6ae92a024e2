// Nodes that misbehave, through nodepool_scheduler's public API: one that comes back smaller than what its
// shares hold, one that flaps down and up, and machines forgotten after being down too long.
#include <algorithm>
#include <optional>

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

TEST_CASE("a share granted, not started yet, then evicted holds its space until its eviction has gone out") {
  // What the CPU-starvation test saw: the orchestrator is slow to start what round 1 granted; meanwhile the
  // node misses heartbeats, is declared down and comes straight back. The eviction must be published, and the
  // space held, before the share may be dropped: the orchestrator knows it only as `new` and starts it.
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 2, 2);  // n000, n001: 4 quanta
  h.job("a", "u1", "normal", 1).max_processes = 4;
  h.round(false);  // granted `new` and published; no process shown yet
  REQUIRE(h.on_machine("a", "n001") == 2);
  h.s.machine_down(machine_id("n001"));
  h.machine("n001", 2);  // back at once: the agent was only slow
  h.job("b", "u2", "normal", 1).max_processes = 4;  // work that would take n001's space at once
  h.round(false);        // the map still shows nothing of a
  CHECK(h.with_status("a", share_status::evict) == 2);  // the eviction goes out with this round
  for (const auto& jp : h.last.jobs)
    for (const auto& sh : jp.shares)
      CHECK_FALSE((sh.node.str() == "n001" && sh.status == share_status::new_share));  // nothing new on n001
  CHECK(h.no_machine_overbooked());
  // The orchestrator has now seen the eviction (and never starts those shares); a map without them frees n001.
  h.orchestrate();
  h.round();
  CHECK(h.with_status("a", share_status::evict) == 0);
  CHECK(h.on_machine("a", "n001") + h.on_machine("b", "n001") == 2);  // n001 is used again
  CHECK(h.no_machine_overbooked());
}

namespace {

// A numbered round, applying a map that says which round the orchestrator last acted on (`acted`).
const schedule_plan& numbered_round(harness& h, std::uint64_t cycle, std::optional<std::uint64_t> acted) {
  h.s.set_acted_cycle(acted);
  h.s.apply_work(h.work);
  h.last = h.s.schedule({h.now += 10000, {}, false, cycle});
  return h.last;
}

bool anything_new_on(const harness& h, const std::string& node) {
  for (const auto& jp : h.last.jobs)
    for (const auto& sh : jp.shares)
      if (sh.node.str() == node && sh.status == share_status::new_share) return true;
  return false;
}

}  // namespace

TEST_CASE("an eviction the orchestrator has not acted on yet keeps the share's space, whatever a map lacks") {
  // A map built before the orchestrator read the eviction may lack a process it is about to start (from
  // the earlier `new`): only a map that says it acted on the eviction's round frees the space.
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 2, 2);
  h.job("a", "u1", "normal", 1).max_processes = 4;
  numbered_round(h, 1, std::nullopt);
  REQUIRE(h.on_machine("a", "n001") == 2);
  h.s.machine_down(machine_id("n001"));
  h.machine("n001", 2);
  h.job("b", "u2", "normal", 1).max_processes = 4;
  numbered_round(h, 2, 1);  // the eviction goes out in round 2
  REQUIRE(h.with_status("a", share_status::evict) == 2);
  numbered_round(h, 3, 1);  // a map still of round 1: a's evicted shares stay, their space held
  CHECK(h.with_status("a", share_status::evict) == 2);
  CHECK_FALSE(anything_new_on(h, "n001"));
  CHECK(h.no_machine_overbooked());
  numbered_round(h, 4, 2);  // the orchestrator acted on round 2 and shows none of them: gone
  CHECK(h.with_status("a", share_status::evict) == 0);
  numbered_round(h, 5, 4);
  CHECK(h.on_machine("a", "n001") + h.on_machine("b", "n001") == 2);
  CHECK(h.no_machine_overbooked());
}

TEST_CASE("without an echo, or with one from before this scheduler's rounds, a published removal frees the space") {
  const auto echo = GENERATE(std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{500});
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 2, 2);
  h.job("a", "u1", "normal", 1).max_processes = 4;
  numbered_round(h, 1, echo);
  h.s.machine_down(machine_id("n001"));
  h.machine("n001", 2);
  numbered_round(h, 2, echo);
  REQUIRE(h.with_status("a", share_status::evict) == 2);
  numbered_round(h, 3, echo);  // the orchestrator says nothing usable: published is enough, as before
  CHECK(h.with_status("a", share_status::evict) == 0);
}

TEST_CASE("forgetting machines removes only those holding nothing, slots renumber and scheduling goes on") {
  harness h(one_pool({fair_class("normal"), reserve_class("reserve")}));
  h.machines("n", 4, 2);  // n000..n003, order 2 each: 8 quanta
  auto& r = h.job("r", "u1", "reserve", 2);
  r.kind = work_kind::reservation;
  h.job("a", "u2", "normal", 2).max_processes = 1;  // one process filling one machine
  h.round();
  REQUIRE(h.count("r") == 1);
  REQUIRE(h.count("a") == 1);
  std::string reserved, busy;
  for (const auto& sh : h.plan("r").shares) reserved = sh.node.str();
  for (const auto& sh : h.plan("a").shares) busy = sh.node.str();
  REQUIRE(reserved != busy);
  // Every machine goes down: a's shares are evicted, r's unmanaged reservation stays on its down node.
  for (int i = 0; i < 4; ++i) h.s.machine_down(machine_id("n00" + std::to_string(i)));
  h.round(false);
  std::vector<machine_id> all;
  for (int i = 0; i < 4; ++i) all.emplace_back("n00" + std::to_string(i));
  all.emplace_back("never-seen");
  // Before the orchestrator confirms the evicted processes gone, a's machine still holds their space:
  // kept, as is the reservation's; the other two and the unknown name are forgotten.
  auto out = h.s.forget_machines(all);
  CHECK(out.kept.size() == 2);
  CHECK(out.forgotten.size() == 3);
  CHECK(std::count(out.kept.begin(), out.kept.end(), machine_id(reserved)) == 1);
  CHECK(std::count(out.kept.begin(), out.kept.end(), machine_id(busy)) == 1);
  CHECK(h.s.machine_count() == 2);  // 4 - 2 forgotten
  h.orchestrate();  // the evicted processes end
  h.round();
  // Now a's machine holds nothing: forgotten; the reservation's machine is kept (and keeps its share).
  out = h.s.forget_machines({machine_id(busy), machine_id(reserved)});
  CHECK(out.forgotten == std::vector<machine_id>{machine_id(busy)});
  CHECK(out.kept == std::vector<machine_id>{machine_id(reserved)});
  REQUIRE(h.s.machine_count() == 1);
  CHECK(h.s.machine_at(0).name->str() == reserved);
  h.round();
  CHECK(h.count("r") == 1);
  CHECK(h.on_machine("r", reserved) == 1);
  // A forgotten machine that reports again is simply new; a's work goes back onto it, and the renumbered
  // reservation's machine is still the one its share names.
  h.machine(busy, 2);
  h.round();
  CHECK(h.s.machine_count() == 2);
  CHECK(h.on_machine("a", busy) == 1);
  CHECK(h.on_machine("r", reserved) == 1);
  CHECK(h.no_machine_overbooked());
}

TEST_CASE("a machine varied off by the admin is not forgotten: the mark would be lost") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 2, 2);
  h.s.vary_off(machine_id("n000"));
  h.s.machine_down(machine_id("n000"));
  h.s.machine_down(machine_id("n001"));
  const auto out = h.s.forget_machines({machine_id("n000"), machine_id("n001")});
  CHECK(out.kept == std::vector<machine_id>{machine_id("n000")});
  CHECK(out.forgotten == std::vector<machine_id>{machine_id("n001")});
  CHECK(h.s.machine_count() == 1);
}

TEST_CASE("a node the work map shows above its order is brought back under it, least invested first, and reported") {
  harness h(one_pool({fair_class("normal")}));
  h.machine("n000", 8);                             // order 8
  h.job("a", "u1", "normal", 2).max_processes = 4;  // four processes of order 2 fill it
  h.round();
  REQUIRE(h.count("a") == 4);
  CHECK(h.s.last_repairs().empty());
  h.machine("n001", 8);  // room for everyone's fair share: only the repair takes anything back
  // The orchestrator reports a process of another job there that the RM never gave (started late, say): n000
  // now runs 10 quanta of 8. It has run 5 s; a's have run 60 s each, so it is the least invested.
  for (auto& p : h.work.at(job_id("a")).processes) p.run_ms = 60000;
  auto& b = h.job("b", "u2", "normal", 2);
  b.max_processes = 1;
  auto late = running_process("late.1", "n000");
  late.run_ms = 5000;
  b.processes.push_back(late);
  h.round(false);
  REQUIRE(h.s.last_repairs().size() == 1);
  const auto& r = h.s.last_repairs().front();
  CHECK(r.node.str() == "n000");
  CHECK(r.held == 10);
  CHECK(r.order == 8);
  REQUIRE(r.shares.size() == 1);
  CHECK(r.shares[0].str() == "late.1");
  CHECK(h.with_status("b", share_status::preempt) == 1);
  CHECK(h.with_status("a", share_status::preempt) == 0);
  // The next round reports nothing more: the node is under its order once the preempted process goes, and b
  // gets its process back where there is room.
  h.orchestrate();
  h.round();
  CHECK(h.s.last_repairs().empty());
  CHECK(h.count("b") == 1);
  CHECK(h.on_machine("b", "n001") == 1);
  CHECK(h.no_machine_overbooked());
}

TEST_CASE("a settling round repairs nothing, the first full round after it does") {
  harness h(one_pool({fair_class("normal")}));
  h.machine("n000", 4);  // order 4
  auto& a = h.job("a", "u1", "normal", 2);
  a.max_processes = 3;
  for (int i = 0; i < 3; ++i) a.processes.push_back(running_process("old." + std::to_string(i), "n000"));
  h.s.apply_work(h.work);
  round_input settling;
  settling.now_ms = 1000;
  settling.settling = true;
  h.last = h.s.schedule(settling);
  CHECK(h.s.last_repairs().empty());
  CHECK(h.with_status("a", share_status::running) == 3);
  h.round(false);
  REQUIRE(h.s.last_repairs().size() == 1);
  CHECK(h.s.last_repairs().front().shares.size() == 1);
  CHECK(h.with_status("a", share_status::preempt) == 1);
}

TEST_CASE("a node reported down whose eviction is held back takes nothing new and keeps its work until evicted") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 2, 8);                            // n000, n001: order 8 each
  h.job("a", "u1", "normal", 2).max_processes = 8;  // fills both: 4 processes of order 2 on each
  h.round();
  h.round();  // the map shows the processes: running work, not grants still to start
  REQUIRE(h.count("a") == 8);
  REQUIRE(h.on_machine("a", "n001") == 4);
  // n001 is silent long enough to be down; the mass-loss brake holds its eviction back.
  REQUIRE(h.s.machine_unreachable(machine_id("n001")));
  h.job("b", "u2", "normal", 2).max_processes = 8;
  // Capacity is n000's 8 quanta: a and b count 2 processes each. a's 4 on n001 are neither victims (freeing
  // them gives nobody anything) nor counted against it, so a sheds 6 - 4 = 2 on n000, where b goes.
  for (int round = 0; round < 3; ++round) {
    h.round();
    INFO("round " << round);
    CHECK(h.on_machine("b", "n001") == 0);
    CHECK(h.on_machine("a", "n001") == 4);
    CHECK(h.with_status("a", share_status::evict) == 0);
    CHECK(h.s.view().machines[1].state == machine_state::down);
  }
  CHECK(h.on_machine("a", "n000") == 2);
  CHECK(h.on_machine("b", "n000") == 2);
  // Back before its turn: schedulable again, its work still there; the fair split of 16 quanta follows.
  h.machine("n001", 8);
  for (int round = 0; round < 3; ++round) h.round();
  CHECK(h.count("a") == 4);
  CHECK(h.count("b") == 4);
  CHECK(h.no_machine_overbooked());
  // Down again and its turn comes: what it holds is evicted then.
  const int there = h.on_machine("a", "n001") + h.on_machine("b", "n001");
  REQUIRE(h.s.machine_unreachable(machine_id("n001")));
  REQUIRE(h.s.machine_down(machine_id("n001")));
  h.round(false);
  CHECK(h.with_status("a", share_status::evict) + h.with_status("b", share_status::evict) == there);
}

TEST_CASE("a grant not yet started on a node reported down is withdrawn at once and placed on a live node") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 2, 8);                            // n000, n001: order 8 each
  h.job("a", "u1", "normal", 2).max_processes = 4;  // 4 processes of order 2: fits on one machine
  h.round(false);                                   // granted, not started yet
  const int granted_on_n001 = h.on_machine("a", "n001");
  const int granted_on_n000 = h.on_machine("a", "n000");
  REQUIRE(granted_on_n000 + granted_on_n001 == 4);
  // The node holding grants falls silent; the mass-loss brake holds its eviction back (machine_down is not
  // called), but what never started there has nothing to protect.
  const std::string silent = granted_on_n001 > 0 ? "n001" : "n000";
  const std::string live = silent == "n001" ? "n000" : "n001";
  const int stranded = h.on_machine("a", silent);
  REQUIRE(h.s.machine_unreachable(machine_id(silent)));
  h.round(false);
  INFO("silent " << silent);
  // Nothing `new` is left on the node reported down: the stranded grants are evicted there...
  CHECK(h.on_machine("a", silent) == 0);
  CHECK(h.with_status("a", share_status::evict) == stranded);
  // ... and the job gets its processes on the live node instead, in the same round.
  CHECK(h.on_machine("a", live) == 4);
  CHECK(h.count("a") == 4);
}
