// apply_changes (nodepool_scheduler.hpp): the work map applied as the ids that changed since the last call,
// against apply_work of the whole map. A scheduler that keeps its pool's map between rounds (the pool
// scheduler actor, actors/slice_chain.hpp) applies only what a slice changed; every decision must be the
// same.
#include <catch2/catch.hpp>

#include "tests/core/scheduler_harness.hpp"

using namespace rmbus::test;

namespace {

// Two schedulers fed the same map: one with apply_work, the other with apply_changes naming `touched`.
struct twins {
  explicit twins(scheduler_config c)
      : cfg(std::move(c)), whole("default", cfg, "p"), changes("default", cfg, "p") {}
  void machine(const std::string& name, std::uint64_t gb) {
    whole.update_machine({machine_id(name), "", gb * 1024, false});
    changes.update_machine({machine_id(name), "", gb * 1024, false});
  }
  void round(const work_map& work, const std::vector<job_id>& touched, std::uint64_t cycle = 0) {
    whole.apply_work(work);
    changes.apply_changes(work, touched);
    now += 10'000;
    a = whole.schedule({now, {}, false, cycle});
    b = changes.schedule({now, {}, false, cycle});
    REQUIRE(a == b);
    for (const auto& j : a.jobs) REQUIRE(whole.explain(j.id).text() == changes.explain(j.id).text());
  }
  scheduler_config cfg;
  nodepool_scheduler whole, changes;
  schedule_plan a, b;
  std::int64_t now = 0;
};

}  // namespace

TEST_CASE(
    "a job left untouched is reconciled again while its last reconcile may not hold: a node it runs on "
    "arrives") {
  twins t(one_pool({fair_class("normal")}));
  t.machine("n1", 8);
  work_map work;
  auto w = job_item("j1", "u1", "normal", 2);
  process_report p;
  p.id = share_id("ext-1");
  p.node = machine_id("n9");  // not heard of, and no size given: refused until it comes
  p.state = process_state::running;
  w.processes.push_back(p);
  work[w.id] = w;
  work[job_id("j2")] = job_item("j2", "u2", "normal", 1);
  t.round(work, {job_id("j1"), job_id("j2")});
  t.round(work, {});
  // The node arrives; the map is the same, so the next call names nothing.
  t.machine("n9", 8);
  t.round(work, {});
  bool on_n9 = false;
  for (const auto& j : t.a.jobs)
    for (const auto& s : j.shares) on_n9 = on_n9 || s.node.str() == "n9";
  CHECK(on_n9);  // the recovered process holds its share on n9 in both
  t.round(work, {});
}

TEST_CASE(
    "apply_changes gives the plans of apply_work over arrivals, completions, removals and process changes") {
  twins t(one_pool({fair_class("normal"), fixed_class("fixed")}));
  for (int i = 0; i < 6; ++i) t.machine("n" + std::to_string(i), 8);
  work_map work;
  std::vector<job_id> touched;
  auto add = [&](const std::string& id, const std::string& cls, std::uint64_t gb) {
    work[job_id(id)] = job_item(id, "u" + id.substr(1, 1), cls, gb);
    touched.push_back(job_id(id));
  };
  // The orchestrator: starts new shares, stops preempted ones; what it changes is named.
  auto follow = [&]() {
    for (const auto& jp : t.a.jobs) {
      auto it = work.find(jp.id);
      if (it == work.end()) continue;
      for (const auto& sh : jp.shares) {
        auto& procs = it->second.processes;
        auto pit = std::find_if(procs.begin(), procs.end(), [&](const auto& x) { return x.id == sh.id; });
        if (sh.status == share_status::new_share && pit == procs.end()) {
          process_report p;
          p.id = sh.id;
          p.node = sh.node;
          p.state = process_state::running;
          procs.push_back(p);
          touched.push_back(jp.id);
        } else if ((sh.status == share_status::preempt || sh.status == share_status::evict) &&
                   pit != procs.end()) {
          procs.erase(pit);
          touched.push_back(jp.id);
        }
      }
    }
  };
  auto round = [&]() {
    t.round(work, touched);
    touched.clear();
    follow();
  };
  add("j1", "normal", 2);
  add("j2", "normal", 1);
  round();
  round();
  add("j3", "fixed", 4);
  add("j0", "normal", 3);  // sorts before every other id
  round();
  work[job_id("j1")].state = work_state::completed;
  touched.push_back(job_id("j1"));
  round();
  work.erase(job_id("j2"));
  touched.push_back(job_id("j2"));
  add("j4", "normal", 1);
  round();
  t.changes.machine_down(machine_id("n1"));
  t.whole.machine_down(machine_id("n1"));
  round();
  work.erase(job_id("j1"));  // a completed job leaves the map
  touched.push_back(job_id("j1"));
  add("j5", "fixed", 1);
  round();
  round();
  CHECK(t.a.counts.jobs >= 4);
}

TEST_CASE(
    "an untouched job whose shares changed outside a map is reconciled again: an eviction acknowledged") {
  // j1's shares are granted and never started; its node goes down, the eviction is published, and only
  // when the orchestrator says it acted on that round may the shares go. No map names j1 after the first:
  // apply_changes finds it from the model's log of share changes.
  twins t(one_pool({fair_class("normal")}));
  t.machine("n0", 8);
  t.machine("n1", 8);
  work_map work;
  work[job_id("j1")] = job_item("j1", "u1", "normal", 2, 8);
  t.round(work, {job_id("j1")}, 1);
  int on_n1 = 0;
  for (const auto& s : t.a.find(job_id("j1"))->shares) on_n1 += s.node.str() == "n1" ? 1 : 0;
  REQUIRE(on_n1 > 0);
  t.whole.machine_down(machine_id("n1"));
  t.changes.machine_down(machine_id("n1"));
  t.whole.set_acted_cycle(1);
  t.changes.set_acted_cycle(1);
  t.round(work, {}, 2);  // the eviction published in round 2
  t.round(work, {}, 3);  // not acknowledged yet: the shares wait
  int evicting = 0;
  for (const auto& s : t.b.find(job_id("j1"))->shares) evicting += s.status == share_status::evict ? 1 : 0;
  CHECK(evicting == on_n1);
  t.whole.set_acted_cycle(3);
  t.changes.set_acted_cycle(3);
  t.round(work, {}, 4);  // acknowledged: gone in both
  for (const auto& s : t.b.find(job_id("j1"))->shares) CHECK(s.node.str() != "n1");
}
