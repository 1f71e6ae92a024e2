// job_cap: DUCC's initJobCap / getProjectedCap (shared/ducc-rm.md section 1.5), step by step.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/job_cap.hpp"
#include "tests/core/scheduler_harness.hpp"

using rmbus::core::compute_job_cap;
using rmbus::core::job_cap_input;
using rmbus::core::projected_cap;

namespace {

// The worked example of section 1.5: avg init 60000 ms, epoch 10000, fudge 120000, 4 processes of
// 4 threads, 30000 ms per item, 200 items left.
job_cap_input worked_example() {
  job_cap_input in;
  in.avg_init_ms = 60000;
  in.epoch_ms = 10000;
  in.prediction_fudge_ms = 120000;
  in.current = 4;
  in.threads = 4;
  in.item_ms = 30000;
  in.remaining_items = 200;
  in.initialized = true;
  return in;
}

}  // namespace

TEST_CASE("projected cap: the worked example gives 25") {
  // target = 60000 + 10000 + 120000 = 190000 ms; rate = 4 * 4 / 30000 items/ms
  // projected = round(190000 * 16 / 30000) = round(101.33) = 101 items; future = 200 - 101 = 99
  // cap = ceil(99 / 4) = 25
  CHECK(projected_cap(worked_example()) == 25);
}

TEST_CASE("compute_job_cap on the worked example: prediction lowers the potential, doubling decides") {
  const auto r = compute_job_cap(worked_example());
  // by work = ceil(200 / 4) = 50 = base (no max); projected 25 < 50 -> potential max(25, 4) = 25;
  // initialized with doubling: min(25, 2 * 4) = 8
  CHECK(r.by_work == 50);
  CHECK(r.base_cap == 50);
  CHECK(r.projected_cap == 25);
  CHECK(r.potential_cap == 25);
  CHECK(r.cap == 8);
  CHECK(std::string(r.decided_by) == "doubling");
}

TEST_CASE("projected cap rounds half up as Java's Math.round does") {
  job_cap_input in;
  in.initialized = true;
  in.avg_init_ms = 0;
  in.epoch_ms = 10000;
  in.prediction_fudge_ms = 0;
  in.current = 1;
  in.threads = 1;
  in.item_ms = 4000;
  in.remaining_items = 10;
  // projected = round(10000 * 1 / 4000) = round(2.5) = 3 items; future 10 - 3 = 7 -> ceil(7 / 1) = 7
  CHECK(projected_cap(in) == 7);
}

TEST_CASE("projected cap: no prediction before initialization or without an item time") {
  auto in = worked_example();
  in.initialized = false;
  CHECK(projected_cap(in) == 0);
  in = worked_example();
  in.item_ms = 0;  // DUCC widens init_wait when the time per item is 0
  CHECK(projected_cap(in) == 0);
  const auto r = compute_job_cap(in);
  // no prediction: potential = base = 50; doubling min(50, 8) = 8
  CHECK(r.potential_cap == 50);
  CHECK(r.cap == 8);
}

TEST_CASE("projected cap: nothing left after the projection answers the current count") {
  auto in = worked_example();
  in.remaining_items = 100;  // projected 101 items >= 100 -> future 0 -> ceil(0/4) = 0 -> current 4
  CHECK(projected_cap(in) == 4);
}

TEST_CASE("the ramp: init cap 1 while initializing, then 2, 4, 8, 16, 25 as current follows") {
  job_cap_input in;
  in.remaining_items = 100;
  in.threads = 4;  // c = ceil(100 / 4) = 25
  in.max_processes = 50;
  in.initialization_cap = 1;
  in.expand_by_doubling = true;
  in.use_prediction = false;
  in.initialized = false;
  in.current = 0;
  auto r = compute_job_cap(in);
  CHECK(r.base_cap == 25);
  CHECK(r.cap == 1);
  CHECK(std::string(r.decided_by) == "initialization_cap");
  in.current = 1;  // still initializing: stays at the init cap
  CHECK(compute_job_cap(in).cap == 1);

  in.initialized = true;
  std::vector<std::int64_t> caps;
  for (int step = 0; step < 6; ++step) {
    r = compute_job_cap(in);
    caps.push_back(r.cap);
    in.current = static_cast<int>(r.cap);  // the allocation is granted each cycle
  }
  // 2*1, 2*2, 2*4, 2*8, min(25, 2*16), then 25 (doubling no longer binds)
  CHECK(caps == std::vector<std::int64_t>{2, 4, 8, 16, 25, 25});
  CHECK(std::string(r.decided_by) == "work");
}

TEST_CASE("refused work gets 0, completing work keeps what it has") {
  auto in = worked_example();
  in.refused = true;
  auto r = compute_job_cap(in);
  CHECK(r.cap == 0);
  CHECK(std::string(r.decided_by) == "refused");

  in = worked_example();
  in.completing = true;
  in.current = 7;
  in.remaining_items = 1000;  // would allow 250, but a completing job never grows
  r = compute_job_cap(in);
  CHECK(r.cap == 7);
  CHECK(std::string(r.decided_by) == "completing");
}

TEST_CASE("max processes bounds the base cap") {
  job_cap_input in;
  in.remaining_items = 100;
  in.threads = 1;  // c = 100
  in.max_processes = 10;
  in.initialized = true;
  in.expand_by_doubling = false;
  in.use_prediction = false;
  in.current = 3;
  const auto r = compute_job_cap(in);
  CHECK(r.by_work == 100);
  CHECK(r.base_cap == 10);
  CHECK(r.cap == 10);
  CHECK(std::string(r.decided_by) == "max_processes");
}

TEST_CASE("a winding-down job is never shrunk by its own cap (max with current)") {
  job_cap_input in;
  in.remaining_items = 4;
  in.threads = 1;  // ceil(4/1) = 4, but the job holds 9
  in.current = 9;
  in.initialized = true;
  in.expand_by_doubling = false;
  in.use_prediction = false;
  const auto r = compute_job_cap(in);
  CHECK(r.by_work == 4);
  CHECK(r.base_cap == 9);
  CHECK(r.cap == 9);
  CHECK(std::string(r.decided_by) == "work");
}

TEST_CASE("restart the ramp: a job back at 0 processes after initializing") {
  job_cap_input in;
  in.remaining_items = 100;
  in.threads = 1;
  in.initialized = true;
  in.expand_by_doubling = true;
  in.use_prediction = false;
  in.current = 0;
  in.initialization_cap = 2;
  // min(base 100, max(1, 2)) = 2
  auto r = compute_job_cap(in);
  CHECK(r.cap == 2);
  CHECK(std::string(r.decided_by) == "ramp_restart");
  in.initialization_cap = 0;  // min(100, max(1, 0)) = 1
  CHECK(compute_job_cap(in).cap == 1);
  in.initialization_cap = 5;
  in.remaining_items = 3;  // min(base 3, max(1, 5)) = 3
  CHECK(compute_job_cap(in).cap == 3);
}

TEST_CASE("prediction applies only when enabled and the projection is below the base cap") {
  auto in = worked_example();
  in.expand_by_doubling = false;
  in.max_processes = 10;  // base 10 < projected 25: prediction does not apply
  auto r = compute_job_cap(in);
  CHECK(r.projected_cap == 25);
  CHECK(r.potential_cap == 10);
  CHECK(r.cap == 10);
  CHECK(std::string(r.decided_by) == "max_processes");

  in = worked_example();
  in.expand_by_doubling = false;
  in.use_prediction = false;  // projected 25 < base 50, but the class does not predict
  r = compute_job_cap(in);
  CHECK(r.potential_cap == 50);
  CHECK(r.cap == 50);
  CHECK(std::string(r.decided_by) == "work");

  in.use_prediction = true;
  r = compute_job_cap(in);
  CHECK(r.cap == 25);
  CHECK(std::string(r.decided_by) == "prediction");
}

TEST_CASE("prediction never cuts below what the job holds") {
  job_cap_input in;
  in.initialized = true;
  in.expand_by_doubling = true;
  in.avg_init_ms = 0;
  in.epoch_ms = 10000;
  in.prediction_fudge_ms = 0;
  in.current = 30;
  in.threads = 1;
  in.item_ms = 1000;
  in.remaining_items = 310;
  // projected = round(10000 * 30 / 1000) = 300 items; future 10 -> projected cap 10
  // base = max(310, 30) = 310; 10 < 310 -> potential = max(10, 30) = 30; doubling 60 > 30 -> 30
  const auto r = compute_job_cap(in);
  CHECK(r.projected_cap == 10);
  CHECK(r.potential_cap == 30);
  CHECK(r.cap == 30);
  CHECK(std::string(r.decided_by) == "prediction");
}

TEST_CASE("initialization cap: bigger than the potential does not raise it: 0 means none") {
  job_cap_input in;
  in.remaining_items = 3;
  in.threads = 1;
  in.initialized = false;
  in.initialization_cap = 10;
  auto r = compute_job_cap(in);
  CHECK(r.cap == 3);  // min(3, 10)
  CHECK(std::string(r.decided_by) == "work");
  in.remaining_items = 40;
  in.initialization_cap = 0;  // no init cap: the potential
  r = compute_job_cap(in);
  CHECK(r.cap == 40);
}

TEST_CASE("threads below 1 count as 1: no work and no processes gives 0") {
  job_cap_input in;
  in.remaining_items = 5;
  in.threads = 0;
  in.initialization_cap = 0;
  CHECK(compute_job_cap(in).by_work == 5);
  in.remaining_items = 0;
  CHECK(compute_job_cap(in).cap == 0);
}

TEST_CASE("initialization cap 0 through a whole round: an uninitialized job gets its full fair share, not 1") {
  // DUCC's RM reads ducc.rm.initialization.cap = 0 (and a class's initialization-cap = 0) as "no
  // initialization cap" (RmJob.initJobCap: the cap applies only when it is > 0).
  // 10 machines of one quantum, two users with one order-1 job each, 100 items of 1 thread: each could use
  // 100 processes. Fair share: 10 / 2 users = 5 each.
  for (int init_cap : {0, 1}) {
    CAPTURE(init_cap);
    auto c = rmbus::test::fair_class("normal");
    c.initialization_cap = init_cap;
    rmbus::test::harness h(rmbus::test::one_pool({c}));
    h.machines("n", 10, 1);
    h.job("a", "ua", "normal", 1, 100).state = rmbus::core::work_state::waiting;
    h.job("b", "ub", "normal", 1, 100).state = rmbus::core::work_state::waiting;
    h.initialize = false;  // no process ever finishes initializing
    h.round();
    h.round();
    // cap 0: no initialization cap, min(100, fair share 5) = 5; cap 1: min(100, 1) = 1 until one initializes.
    const int expected = init_cap == 0 ? 5 : 1;
    CHECK(h.count("a") == expected);
    CHECK(h.count("b") == expected);
    CHECK(h.plan("a").given == expected);  // How Much counted it so, not only the placement
  }
}

TEST_CASE("probe_first: one process until probed, whatever the initialization cap or doubling allow") {
  job_cap_input in;
  in.remaining_items = 100;
  in.threads = 4;  // c = ceil(100 / 4) = 25
  in.initialization_cap = 4;
  in.expand_by_doubling = true;
  in.use_prediction = false;
  in.probe_first = true;
  // initializing: the init cap would allow 4; the probe allows 1
  auto r = compute_job_cap(in);
  CHECK(r.cap == 1);
  CHECK(std::string(r.decided_by) == "probe_first");
  // initialized, one process, no work item done: doubling would give 2 * 1 = 2; still 1
  in.initialized = true;
  in.current = 1;
  r = compute_job_cap(in);
  CHECK(r.cap == 1);
  CHECK(std::string(r.decided_by) == "probe_first");
  // probed: doubling decides again, 2 * 1 = 2
  in.probed = true;
  r = compute_job_cap(in);
  CHECK(r.cap == 2);
  CHECK(std::string(r.decided_by) == "doubling");
}

TEST_CASE("probe_first: a job with no work left stays at 0") {
  job_cap_input in;
  in.remaining_items = 0;
  in.probe_first = true;
  // by work 0, base 0: the probe never raises a cap
  CHECK(compute_job_cap(in).cap == 0);
}

// How Much keeps a cap whose inputs did not change (job_rec::cap_current); each change of an input must
// be seen. Here a process of the job that the map lists, after its cap was computed, on a node nobody has
// heard yet: the job is not refused (a node not heard is kept unheard, its work counted) and its cap, never
// below the processes it has, follows to six.
TEST_CASE("a cap kept between rounds follows the job: more work, then a process recovered on a node not heard") {
  using namespace rmbus::test;
  harness h(one_pool({fair_class("normal")}));
  h.machines("m", 4, 8);
  h.job("a", "alice", "normal", 1, 2);  // two work items: two processes
  h.round();
  CHECK(h.s.explain(job_id("a")).cap.cap == 2);
  CHECK(h.s.explain(job_id("a")).demand == 2);
  h.work[job_id("a")].items_total = 5;  // a changed work item: the cap is computed again
  h.round();
  CHECK(h.s.explain(job_id("a")).cap.cap == 5);
  h.round();  // every process started and confirmed: nothing about the job's shares changes after this
  REQUIRE(h.round().counts.given == 0);
  process_report ghost;
  ghost.id = share_id("elsewhere.1");
  ghost.node = machine_id("ghost");
  ghost.state = process_state::running;
  h.work[job_id("a")].processes.push_back(ghost);
  h.round();
  const auto e = h.s.explain(job_id("a"));
  CHECK(std::string(e.cap.decided_by) == "work");
  CHECK(e.cap.cap == 6);  // a cap kept from the round before would still say 5
}
