// A fresh scheduler of a pool (a replacement after a hang or a throw, a reconfiguration, a standby taking
// over) starts from the last schedule published for the pool: every share listed there occupies its node
// until a work map shows it ended or a later schedule withdraws it (docs/reliability.md, "In-flight grants").
// Without that, shares published as `new` that the orchestrator has not reported yet are unknown to the
// fresh scheduler, which gives their quanta away a second time.
#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "tests/core/scheduler_harness.hpp"

using namespace rmbus::test;

namespace {

// What an rm.state listed for the pool, as the fresh scheduler receives it.
published_schedule published_of(const schedule_plan& plan) {
  published_schedule out;
  for (const auto& j : plan.jobs) {
    auto& shares = out[j.id];
    for (const auto& s : j.shares) shares.push_back({s.id, s.node, s.quanta, s.status, s.reclaim_at_ms});
  }
  return out;
}

std::set<std::string> ids_of(const job_plan& j) {
  std::set<std::string> out;
  for (const auto& s : j.shares) out.insert(s.id.str());
  return out;
}

// A second scheduler of the same pool with a share-id prefix of its own, the machines announced again.
struct successor {
  explicit successor(const harness& before) : s("default", before.cfg, "b2") {
    for (const auto& m : before.s.view().machines)
      s.update_machine({m.name, "", static_cast<std::uint64_t>(m.quanta) * 1024, false});
  }
  nodepool_scheduler s;
};

}  // namespace

TEST_CASE("a fresh scheduler keeps the shares its predecessor published as new before the map lists them") {
  harness h{one_pool({fair_class("normal")})};
  h.machines("n", 2, 8);
  h.job("alice-1", "alice", "normal", 1);
  h.round(false);  // 16 new shares of 1 GB on the two 8 GB machines; the orchestrator has not started them
  REQUIRE(h.with_status("alice-1", share_status::new_share) == 16);
  const auto granted = ids_of(h.plan("alice-1"));

  successor next{h};
  next.s.adopt_published(published_of(h.last));
  next.s.apply_work(h.work);  // still without alice's processes
  const auto& plan = next.s.schedule({h.now + 10000, {}});
  const auto* alice = plan.find(job_id("alice-1"));
  REQUIRE(alice != nullptr);
  // The same 16 shares, still new (the orchestrator may be starting them), and nothing granted twice:
  // without adoption the successor would list 16 shares of its own (b2.*) on the same 16 quanta.
  CHECK(ids_of(*alice) == granted);
  CHECK(std::count_if(alice->shares.begin(), alice->shares.end(),
                      [](const auto& s) { return s.status == share_status::new_share; }) == 16);
  for (const auto& m : next.s.view().machines) CHECK(m.free_quanta == 0);
}

TEST_CASE("an adopted share is confirmed by the map, and a newcomer gets quanta only by preemption") {
  harness h{one_pool({fair_class("normal")})};
  h.machines("n", 2, 8);
  h.job("alice-1", "alice", "normal", 1);
  h.round(false);
  successor next{h};
  next.s.adopt_published(published_of(h.last));
  // The orchestrator reports the processes it started (all 16), and bob arrives.
  h.orchestrate();
  auto work = h.work;
  auto bob = job_item("bob-1", "bob", "normal", 1);
  bob.submitted_ms = 99;
  work[bob.id] = bob;
  next.s.apply_work(work);
  const auto& plan = next.s.schedule({h.now + 10000, {}});
  const auto* alice = plan.find(job_id("alice-1"));
  const auto* b = plan.find(job_id("bob-1"));
  REQUIRE(alice != nullptr);
  REQUIRE(b != nullptr);
  // Fair share is 8 each of 16 quanta: alice's 16 are running under the old ids, 8 of them preempted for bob,
  // and bob waits for those preemptions instead of being placed on quanta alice still holds.
  int running = 0, preempting = 0;
  for (const auto& s : alice->shares) {
    running += s.status == share_status::running;
    preempting += s.status == share_status::preempt;
  }
  CHECK(running == 8);
  CHECK(preempting == 8);
  CHECK(b->shares.empty());
  CHECK(b->reason == reason_code::waiting_for_preemptions);
}

TEST_CASE("an adopted running share that the map no longer lists has ended: its quanta are free again") {
  harness h{one_pool({fair_class("normal")})};
  h.machines("n", 1, 8);
  h.job("alice-1", "alice", "normal", 1).max_processes = 4;
  h.round();  // 4 new, started by the orchestrator
  h.round();  // 4 running
  REQUIRE(h.with_status("alice-1", share_status::running) == 4);
  const auto published = published_of(h.last);
  // Two processes end before the fresh scheduler sees its first map.
  auto& procs = h.work[job_id("alice-1")].processes;
  procs.erase(procs.begin(), procs.begin() + 2);
  h.work[job_id("alice-1")].max_processes = 2;

  successor next{h};
  next.s.adopt_published(published);
  next.s.apply_work(h.work);
  const auto& plan = next.s.schedule({h.now + 10000, {}});
  const auto* alice = plan.find(job_id("alice-1"));
  REQUIRE(alice != nullptr);
  CHECK(alice->shares.size() == 2);
  CHECK(next.s.view().machines.front().free_quanta == 6);
}

TEST_CASE("an adopted share being preempted holds its quanta until the map shows its process gone") {
  harness h{one_pool({fair_class("normal")})};
  h.machines("n", 1, 4);
  h.job("alice-1", "alice", "normal", 1);
  h.round();
  h.round();
  REQUIRE(h.with_status("alice-1", share_status::running) == 4);
  h.job("bob-1", "bob", "normal", 1);
  h.round(false);  // 2 of alice's preempted for bob; the orchestrator has not stopped them yet
  REQUIRE(h.with_status("alice-1", share_status::preempt) == 2);
  const auto published = published_of(h.last);

  successor next{h};
  next.s.adopt_published(published);
  next.s.apply_work(h.work);  // alice's four processes all still listed
  const auto& plan = next.s.schedule({h.now + 10000, {}});
  const auto* alice = plan.find(job_id("alice-1"));
  const auto* bob = plan.find(job_id("bob-1"));
  REQUIRE(alice != nullptr);
  REQUIRE(bob != nullptr);
  int preempting = 0;
  for (const auto& s : alice->shares) preempting += s.status == share_status::preempt;
  CHECK(preempting == 2);   // still asked to stop
  CHECK(bob->shares.empty());  // nothing placed on quanta the preempted processes still hold
}

TEST_CASE("adopted shares of work the first map no longer lists are forgotten with it") {
  harness h{one_pool({fair_class("normal")})};
  h.machines("n", 1, 8);
  h.job("alice-1", "alice", "normal", 1);
  h.round(false);
  const auto published = published_of(h.last);
  h.work.erase(job_id("alice-1"));  // cancelled before it started
  h.job("bob-1", "bob", "normal", 1);

  successor next{h};
  next.s.adopt_published(published);
  next.s.apply_work(h.work);
  const auto& plan = next.s.schedule({h.now + 10000, {}});
  CHECK(plan.find(job_id("alice-1")) == nullptr);
  const auto* bob = plan.find(job_id("bob-1"));
  REQUIRE(bob != nullptr);
  CHECK(bob->shares.size() == 8);
}

TEST_CASE("an adopted share on a machine not heard of yet holds its quanta there until the machine reports") {
  harness h{one_pool({fair_class("normal")})};
  h.machines("n", 2, 8);
  h.job("alice-1", "alice", "normal", 2).max_processes = 2;
  h.round(false);  // two new 2 GB shares
  const auto published = published_of(h.last);
  std::set<std::string> nodes;
  for (const auto& s : h.plan("alice-1").shares) nodes.insert(s.node.str());

  // The successor has heard of no machine yet (the intake's announcements are still on their way).
  nodepool_scheduler next{"default", h.cfg, "b2"};
  next.adopt_published(published);
  auto work = h.work;
  next.apply_work(work);
  (void)next.schedule({h.now + 10000, {}});
  int held = 0;
  for (const auto& m : next.view().machines) {
    CHECK(nodes.count(m.name.str()) == 1);
    CHECK(m.free_quanta == 0);  // known only through the shares it holds
    held += m.quanta;
  }
  CHECK(held == 4);
  // The machines report their real size: the adopted shares keep their place, the rest is free.
  for (const auto& n : nodes) next.update_machine({machine_id(n), "", 8 * 1024, false});
  auto bob = job_item("bob-1", "bob", "normal", 1);
  bob.submitted_ms = 99;
  work[bob.id] = bob;
  next.apply_work(work);
  const auto& plan = next.schedule({h.now + 20000, {}});
  const auto* alice = plan.find(job_id("alice-1"));
  REQUIRE(alice != nullptr);
  CHECK(alice->shares.size() == 2);
  CHECK(std::all_of(alice->shares.begin(), alice->shares.end(),
                    [](const auto& s) { return s.status == share_status::new_share; }));
  // Bob's shares go beside them, never on the quanta they hold.
  int total = 0;
  for (const auto& m : next.view().machines) {
    int used = 0;
    for (const auto& held_share : m.shares) used += held_share.share.quanta;
    CHECK(used <= m.quanta);
    total += m.quanta;
  }
  // Every adopted node now at its real 8 quanta; bob has the rest of them, 1 GB each.
  CHECK(total == static_cast<int>(8 * nodes.size()));
  const auto* b = plan.find(job_id("bob-1"));
  REQUIRE(b != nullptr);
  CHECK(b->shares.size() == 8 * nodes.size() - 4);
}

TEST_CASE("a predecessor's grants older than the map beside them are withdrawn where they no longer fit, even "
          "while settling") {
  // A standby that missed its predecessor's last schedules takes over: the schedule it adopts gives alice all
  // of its machine as new shares, while the map shows bob's four processes running there too (granted by a later schedule
  // it never heard). Adopted as they stand, it would list 12 quanta of 8.
  harness h{one_pool({fair_class("normal")})};
  h.machines("n", 1, 8);
  h.job("alice-1", "alice", "normal", 1).max_processes = 8;
  h.round(false);  // 8 new shares on n000, not started
  REQUIRE(h.with_status("alice-1", share_status::new_share) == 8);
  const auto stale = published_of(h.last);

  auto work = h.work;
  auto bob = job_item("bob-1", "bob", "normal", 1);
  for (int i = 1; i <= 4; ++i) {
    process_report p;
    p.id = share_id("later.b" + std::to_string(i));
    p.node = machine_id("n000");
    p.state = process_state::running;
    bob.processes.push_back(p);
  }
  work[bob.id] = bob;

  successor next{h};
  next.s.adopt_published(stale);
  next.s.apply_work(work);
  round_input settling{h.now + 10000, {}};
  settling.settling = true;
  const auto& plan = next.s.schedule(settling);
  // The grants taken back are preempted, not dropped: the orchestrator may be starting them late, so their
  // space stays held until it acts. All of them go: a `new` share left beside them would be a start above the
  // order, which publication's guard refuses.
  int starting_or_running = 0, alice_new = 0, alice_taken_back = 0, bob_running = 0;
  for (const auto& j : plan.jobs)
    for (const auto& s : j.shares) {
      if (s.node != machine_id("n000")) continue;
      if (s.status == share_status::new_share || s.status == share_status::running) starting_or_running += s.quanta;
      alice_new += j.id == job_id("alice-1") && s.status == share_status::new_share;
      alice_taken_back += j.id == job_id("alice-1") && s.status == share_status::preempt;
      bob_running += j.id == job_id("bob-1") && s.status == share_status::running;
    }
  CHECK(starting_or_running == 4);
  CHECK(bob_running == 4);  // what runs is kept: the settling round stops nothing that runs
  CHECK(alice_new == 0);
  CHECK(alice_taken_back == 8);
  REQUIRE(next.s.last_repairs().size() == 1);
  CHECK(next.s.last_repairs().front().node == machine_id("n000"));
  CHECK(next.s.last_repairs().front().held == 12);
  CHECK(next.s.last_repairs().front().shares.size() == 8);
}

namespace {

int held_on(const schedule_plan& plan, const std::string& node) {
  int held = 0;
  for (const auto& j : plan.jobs)
    for (const auto& s : j.shares)
      if (s.node.str() == node && (s.status == share_status::running || s.status == share_status::new_share))
        held += s.quanta;
  return held;
}

}  // namespace

TEST_CASE("rmbus-sim-check seed 54: adopted shares on a node a recovered process already fills are repaired") {
  // The orchestrator started a process the predecessor had withdrawn (a late start); the fresh scheduler
  // recovers it from the map, then adopts the predecessor's new shares of a job that sorts after it. Recovery
  // saw room; adoption filled the node past its order, and nothing noted it for repair.
  harness h{one_pool({fair_class("normal")})};
  h.machine("n000", 4);
  h.job("b", "u2", "normal", 1).max_processes = 4;
  h.round(false);  // 4 new shares of 1 GB fill n000; not started yet
  REQUIRE(h.with_status("b", share_status::new_share) == 4);

  successor next{h};
  next.s.adopt_published(published_of(h.last));
  auto work = h.work;
  auto& late = work[job_id("a")] = job_item("a", "u1", "normal", 1);
  late.max_processes = 1;
  late.processes.push_back(running_process("x.1", "n000"));  // a share id no schedule lists any more
  next.s.apply_work(work);
  const auto& plan = next.s.schedule({h.now + 10000, {}});
  CHECK(held_on(plan, "n000") <= 4);
  REQUIRE(next.s.last_repairs().size() == 1);
  CHECK(next.s.last_repairs().front().node.str() == "n000");
}

TEST_CASE("rmbus-sim-check seed 624: an adopted eviction holds its space until the orchestrator acts on it") {
  // The predecessor evicted two `new` shares (their node went down and came back) in round 2; the orchestrator,
  // still about to start them, has acted on round 1 only. A fresh scheduler adopting round 2's schedule must not
  // take a map without those processes as proof that they are gone: they may start any moment.
  harness h{one_pool({fair_class("normal")})};
  h.machine("n000", 2);
  h.job("a", "u1", "normal", 1).max_processes = 2;
  h.s.apply_work(h.work);
  h.last = h.s.schedule({h.now += 10000, {}, false, 1});
  REQUIRE(h.with_status("a", share_status::new_share) == 2);
  h.s.machine_down(machine_id("n000"));
  h.machine("n000", 2);
  h.s.set_acted_cycle(1);
  h.s.apply_work(h.work);
  h.last = h.s.schedule({h.now += 10000, {}, false, 2});
  REQUIRE(h.with_status("a", share_status::evict) == 2);

  successor next{h};
  next.s.adopt_published(published_of(h.last));
  h.job("b", "u2", "normal", 1).max_processes = 2;  // work that would take n000 at once
  for (std::uint64_t cycle = 3; cycle <= 4; ++cycle) {
    next.s.set_acted_cycle(1);  // maps built before the orchestrator read round 2
    next.s.apply_work(h.work);
    const auto& plan = next.s.schedule({h.now += 10000, {}, false, cycle});
    const auto* b = plan.find(job_id("b"));
    REQUIRE(b != nullptr);
    CHECK(b->shares.empty());  // n000's 2 quanta are still held by a's evicted shares
    CHECK(plan.find(job_id("a"))->shares.size() == 2);
  }
  // The orchestrator has acted on the fresh scheduler's first round, which listed the evictions: gone, and
  // n000 is shared out again (a and b split it).
  next.s.set_acted_cycle(3);
  next.s.apply_work(h.work);
  const auto& plan = next.s.schedule({h.now += 10000, {}, false, 5});
  for (const auto& s : plan.find(job_id("a"))->shares) CHECK(s.status == share_status::new_share);
  CHECK(held_on(plan, "n000") == 2);
  CHECK_FALSE(plan.find(job_id("b"))->shares.empty());
}

TEST_CASE("a predecessor's grant on a node reported down since is withdrawn by the successor and placed elsewhere") {
  harness h{one_pool({fair_class("normal")})};
  h.machines("n", 2, 8);
  h.job("alice-1", "alice", "normal", 2).max_processes = 4;  // 4 processes of order 2: one machine's worth
  h.round(false);  // granted, not started
  std::string silent;
  for (const auto& s : h.plan("alice-1").shares) silent = s.node.str();
  const std::string live = silent == "n000" ? "n001" : "n000";
  const int stranded = h.on_machine("alice-1", silent);
  REQUIRE(stranded > 0);

  // The successor hears the node is down (as the intake announces it) before it adopts the schedule.
  successor next{h};
  REQUIRE(next.s.machine_unreachable(machine_id(silent)));
  next.s.adopt_published(published_of(h.last));
  next.s.apply_work(h.work);  // the map still shows no process of alice
  const auto& plan = next.s.schedule({h.now + 10000, {}});
  const auto* alice = plan.find(job_id("alice-1"));
  REQUIRE(alice != nullptr);
  int new_on_silent = 0, evicted = 0, on_live = 0;
  for (const auto& s : alice->shares) {
    new_on_silent += s.node.str() == silent && s.status == share_status::new_share;
    evicted += s.status == share_status::evict;
    on_live += s.node.str() == live && (s.status == share_status::new_share || s.status == share_status::running);
  }
  CHECK(new_on_silent == 0);
  CHECK(evicted == stranded);
  CHECK(on_live == 4);
}
