// The end and start estimates (core/start_estimate.hpp) with their arithmetic, and the same estimates as
// explain() and whatif() give them from a scheduler's model (core/job_estimates.hpp).
#include <limits>

#include <catch2/catch.hpp>

#include "core/start_estimate.hpp"
#include "tests/core/scheduler_harness.hpp"

using namespace rmbus::core;
using rmbus::test::fair_class;
using rmbus::test::fixed_class;
using rmbus::test::harness;
using rmbus::test::job_item;
using rmbus::test::one_pool;

namespace {

constexpr std::int64_t now = 1'000'000;

job_progress progress(const std::string& id, std::int64_t total, std::int64_t done, int processes,
                      std::int64_t item_ms, int threads = 1) {
  job_progress p;
  p.id = job_id(id);
  p.items_total = total;
  p.items_done = done;
  p.processes = processes;
  p.item_ms = item_ms;
  p.threads = threads;
  return p;
}

// Two machines of order 8, both full: the pending work waits for what frees.
start_query two_full_machines(int order, int processes) {
  start_query q;
  q.now_ms = now;
  q.order = order;
  q.processes = processes;
  q.machines = {{machine_id("m1"), 8, 0}, {machine_id("m2"), 8, 0}};
  return q;
}

}  // namespace

TEST_CASE("a running job ends after ceil(items left / processes) item times") {
  // 1000 items, 600 done: 400 left; 4 processes of 1 thread; 1.2 s per item.
  // ceil(400 / 4) = 100 rounds x 1200 ms = 120000 ms
  const auto e = estimate_end(progress("17", 1000, 600, 4, 1200), now);
  REQUIRE(e.has_value());
  CHECK(e->items_left == 400);
  CHECK(e->in_ms == 120000);
  CHECK(e->at_ms == now + 120000);
  CHECK(e->basis == "job 17 ends in ~120 s: 400 items left, 4 processes, 1.2 s per item");

  // 401 left: ceil(401 / 4) = 101 rounds x 1200 = 121200 ms (the last item still takes a whole item time)
  CHECK(estimate_end(progress("17", 1000, 599, 4, 1200), now)->in_ms == 121200);
}

TEST_CASE("each thread of a process works an item at once, as in DUCC's rate") {
  // 400 left, 4 processes x 2 threads = 8 at once: ceil(400 / 8) = 50 x 1200 = 60000 ms
  const auto e = estimate_end(progress("17", 1000, 600, 4, 1200, 2), now);
  REQUIRE(e.has_value());
  CHECK(e->in_ms == 60000);
  CHECK(e->basis == "job 17 ends in ~60 s: 400 items left, 4 processes x 2 threads, 1.2 s per item");
}

TEST_CASE("no end estimate without an item count, an item time or a running process") {
  CHECK_FALSE(estimate_end(progress("j", 1000, 0, 4, 0), now).has_value());   // item time unknown
  CHECK_FALSE(estimate_end(progress("j", 0, 0, 4, 1200), now).has_value());   // item count unknown
  CHECK_FALSE(estimate_end(progress("j", 1000, 0, 0, 1200), now).has_value()); // nothing runs its items
  // All done: it ends now (0 rounds), and says so.
  const auto done = estimate_end(progress("j", 1000, 1000, 4, 1200), now);
  REQUIRE(done.has_value());
  CHECK(done->in_ms == 0);
  CHECK(done->basis == "job j ends in ~0 s: 0 items left, 4 processes, 1.2 s per item");
}

TEST_CASE("an absurd item count gives a far end, never a wrapped one") {
  const auto e = estimate_end(progress("j", std::numeric_limits<std::int64_t>::max(), 0, 1,
                                       std::numeric_limits<std::int64_t>::max()), now);
  REQUIRE(e.has_value());
  CHECK(e->at_ms >= now);
  CHECK(e->at_ms == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("seconds_text writes milliseconds as seconds") {
  CHECK(seconds_text(1200) == "1.2 s");
  CHECK(seconds_text(30000) == "30 s");
  CHECK(seconds_text(250) == "0.25 s");
  CHECK(seconds_text(5) == "0.005 s");
  CHECK(seconds_text(0) == "0 s");
}

TEST_CASE("preemptions under way count first, then projected ends in time order") {
  // Order 4, short of 2 processes. m1: a preemption of 4 quanta (job x); m2: job 17's 8 quanta free at its
  // end, 120 s ahead. The job end is listed first: order of the input does not matter.
  auto q = two_full_machines(4, 2);
  q.job_ends.emplace(job_id("17"), *estimate_end(progress("17", 1000, 600, 4, 1200), now));
  q.releases = {{1, 8, release_kind::job_end, job_id("17")}, {0, 4, release_kind::preemption, job_id("x")}};
  const auto s = estimate_start(q);
  REQUIRE(s.has_value());
  // now: m1 has 4 free -> 4 / 4 = 1 process fits: the first process at once
  CHECK(s->first_at_ms == now);
  CHECK(s->first_in_ms == 0);
  // +120 s: m2 has 8 free -> 2 more; 3 >= 2: all of them then
  REQUIRE(s->all_in_ms.has_value());
  CHECK(*s->all_in_ms == 120000);
  CHECK(*s->all_at_ms == now + 120000);
  CHECK(s->processes == 2);
  CHECK(s->free_quanta_now == 0);
  CHECK(s->preemptions == 1);
  CHECK(s->jobs_ending == std::vector<job_id>{job_id("17")});
  CHECK(s->basis ==
        "1 preemption under way (their space frees once the orchestrator confirms them gone); "
        "job 17 ends in ~120 s: 400 items left, 4 processes, 1.2 s per item");
}

TEST_CASE("a process under a reclaim grace frees its space at its deadline") {
  // Order 4, short of 1 process. m1: a process of 4 quanta (job x) preempted at its grace deadline, 30 s
  // ahead; m2: job 17's 8 quanta free at its end, 120 s ahead. The deadline comes first: 4 / 4 = 1 fits at +30 s.
  auto q = two_full_machines(4, 1);
  q.job_ends.emplace(job_id("17"), *estimate_end(progress("17", 1000, 600, 4, 1200), now));
  q.releases = {{1, 8, release_kind::job_end, job_id("17")}, {0, 4, release_kind::reclaim, job_id("x"), now + 30000}};
  const auto s = estimate_start(q);
  REQUIRE(s.has_value());
  CHECK(s->first_in_ms == 30000);
  CHECK(*s->all_in_ms == 30000);
  CHECK(s->reclaims == 1);
  CHECK(s->preemptions == 0);
  CHECK(s->jobs_ending.empty());
  CHECK(s->basis == "1 process preempted at the end of a reclaim grace period");
}

TEST_CASE("preemptions that suffice leave later job ends out of the basis") {
  // Short of 1 process of order 4; the 4 quanta being preempted on m1 are enough at once.
  auto q = two_full_machines(4, 1);
  q.job_ends.emplace(job_id("17"), *estimate_end(progress("17", 1000, 600, 4, 1200), now));
  q.releases = {{1, 8, release_kind::job_end, job_id("17")}, {0, 4, release_kind::preemption, job_id("x")}};
  const auto s = estimate_start(q);
  REQUIRE(s.has_value());
  CHECK(s->first_in_ms == 0);
  CHECK(s->all_in_ms == std::optional<std::int64_t>{0});
  CHECK(s->preemptions == 1);
  CHECK(s->jobs_ending.empty());
  CHECK(s->basis.find("job 17") == std::string::npos);

  // At the same time (job done has no items left: it ends now) the preemption under way still counts first.
  q.job_ends.emplace(job_id("done"), *estimate_end(progress("done", 10, 10, 1, 1000), now));
  q.releases = {{1, 8, release_kind::job_end, job_id("done")}, {0, 4, release_kind::preemption, job_id("x")}};
  const auto tie = estimate_start(q);
  REQUIRE(tie.has_value());
  CHECK(tie->first_in_ms == 0);
  CHECK(tie->preemptions == 1);
  CHECK(tie->jobs_ending.empty());
}

TEST_CASE("the earliest projected end that makes room decides, whatever the order listed") {
  // Job late ends in 200 s, job early in 40 s (100 items / 2 processes = 50 x 800 ms); each holds a machine.
  auto q = two_full_machines(8, 1);
  q.job_ends.emplace(job_id("late"), *estimate_end(progress("late", 200, 0, 1, 1000), now));
  q.job_ends.emplace(job_id("early"), *estimate_end(progress("early", 100, 0, 2, 800), now));
  q.releases = {{0, 8, release_kind::job_end, job_id("late")}, {1, 8, release_kind::job_end, job_id("early")}};
  const auto s = estimate_start(q);
  REQUIRE(s.has_value());
  // early: ceil(100 / 2) = 50 x 800 = 40000 ms; late: 200 x 1000 = 200000 ms
  CHECK(s->first_in_ms == 40000);
  CHECK(s->all_in_ms == std::optional<std::int64_t>{40000});
  CHECK(s->jobs_ending == std::vector<job_id>{job_id("early")});
}

TEST_CASE("space free now counts, and a count never reached is left without a time") {
  // m1 has 4 free (1 process of order 4 now); job 17 frees m2's 8 at +120 s (2 more): 3 fit, 5 wanted.
  auto q = two_full_machines(4, 5);
  q.machines[0].free_quanta = 4;
  q.job_ends.emplace(job_id("17"), *estimate_end(progress("17", 1000, 600, 4, 1200), now));
  q.releases = {{1, 8, release_kind::job_end, job_id("17")}};
  const auto s = estimate_start(q);
  REQUIRE(s.has_value());
  CHECK(s->first_in_ms == 0);
  CHECK_FALSE(s->all_at_ms.has_value());
  CHECK_FALSE(s->all_in_ms.has_value());
  CHECK(s->free_quanta_now == 4);
  // Only what the first process rests on is named: the free space.
  CHECK(s->jobs_ending.empty());
  CHECK(s->basis == "4 quanta free now");
}

TEST_CASE("no start estimate when nothing known ever makes room") {
  auto q = two_full_machines(4, 1);
  CHECK_FALSE(estimate_start(q).has_value());  // full, nothing frees
  q.releases = {{0, 8, release_kind::job_end, job_id("unknown-end")}};
  CHECK_FALSE(estimate_start(q).has_value());  // a job end with no projected end rests on nothing
  q.releases = {{0, 2, release_kind::preemption, job_id("x")}};
  CHECK_FALSE(estimate_start(q).has_value());  // 2 quanta free: a process of order 4 never fits
  q.machines.clear();
  q.releases.clear();
  CHECK_FALSE(estimate_start(q).has_value());  // no machine it could use
  auto bad = two_full_machines(0, 1);
  bad.releases = {{0, 8, release_kind::preemption, job_id("x")}};
  CHECK_FALSE(estimate_start(bad).has_value());  // order 0: nothing to fit
  bad.order = 4;
  bad.releases = {{7, 8, release_kind::preemption, job_id("x")}};
  CHECK_FALSE(estimate_start(bad).has_value());  // a release on no listed machine is ignored
}

TEST_CASE("a reservation waits for a whole machine") {
  // Whole machines of order 8: m1 has 4 free and 4 being preempted, m2 has 6 free and 2 held by job 17.
  start_query q;
  q.now_ms = now;
  q.order = 8;
  q.processes = 1;
  q.whole_machine = true;
  q.machines = {{machine_id("m1"), 8, 4}, {machine_id("m2"), 8, 6}};
  q.job_ends.emplace(job_id("17"), *estimate_end(progress("17", 10, 0, 1, 1000), now));
  q.releases = {{1, 2, release_kind::job_end, job_id("17")}, {0, 4, release_kind::preemption, job_id("x")}};
  const auto s = estimate_start(q);
  REQUIRE(s.has_value());
  // m1: 4 + 4 = 8 = whole at once; 10 quanta free now did not make a whole machine
  CHECK(s->first_in_ms == 0);
  CHECK(s->free_quanta_now == 10);
  CHECK(s->preemptions == 1);
  CHECK(s->jobs_ending.empty());
}

// ---- through the scheduler -----------------------------------------------------------------------

TEST_CASE("explain: a job waiting for preemptions starts at once, the job preempted ends on its numbers") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 2, 4);  // 2 machines of order 4 (1 GB quantum)
  auto& a = h.job("a", "u1", "normal", 1, 1000);
  h.round();
  REQUIRE(h.count("a") == 8);
  a.items_done = 600;
  a.item_ms = 1200;
  h.job("b", "u2", "normal", 4, 1000);
  h.round(false);  // b is counted; 4 of a's processes are being preempted, none gone yet
  REQUIRE(h.plan("b").given == 1);
  REQUIRE(h.with_status("a", share_status::preempt) == 4);

  const auto eb = h.s.explain(job_id("b"));
  REQUIRE(eb.reason == reason_code::waiting_for_preemptions);
  REQUIRE(eb.estimated_start.has_value());
  CHECK(eb.estimated_start->first_at_ms == h.now);
  CHECK(eb.estimated_start->all_at_ms == std::optional<std::int64_t>{h.now});
  CHECK(eb.estimated_start->preemptions == 4);  // 4 processes of order 1 free one machine of order 4
  CHECK(eb.estimated_start->basis.find("4 preemptions under way") == 0);
  CHECK_FALSE(eb.estimated_end.has_value());  // b runs nothing yet
  CHECK(eb.text().find("estimated start: next process in 0 s") != std::string::npos);

  const auto ea = h.s.explain(job_id("a"));
  REQUIRE(ea.estimated_end.has_value());
  // 400 items left on the 4 processes not being preempted: ceil(400 / 4) = 100 x 1200 = 120000 ms
  CHECK(ea.estimated_end->processes == 4);
  CHECK(ea.estimated_end->in_ms == 120000);
  CHECK(ea.estimated_end->at_ms == h.now + 120000);
  CHECK_FALSE(ea.estimated_start.has_value());  // a holds more than it is counted
  CHECK(ea.text().find("estimated end: in 120 s") != std::string::npos);
}

TEST_CASE("explain: work that fair share cannot preempt for waits for the projected end of what holds it") {
  // One machine of order 4 held by a FIXED_SHARE job (never preempted); a fair-share job of order 4 waits.
  harness h(one_pool({fair_class("normal"), fixed_class("fixed")}));
  h.machine("n1", 4);
  auto& f = h.job("f", "u1", "fixed", 1, 400);
  f.max_processes = 4;
  h.round();
  REQUIRE(h.count("f") == 4);
  f.items_done = 0;
  f.item_ms = 1000;
  h.job("b", "u2", "normal", 4, 1000);
  h.round();
  REQUIRE(h.count("b") == 0);
  const auto e = h.s.explain(job_id("b"));
  REQUIRE(e.reason != reason_code::none);
  REQUIRE(e.estimated_start.has_value());
  // f: 400 items / 4 processes = 100 x 1000 ms = 100000 ms; then the whole machine frees: 1 process fits
  CHECK(e.estimated_start->first_in_ms == 100000);
  CHECK(e.estimated_start->first_at_ms == h.now + 100000);
  CHECK(e.estimated_start->preemptions == 0);
  CHECK(e.estimated_start->jobs_ending == std::vector<job_id>{job_id("f")});
  CHECK(e.estimated_start->basis == "job f ends in ~100 s: 400 items left, 4 processes, 1 s per item");

  // Without f's item time nothing supports a start time, nor f's end.
  f.item_ms = 0;
  h.round();
  CHECK_FALSE(h.s.explain(job_id("b")).estimated_start.has_value());
  CHECK_FALSE(h.s.explain(job_id("f")).estimated_end.has_value());
}

TEST_CASE("whatif: the hypothetical job's start rests on the preemptions it would cause") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 6, 1);
  h.job("a", "u1", "normal", 1);
  h.round();
  REQUIRE(h.count("a") == 6);
  auto w = job_item("hypo", "u2", "normal", 1, 100);
  w.state = work_state::waiting;
  const auto r = h.s.whatif(w);
  // two users: 3 each; hypo would wait for the 3 preemptions of a's processes, which free at once
  REQUIRE(r.preempted.size() == 3);
  REQUIRE(r.explanation.estimated_start.has_value());
  CHECK(r.explanation.estimated_start->processes == 3);
  CHECK(r.explanation.estimated_start->preemptions == 3);
  CHECK(r.explanation.estimated_start->all_in_ms == std::optional<std::int64_t>{0});
  CHECK_FALSE(r.explanation.estimated_end.has_value());
}

TEST_CASE("explain: no start estimate for work held back by the allotment or refused, though space is free") {
  scheduler_config cfg = one_pool({fixed_class("fixed")});
  cfg.settings.global_allotment_mb = 4 * 1024;  // 4 quanta per user
  harness h(cfg);
  h.machines("n", 4, 4);  // 16 quanta: plenty free
  h.job("old", "u", "fixed", 1).max_processes = 4;
  h.round();
  REQUIRE(h.count("old") == 4);
  h.job("new", "u", "fixed", 1).max_processes = 2;
  h.job("lost", "u", "no-such-class", 1);
  h.round();
  // u holds 4 of 4 quanta: "new" waits for the allotment, which freed space would not change.
  const auto e = h.s.explain(job_id("new"));
  REQUIRE(e.reason == reason_code::allotment_exceeded);
  CHECK_FALSE(e.estimated_start.has_value());
  const auto lost = h.s.explain(job_id("lost"));
  REQUIRE(lost.reason == reason_code::unknown_class);
  CHECK_FALSE(lost.estimated_start.has_value());
  CHECK_FALSE(lost.estimated_end.has_value());
}

TEST_CASE("whatif: a hypothetical job given processes now gets an end as if they ran from now") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 6, 1);
  h.round();
  auto w = job_item("hypo", "u2", "normal", 1, 100);
  w.item_ms = 2000;
  w.threads = 2;
  w.state = work_state::waiting;
  const auto r = h.s.whatif(w);
  // 6 free machines of one quantum: it would get all 6 now (its 100 items / 2 threads could use 50).
  REQUIRE(r.explanation.placed == 6);
  REQUIRE(r.explanation.estimated_end.has_value());
  const auto& end = *r.explanation.estimated_end;
  // ceil(100 items / (6 processes x 2 threads)) = ceil(8.33) = 9 item times of 2 s = 18 s.
  CHECK(end.in_ms == 18000);
  CHECK(end.processes == 6);
  CHECK(end.threads == 2);
  CHECK(end.items_left == 100);
  CHECK(end.basis.rfind("if its 6 processes started now: job hypo ends in ", 0) == 0);

  // Without an item time there is nothing to rest an end on.
  w.item_ms = 0;
  CHECK_FALSE(h.s.whatif(w).explanation.estimated_end.has_value());
}
