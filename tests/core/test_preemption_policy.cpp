// The sparing preemption policy (issue 20; core/preemption_policy.hpp says the rules R1-R5), each on a small
// example computed by hand, beside what DUCC's behaviour does on the same input. Machines of one quantum and
// jobs of one quantum per process, so processes and quanta are the same numbers. The harness advances `now`
// by 10 s per round and the epoch is 10 s, so R5's hold (ten epochs) is ten rounds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <utility>

#include "core/preemption_policy.hpp"
#include "tests/core/scheduler_harness.hpp"

using namespace rmbus::test;

namespace {

scheduler_config config(preemption_policy p) {
  auto cfg = one_pool({fair_class("normal")});
  cfg.settings.preemption_policy = p;
  return cfg;
}

// 10 machines; u1's job a holds all 10 (it came first).
struct full_cluster {
  harness h;
  explicit full_cluster(preemption_policy p) : h(config(p)) {
    h.machines("n", 10, 1);
    h.job("a", "u1", "normal", 1);
    h.round();
    REQUIRE(h.count("a") == 10);
  }
};

}  // namespace

TEST_CASE("sparing R1/R2/R4: a starved newcomer gets its share by preemption, as under DUCC, and keeps it") {
  for (auto p : {preemption_policy::ducc, preemption_policy::sparing}) {
    full_cluster c(p);
    auto& h = c.h;
    h.job("b", "u2", "normal", 1);
    h.round();
    // two users, 10 / 2 = 5 each: u2 holds 0 of 5 (starved), u1 holds 10 of 5: 5 preempted either way
    CHECK(h.plan("b").given == 5);
    CHECK(h.last.counts.preempted == 5);
    CHECK(h.with_status("a", share_status::preempt) == 5);
    h.round();
    CHECK(h.count("b") == 5);
    CHECK(h.count("a") == 5);
    // unchanged input: nothing more is preempted, round after round
    for (int i = 0; i < 4; ++i) {
      h.round();
      CHECK(h.last.counts.preempted == 0);
    }
  }
}

TEST_CASE("sparing R2: a user short by no more than half of its count is not preempted for") {
  for (auto p : {preemption_policy::ducc, preemption_policy::sparing}) {
    for (int held : {5, 4}) {
      harness h(config(p));
      h.machines("n", 20, 1);
      h.job("a", "u1", "normal", 1);
      h.job("b", "u2", "normal", 1, held);  // `held` work items, one thread: it can use that many processes
      h.round();
      REQUIRE(h.count("a") == 20 - held);
      REQUIRE(h.count("b") == held);
      h.work[job_id("b")].items_total = 1000;  // now b could use more: counts 10 / 10
      h.round();
      CHECK(h.plan("b").given == 10);
      // u2 holds 5 of 10 (short by exactly half: not starved) or 4 of 10 (short by 6: starved)
      const int expected = p == preemption_policy::ducc || held == 4 ? 10 - held : 0;
      CHECK(h.last.counts.preempted == expected);
      h.round();
      CHECK(h.count("b") == held + expected);
    }
  }
}

TEST_CASE("sparing R2: a shortfall of half the count that lasts thirty epochs is claimed then, and the round runs "
          "again for it") {
  // Two users of 10 machines each: u2 holds 10 of its 20 (short by exactly half: not starved at once). Nothing
  // changes after that, so only the patience running out can bring a round that preempts.
  harness h(config(preemption_policy::sparing));
  h.machines("n", 40, 1);
  h.job("a", "u1", "normal", 1);
  h.job("b", "u2", "normal", 1, 10);
  h.round();
  REQUIRE(h.count("a") == 30);
  REQUIRE(h.count("b") == 10);
  h.work[job_id("b")].items_total = 1000;
  h.round();  // b short by 10 of 20 from this round on
  REQUIRE(h.plan("b").given == 20);
  const auto short_from = h.now;
  const auto patience = rmbus::core::sparing_patience_epochs * 10000;  // the harness's epoch is 10 s
  while (h.now + 10000 < short_from + patience) {
    h.round();
    INFO("now " << h.now);
    CHECK(h.last.counts.preempted == 0);
  }
  h.round();  // the patience is over: u2 claims its 10, u1 sheds them
  CHECK(h.now == short_from + patience);
  CHECK(h.last.counts.preempted == 10);
  CHECK(h.with_status("a", share_status::preempt) == 10);
  h.round();
  CHECK(h.count("b") == 20);
  CHECK(h.count("a") == 20);
  for (int i = 0; i < 3; ++i) {
    h.round();
    CHECK(h.last.counts.preempted == 0);
  }
}

TEST_CASE("sparing R2: one user's jobs are not preempted for one another") {
  for (auto p : {preemption_policy::ducc, preemption_policy::sparing}) {
    full_cluster c(p);
    auto& h = c.h;
    h.job("a2", "u1", "normal", 1);
    h.round();
    // u1 is counted 10 in all, split 5 / 5: DUCC preempts 5 of a for a2; under sparing u1 holds its count,
    // so nothing is preempted and a2 waits for a's processes to end
    CHECK(h.plan("a2").given == 5);
    CHECK(h.last.counts.preempted == (p == preemption_policy::ducc ? 5 : 0));
    h.round();
    CHECK(h.count("a2") == (p == preemption_policy::ducc ? 5 : 0));
    CHECK(h.count("a") == (p == preemption_policy::ducc ? 5 : 10));
  }
}

TEST_CASE(
    "sparing R1/R3/R4: only what the starved claimant needs is preempted, and the freed quanta go to it") {
  for (auto p : {preemption_policy::ducc, preemption_policy::sparing}) {
    full_cluster c(p);
    auto& h = c.h;
    h.job("a2", "u1", "normal", 1);  // older than b: What Of would serve it first
    h.job("b", "u2", "normal", 1);
    h.round();
    // u1 counted 5 (a 3, a2 2: equal jobs, the older first), u2 counted 5
    REQUIRE(h.plan("b").given == 5);
    REQUIRE(h.plan("a").given + h.plan("a2").given == 5);
    const int a_given = h.plan("a").given;
    // DUCC: a sheds everything above its count (10 - 3 = 7); sparing: only u2's claim of 5, and u1 keeps
    // its count (5) between its jobs as they stand
    CHECK(h.last.counts.preempted == (p == preemption_policy::ducc ? 10 - a_given : 5));
    h.round();
    CHECK(h.count("b") == 5);  // R4: the 5 freed go to b, not to the older a2
    CHECK(h.count("a2") == (p == preemption_policy::ducc ? h.plan("a2").given : 0));
    CHECK(h.count("a") == (p == preemption_policy::ducc ? a_given : 5));
  }
}

TEST_CASE("sparing R5: a job that just claimed is no victim for ten epochs, and the round runs again then") {
  full_cluster c(preemption_policy::sparing);
  auto& h = c.h;
  h.job("b", "u2", "normal", 1);
  h.round();  // now 20000: b claims 5 (claimed at 20000); a sheds 5
  h.round();  // now 30000: b gets them
  REQUIRE(h.count("b") == 5);
  h.job("c", "u3", "normal", 1);
  h.round();  // now 40000: three users, counts 4 / 3 / 3
  const int a_over = 5 - h.plan("a").given;
  const int b_over = 5 - h.plan("b").given;
  REQUIRE(a_over + b_over == 3);
  REQUIRE(b_over >= 1);
  // c claims 3, but b claimed within the hold (40000 - 20000 < 100000): only a's surplus is taken
  CHECK(h.with_status("b", share_status::preempt) == 0);
  CHECK(h.with_status("a", share_status::preempt) == a_over);
  // the map changes no more after a's process left, but c's claim is looked at again when the hold ends
  for (std::int64_t now = 50000; now < 120000; now += 10000) {
    h.round();
    INFO("now " << h.now);
    CHECK(h.last.counts.preempted == 0);
  }
  CHECK(h.count("c") == 3 - b_over);
  h.round();  // now 120000: the hold is over; c still claims b_over
  CHECK(h.now == 120000);
  CHECK(h.with_status("b", share_status::preempt) == b_over);
  h.round();
  CHECK(h.count("c") == 3);
}

namespace {

// Whether a quiet cluster is still giving or preempting after 50 rounds: random machines and jobs (seeded)
// in two classes that ramp by doubling as DUCC's shipped classes do, an orchestrator that starts and stops
// exactly what each plan says, and no work done, so that nothing changes but the schedule itself. Also
// returns the last round that gave or preempted anything.
std::pair<bool, int> restless_after_50_rounds(std::uint32_t seed, preemption_policy p) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto normal = fair_class("normal", 100);
  auto low = fair_class("low", 50);
  for (auto* c : {&normal, &low}) {
    c->expand_by_doubling = true;
    c->initialization_cap = 1;
  }
  auto cfg = one_pool({normal, low});
  cfg.settings.preemption_policy = p;
  harness h(cfg);
  h.machines("a", pick(20, 60), 8);
  h.machines("b", pick(10, 40), 16);
  const int jobs = pick(20, 60);
  for (int j = 0; j < jobs; ++j)
    h.job("j" + std::to_string(j), "u" + std::to_string(pick(0, 7)), pick(0, 2) != 0 ? "normal" : "low", pick(1, 4),
          pick(2, 200));
  int last_busy = -1;
  bool restless = false;
  for (int r = 0; r < 60; ++r) {
    h.round();
    const bool busy = h.last.counts.given > 0 || h.last.counts.preempted > 0;
    if (busy) last_busy = r;
    if (busy && r >= 50) restless = true;
  }
  return {restless, last_busy};
}

}  // namespace

TEST_CASE("sparing: a quiet cluster comes to rest where DUCC's rules with doubling keep preempting") {
  // Under DUCC's rules a job ramping by doubling is capped at twice what it holds, so its class's and user's
  // demand move with what it holds: a job preempted down to its count asks less next round, another job's
  // count rises, and some clusters fall into a two-round cycle that gives and preempts the same processes
  // for ever. Sparing preempts only for starved claimants and only what they need.
  int ducc_restless = 0, sparing_restless = 0, sparing_last_busy = -1;
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    ducc_restless += restless_after_50_rounds(seed, preemption_policy::ducc).first ? 1 : 0;
    const auto [restless, last_busy] = restless_after_50_rounds(seed, preemption_policy::sparing);
    sparing_restless += restless ? 1 : 0;
    sparing_last_busy = std::max(sparing_last_busy, last_busy);
  }
  // The clusters include DUCC's cycle: otherwise this would say nothing about sparing.
  CHECK(ducc_restless >= 3);
  CHECK(sparing_restless == 0);
  // Sparing settles within a dozen rounds, except that a user left short by half its count or less since
  // then claims once R2's patience runs out (sparing_patience_epochs, a round an epoch here).
  CHECK(sparing_last_busy < rmbus::core::sparing_patience_epochs + 12);
}

namespace {

// A two-level nodepool tree: "default" (no machines of its own) over the siblings A (a000-a003) and B
// (b000-b003), one-quantum machines. Class "top" lives on default and may use both siblings; class "inA" may
// use A only, "inB" B only.
scheduler_config sibling_pools(preemption_policy p) {
  auto cfg = one_pool({fair_class("top"), fair_class("inA", 100, 10, "A"), fair_class("inB", 100, 10, "B")});
  add_subpool(cfg, "A", {"a000", "a001", "a002", "a003"});
  add_subpool(cfg, "B", {"b000", "b001", "b002", "b003"});
  cfg.settings.preemption_policy = p;
  return cfg;
}

}  // namespace

TEST_CASE("both policies: a claimant in nested pool A takes victims only in A, never in its sibling B") {
  for (auto p : {preemption_policy::ducc, preemption_policy::sparing}) {
    INFO("policy " << (p == preemption_policy::ducc ? "ducc" : "sparing"));
    harness h(sibling_pools(p));
    h.machines("a", 4, 1);
    h.machines("b", 4, 1);
    h.job("x", "u1", "top", 1);
    h.round();
    REQUIRE(h.count("x") == 8);  // a squatter on every machine of A and of B
    // x's processes in B are the least invested: the investment order alone would preempt them first
    for (auto& proc : h.work[job_id("x")].processes) proc.run_ms = proc.node.str()[0] == 'b' ? 10 : 900000;
    h.job("c", "u2", "inA", 1);
    h.round();
    // By hand. How Much, pool A: only inA has work there, it is given all of A's 4. Pool default: top and inA
    // (weights 100 / 100) share its 8 quanta, 4 each; inA keeps the count of its own (deepest) level, 4.
    // So x is counted 4 and holds 8: 4 above its count; c is counted 4 and holds 0 (A is full of x).
    REQUIRE(h.plan("x").given == 4);
    REQUIRE(h.plan("c").given == 4);
    // c can use A only: x's 4 processes in A go, its 4 in B stay (preempting one there frees nothing for c)
    CHECK(h.with_status("x", share_status::preempt) == 4);
    for (const auto& sh : h.plan("x").shares) {
      INFO("x on " << sh.node.str());
      CHECK((sh.status == share_status::preempt) == (sh.node.str()[0] == 'a'));
    }
    h.round();  // the orchestrator confirmed the exits
    CHECK(h.count("c") == 4);
    for (const char* n : {"a000", "a001", "a002", "a003"}) CHECK(h.on_machine("c", n) == 1);
    CHECK(h.count("x") == 4);
    for (const char* n : {"b000", "b001", "b002", "b003"}) CHECK(h.on_machine("x", n) == 1);
    h.round();
    CHECK(h.last.counts.preempted == 0);  // and it rests there
  }
}

TEST_CASE("ducc: a job above its own cap still sheds down to it, in a sibling pool only for that") {
  harness h(sibling_pools(preemption_policy::ducc));
  h.machines("a", 4, 1);
  h.machines("b", 4, 1);
  h.job("x", "u1", "top", 1);
  h.round();
  REQUIRE(h.count("x") == 8);
  for (auto& proc : h.work[job_id("x")].processes) proc.run_ms = proc.node.str()[0] == 'b' ? 10 : 900000;
  h.work[job_id("x")].max_processes = 2;  // x itself asks for 2 now
  h.job("c", "u2", "inA", 1);
  h.round();
  // By hand. x's cap is 2: top wants 2, inA 4 of default's 8; x is counted 2, c 4 (A's 4, its own level).
  REQUIRE(h.plan("x").given == 2);
  REQUIRE(h.plan("c").given == 4);
  // x sheds 6: first its 4 in A, where c can use the space (whatever their investment), then 2 in B because
  // x must come down to its cap of 2 anyway.
  CHECK(h.with_status("x", share_status::preempt) == 6);
  int preempted_in_b = 0;
  for (const auto& sh : h.plan("x").shares) {
    if (sh.node.str()[0] == 'a') CHECK(sh.status == share_status::preempt);
    else preempted_in_b += sh.status == share_status::preempt ? 1 : 0;
  }
  CHECK(preempted_in_b == 2);
  h.round();
  CHECK(h.count("c") == 4);
  CHECK(h.count("x") == 2);
}

TEST_CASE("sparing reservations: the machine cleared is the least invested one of users above their counts") {
  for (auto p : {preemption_policy::ducc, preemption_policy::sparing}) {
    INFO("policy " << (p == preemption_policy::ducc ? "ducc" : "sparing"));
    auto cfg = one_pool({reserve_class("res"), fair_class("normal")});
    cfg.settings.preemption_policy = p;
    harness h(cfg);
    for (const char* name : {"m0", "m1", "m2", "m3"}) h.machine(name, 4);  // order 4 each
    // Running (recovered from the map), four processes per machine: u2's b (4 work items: it can use 4) on
    // m0, invested 10 ms each; u1's a on m1, m2 and m3, invested 5000, 1000 and 3000 ms each.
    auto& b = h.job("b", "u2", "normal", 1, 4);
    auto& a = h.job("a", "u1", "normal", 1);
    int seq = 0;
    const auto run = [&](work_item& w, const char* node, std::int64_t run_ms) {
      for (int k = 0; k < 4; ++k) {
        auto proc = running_process("old." + std::to_string(++seq), node);
        proc.run_ms = run_ms;
        w.processes.push_back(proc);
      }
    };
    run(b, "m0", 10);
    run(a, "m1", 5000);
    run(a, "m2", 1000);
    run(a, "m3", 3000);
    h.round();
    REQUIRE(h.count("a") == 12);
    REQUIRE(h.count("b") == 4);
    REQUIRE(h.last.counts.preempted == 0);
    h.job("r", "u3", "res", 4).kind = work_kind::reservation;
    h.round();
    // By hand. How Much earmarks one machine of order 4 for r; the 12 quanta left give u2 its 4 (all b can
    // use) and u1 8: u1 holds 4 above its count, u2 exactly its count.
    REQUIRE(h.plan("a").given == 8);
    REQUIRE(h.plan("b").given == 4);
    if (p == preemption_policy::ducc) {
      // DUCC's rule: no machine is free, all four have 4 live quanta, so the first by name, m0, is cleared
      // (u2 falls to 0 of 4), and a still sheds its 4 above its count, the least invested (m2): 8 preempted.
      CHECK(h.last.counts.preempted == 8);
      CHECK(h.with_status("b", share_status::preempt) == 4);
      for (const auto& sh : h.plan("a").shares) CHECK((sh.status == share_status::preempt) == (sh.node.str() == "m2"));
      h.round();
      CHECK(h.on_machine("r", "m0") == 1);
      continue;
    }
    // Sparing: m0's victims are the least invested (40 ms), but u2 is at its count; of u1's machines, whose
    // clearing takes nothing below u1's count, m2 holds the least invested work (4000 ms against 12000 on m3
    // and 20000 on m1). Clearing it brings u1 to its count: nothing else is preempted.
    CHECK(h.last.counts.preempted == 4);
    CHECK(h.with_status("b", share_status::preempt) == 0);
    for (const auto& sh : h.plan("a").shares) CHECK((sh.status == share_status::preempt) == (sh.node.str() == "m2"));
    h.round();
    CHECK(h.on_machine("r", "m2") == 1);
    CHECK(h.count("b") == 4);
    CHECK(h.count("a") == 8);
    h.round();
    CHECK(h.last.counts.preempted == 0);
  }
}

TEST_CASE("sparing R1/R3: a machine whose victims went out of reach earlier in the round is passed by") {
  harness h(config(preemption_policy::sparing));
  h.machines("n", 8, 1);  // n000-n007, one quantum each
  // Running (recovered from the map): u1's a on n000-n003, u2's b on n004-n007.
  auto& a = h.job("a", "u1", "normal", 1);
  auto& b = h.job("b", "u2", "normal", 1);
  for (int k = 0; k < 8; ++k) {
    const std::string node = "n00" + std::to_string(k);
    (k < 4 ? a : b).processes.push_back(running_process("old." + std::to_string(k), node));
  }
  h.round();
  REQUIRE(h.count("a") == 4);
  REQUIRE(h.count("b") == 4);
  REQUIRE(h.last.counts.preempted == 0);
  h.job("c", "u3", "normal", 1);
  h.round();
  // By hand. Three users share 8 quanta: a 3, b 3, c 2. c holds none of its count (starved) and claims 2;
  // a and b may each lose 4 - 3 = 1.
  REQUIRE(h.plan("a").given == 3);
  REQUIRE(h.plan("b").given == 3);
  REQUIRE(h.plan("c").given == 2);
  // Every machine costs c one quantum preempted, so R1 takes them by name: n000 (a's) first. Then a is down to
  // its count: its processes on n001-n003 are victims no longer, and c's second process goes to n004 (b's),
  // the first machine by name whose victim may still go; n005-n007 keep b's.
  CHECK(h.last.counts.preempted == 2);
  for (const auto& [job, node] : {std::pair{"a", "n000"}, {"b", "n004"}}) {
    for (const auto& sh : h.plan(job).shares) {
      INFO(job << " on " << sh.node.str());
      CHECK((sh.status == share_status::preempt) == (sh.node.str() == node));
    }
  }
  h.round();
  CHECK(h.on_machine("c", "n000") == 1);
  CHECK(h.on_machine("c", "n004") == 1);
}
