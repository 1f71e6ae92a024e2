// The investment order (shared/ducc-rm.md 1.9), key by key, and preemption through the scheduler.
#include <catch2/catch.hpp>

#include "core/preemption.hpp"
#include "tests/core/scheduler_harness.hpp"

using namespace rmbus::test;

namespace {

// A model with pools top > sub > subsub, one fair-share class on top, machines of 64 and 32 GB on top
// and one machine in each nested pool, and one job. Shares are added by the tests.
struct investment_model {
  cluster_model m;
  investment_model() {
    m.quantum_mb = 1024;
    m.pools = {pool_rec{"top", -1, {1}, 0, 100}, pool_rec{"sub", 0, {2}, 1, 100}, pool_rec{"subsub", 1, {}, 2, 100}};
    class_rec c;
    c.def = fair_class("normal", 100, 10, "top");
    c.pool = 0;
    m.classes.push_back(c);
    auto add_machine = [&](const char* name, std::uint64_t gb, int pool) {
      machine_rec mc;
      mc.name = machine_id(name);
      mc.memory_mb = gb * 1024;
      mc.order = static_cast<int>(gb);
      mc.pool = pool;
      m.machines.push_back(mc);
    };
    add_machine("big", 64, 0);
    add_machine("small", 32, 0);
    add_machine("sub1", 32, 1);
    add_machine("subsub1", 32, 2);
    job_rec j;
    j.live = true;
    j.cls = 0;
    j.order = 1;
    m.jobs.push_back(j);
  }
  share_rec& add(int machine, std::uint64_t seq, bool initialized, std::int64_t init_ms, std::int64_t run_ms) {
    const int slot = m.add_share(0, machine, 1, share_id("s" + std::to_string(seq)), seq, share_status::running);
    auto& s = m.shares[static_cast<std::size_t>(slot)];
    s.initialized = initialized;
    s.init_ms = init_ms;
    s.run_ms = run_ms;
    return s;
  }
  bool less(int a, int b) const { return investment_less(m, m.shares[static_cast<std::size_t>(a)], m.shares[static_cast<std::size_t>(b)]); }
};

}  // namespace

TEST_CASE("investment key 0: a squatter goes before a resident, whatever its investment") {
  investment_model im;
  im.add(1, 1, true, 0, 100);      // resident, little investment
  im.add(2, 2, true, 0, 999999);   // squatter in sub, huge investment
  CHECK(im.less(1, 0));
  CHECK_FALSE(im.less(0, 1));
}

TEST_CASE("investment key 1: not initialized before initialized") {
  investment_model im;
  im.add(1, 1, true, 0, 0);
  im.add(1, 2, false, 500000, 0);
  CHECK(im.less(1, 0));
  CHECK_FALSE(im.less(0, 1));
}

TEST_CASE("investment key 2: both initializing, smaller initialization time first") {
  investment_model im;
  im.add(1, 1, false, 2000, 0);
  im.add(1, 2, false, 1000, 0);
  CHECK(im.less(1, 0));
  CHECK_FALSE(im.less(0, 1));
}

TEST_CASE("investment key 3: both initialized, smaller investment first") {
  investment_model im;
  im.add(1, 2, true, 0, 7000);
  im.add(1, 1, true, 0, 3000);
  CHECK(im.less(1, 0));
  CHECK_FALSE(im.less(0, 1));
}

TEST_CASE("investment key 4: equal investment, deeper nodepool first (DUCC's dead key works here)") {
  investment_model im;
  im.add(2, 2, true, 0, 5000);  // squatter in sub (depth 1)
  im.add(3, 1, true, 0, 5000);  // squatter in subsub (depth 2)
  CHECK(im.less(1, 0));
  CHECK_FALSE(im.less(0, 1));
}

TEST_CASE("investment key 5: then larger machine memory first") {
  investment_model im;
  im.add(1, 2, true, 0, 5000);  // small (32 GB)
  im.add(0, 1, true, 0, 5000);  // big (64 GB)
  CHECK(im.less(1, 0));
  CHECK_FALSE(im.less(0, 1));
}

TEST_CASE("investment key 6: then the youngest share first") {
  investment_model im;
  im.add(1, 1, true, 0, 5000);
  im.add(1, 2, true, 0, 5000);  // created later
  CHECK(im.less(1, 0));
  CHECK_FALSE(im.less(0, 1));
}

TEST_CASE("preemption sheds 5 of 10 and the newcomer gets 5 one round later") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 10, 1);
  h.job("a", "u1", "normal", 1);
  h.round();
  REQUIRE(h.count("a") == 10);
  h.job("b", "u2", "normal", 1);
  h.round();
  // two users: 10 / 2 = 5 each. a sheds 5; b waits for the space
  CHECK(h.with_status("a", share_status::preempt) == 5);
  CHECK(h.count("a") == 5);
  CHECK(h.count("b") == 0);
  CHECK(h.plan("b").reason_text == "Waiting for preemptions.");
  CHECK(h.last.counts.preempted == 5);
  h.round();  // the orchestrator confirmed the exits
  CHECK(h.count("b") == 5);
  CHECK(h.plan("a").shares.size() == 5);
  CHECK(h.no_machine_overbooked());
}

TEST_CASE("preemption takes the least invested processes") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 4, 1);
  h.job("a", "u1", "normal", 1);
  h.round();
  REQUIRE(h.count("a") == 4);
  // give each process an investment: n000 1000, n001 4000, n002 2000, n003 3000 ms
  const std::int64_t inv[] = {1000, 4000, 2000, 3000};
  for (auto& p : h.work[job_id("a")].processes) p.run_ms = inv[p.node.str().back() - '0'];
  h.job("b", "u2", "normal", 1);
  h.round();
  // a keeps 2: the two least invested (n000, n002) are preempted
  CHECK(h.with_status("a", share_status::preempt) == 2);
  for (const auto& sh : h.plan("a").shares) {
    const bool cheap = sh.node.str() == "n000" || sh.node.str() == "n002";
    CHECK((sh.status == share_status::preempt) == cheap);
  }
}

TEST_CASE("squatters are preempted before residents") {
  scheduler_config cfg = one_pool({fair_class("normal")});
  add_subpool(cfg, "sub", {"s000", "s001", "s002"});
  harness h(cfg);
  h.machines("p", 3, 1);
  h.machines("s", 3, 1);
  h.job("a", "u1", "normal", 1);
  h.round();
  REQUIRE(h.count("a") == 6);
  // the squatters have invested far more than the residents
  for (auto& p : h.work[job_id("a")].processes) p.run_ms = p.node.str()[0] == 's' ? 900000 : 10;
  h.job("b", "u2", "normal", 1);
  h.round();
  // 6 / 2 = 3 each: a's three squatters go, its residents stay
  CHECK(h.with_status("a", share_status::preempt) == 3);
  for (const auto& sh : h.plan("a").shares) CHECK((sh.status == share_status::preempt) == (sh.node.str()[0] == 's'));
}

TEST_CASE("fixed-share work is never preempted") {
  // The fixed class has the better priority (5); its job holds the whole cluster.
  harness h2(one_pool({fixed_class("fixed", 5), fair_class("normal")}));
  h2.machines("n", 4, 1);
  h2.job("svc", "u1", "fixed", 1).max_processes = 4;
  h2.round();
  REQUIRE(h2.count("svc") == 4);
  h2.job("f", "u2", "normal", 1);
  h2.round();
  h2.round();
  CHECK(h2.count("svc") == 4);
  CHECK(h2.with_status("svc", share_status::preempt) == 0);
  CHECK(h2.count("f") == 0);
}
