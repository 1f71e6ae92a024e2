// The simulated orchestrator on its own: share -> process lifecycle (starting, initializing, running), work
// items at threads / item_ms per process, completion and leaving the map, preempted and evicted processes
// ending after their delays, refusals, services and reservations, node deaths, and what the work map says.

#include <catch2/catch.hpp>

#include "tools/sim/orchestrator_model.hpp"

using namespace rmbus::sim;
namespace msg = rmbus::messages;

namespace {

constexpr std::int64_t epoch = 1'700'000'000'000;

job_spec job(std::string id, std::uint64_t items, std::uint64_t threads, std::int64_t item_ms,
             std::int64_t init_ms, std::int64_t at_ms = 0) {
  job_spec j;
  j.id = std::move(id);
  j.user = "alice";
  j.class_name = "normal";
  j.memory_mb = 4096;
  j.items = items;
  j.threads = threads;
  j.item_ms = item_ms;
  j.init_ms = init_ms;
  j.at_ms = at_ms;
  return j;
}

orchestrator_spec timing(std::int64_t start_ms, std::int64_t preempt_exit_ms = 1000,
                         std::int64_t evict_exit_ms = 0) {
  orchestrator_spec t;
  t.start_ms = start_ms;
  t.preempt_exit_ms = preempt_exit_ms;
  t.evict_exit_ms = evict_exit_ms;
  return t;
}

struct share_order {
  std::string id, node;
  msg::share_status status;
};

msg::rm_state state(const std::string& job_id, std::vector<share_order> shares,
                    msg::job_status status = msg::job_status::scheduled) {
  msg::rm_state s;
  s.cycle = 1;
  msg::job_schedule j;
  j.id = job_id;
  j.status = status;
  j.memory_mb = 4096;
  for (auto& o : shares) j.shares.push_back({o.id, o.node, 4, o.status, std::nullopt});
  s.jobs.push_back(std::move(j));
  return s;
}

const msg::work_item* item(const msg::workmap& wm, const std::string& id) {
  for (const auto& w : wm.work)
    if (w.id == id) return &w;
  return nullptr;
}

const msg::work_process* process(const msg::workmap& wm, const std::string& job_id,
                                 const std::string& share) {
  if (const auto* w = item(wm, job_id))
    for (const auto& p : w->processes)
      if (p.id == share) return &p;
  return nullptr;
}

}  // namespace

TEST_CASE(
    "orchestrator: a new share becomes a process that starts, initializes, runs and completes the job") {
  // 8 items, 2 threads, 1000 ms per item, 3000 ms initialization, 500 ms starting.
  orchestrator_model m{{job("j", 8, 2, 1000, 3000)}, timing(500), epoch, {{"n1", 32768}}};
  auto wm = m.workmap(0);
  REQUIRE(item(wm, "j") != nullptr);
  CHECK(item(wm, "j")->state == msg::work_state::waiting);
  CHECK(item(wm, "j")->processes.empty());
  CHECK(item(wm, "j")->submitted_ms == static_cast<std::uint64_t>(epoch));
  CHECK(item(wm, "j")->items_total == 8);
  CHECK(item(wm, "j")->threads == 2);

  m.on_state(state("j", {{"s1", "n1", msg::share_status::new_}}), 100);
  wm = m.workmap(100);
  const auto* p = process(wm, "j", "s1");
  REQUIRE(p != nullptr);
  CHECK(p->node == "n1");
  CHECK(p->node_memory_mb == 32768u);
  CHECK(p->state == msg::process_state::starting);
  CHECK(m.job("j")->first_process_ms == 100);

  // Starting until 100 + 500 = 600, then initializing until 600 + 3000 = 3600.
  CHECK(process(m.workmap(599), "j", "s1")->state == msg::process_state::starting);
  wm = m.workmap(600);
  CHECK(process(wm, "j", "s1")->state == msg::process_state::initializing);
  CHECK(process(wm, "j", "s1")->init_ms == 0);
  wm = m.workmap(2600);
  CHECK(process(wm, "j", "s1")->init_ms == 2000);  // 2600 - 600
  CHECK(item(wm, "j")->state == msg::work_state::waiting);
  wm = m.workmap(3600);
  CHECK(process(wm, "j", "s1")->state == msg::process_state::running);
  CHECK(process(wm, "j", "s1")->init_ms == 3000);
  CHECK(item(wm, "j")->state == msg::work_state::running);

  // Running from 3600: 2 items per 1000 ms. Before the first batch ends nothing is done and item_ms is still
  // unknown (0); the investment is 2 items in flight x 999 ms.
  wm = m.workmap(4599);
  CHECK(item(wm, "j")->items_done == 0);
  CHECK(item(wm, "j")->item_ms == 0);
  CHECK(process(wm, "j", "s1")->run_ms == 2 * 999);
  wm = m.workmap(4600);
  CHECK(item(wm, "j")->items_done == 2);
  CHECK(item(wm, "j")->item_ms == 1000);
  // 6600: 6 done, the last 2 in flight: nothing left to hand out, the job is completing.
  wm = m.workmap(6600);
  CHECK(item(wm, "j")->items_done == 6);
  CHECK(item(wm, "j")->state == msg::work_state::completing);
  // 7600: all 8 done: published completed once, its process ended ...
  wm = m.workmap(7600);
  CHECK(item(wm, "j")->items_done == 8);
  CHECK(item(wm, "j")->state == msg::work_state::completed);
  CHECK(process(wm, "j", "s1")->state == msg::process_state::ended);
  CHECK(m.job("j")->completed_ms == 7600);
  CHECK_FALSE(m.finished());
  // ... and gone from the next map.
  CHECK(item(m.workmap(7700), "j") == nullptr);
  CHECK(m.finished());
}

TEST_CASE("orchestrator: completion is computed at the exact time, whatever the call granularity") {
  orchestrator_model m{{job("j", 8, 2, 1000, 3000)}, timing(500), epoch};
  m.on_state(state("j", {{"s1", "n1", msg::share_status::new_}}), 100);
  // One jump far past the end: same completion time as stepping through (see the test above).
  m.advance(100000);
  CHECK(m.job("j")->completed_ms == 7600);
  CHECK(m.job("j")->items_done == 8);
}

TEST_CASE("orchestrator: items progress at threads / item_ms per running process") {
  // No start or init time: processes run as soon as they exist. 4 threads, 500 ms per item.
  orchestrator_model m{{job("j", 1000, 4, 500, 0)}, timing(0), epoch};
  m.on_state(state("j", {{"a", "n1", msg::share_status::new_}}), 0);
  m.on_state(state("j", {{"a", "n1", msg::share_status::running}, {"b", "n2", msg::share_status::new_}}),
             250);
  // By 1999: a finished batches at 500, 1000, 1500 (12 items); b at 750, 1250, 1750 (12 items).
  m.advance(1999);
  CHECK(m.job("j")->items_done == 24);
  // At 2000 a finishes its fourth batch: 28.
  m.advance(2000);
  CHECK(m.job("j")->items_done == 28);
  // Rate: 2 processes x 4 threads / 500 ms = 16 items per second; from 2000 to 12000, 160 more.
  m.advance(12000);
  CHECK(m.job("j")->items_done == 188);
  CHECK(m.job("j")->running_processes == 2);
}

TEST_CASE("orchestrator: a preempted process stops at once and ends after the exit delay") {
  // 1 thread, 100 ms per item; both processes run from time 0.
  orchestrator_model m{{job("j", 1000, 1, 100, 0)}, timing(0, 1000), epoch};
  m.on_state(state("j", {{"p1", "n1", msg::share_status::new_}, {"p2", "n2", msg::share_status::new_}}), 0);
  // At 250 each has finished 2 items (at 100 and 200) and holds one since 200: 4 done.
  m.on_state(state("j", {{"p1", "n1", msg::share_status::running}, {"p2", "n2", msg::share_status::preempt}}),
             250);
  CHECK(m.job("j")->items_done == 4);
  CHECK(m.job("j")->preempted == 1);
  CHECK(m.job("j")->processes == 1);  // p2 is stopping
  // Until 250 + 1000 p2 stays listed as it was (running); its lost item went back to the queue.
  auto wm = m.workmap(1249);
  REQUIRE(process(wm, "j", "p2") != nullptr);
  CHECK(process(wm, "j", "p2")->state == msg::process_state::running);
  CHECK(process(wm, "j", "p2")->run_ms == 0);  // nothing in flight any more
  // p1 alone from 250: items at 300, 400, ..., 1200 = 10 more: 14.
  CHECK(item(wm, "j")->items_done == 14);
  wm = m.workmap(1250);
  CHECK(process(wm, "j", "p2")->state == msg::process_state::ended);
  wm = m.workmap(1300);
  CHECK(process(wm, "j", "p2") == nullptr);
  CHECK(process(wm, "j", "p1") != nullptr);
  // Preempt repeated in later schedules (the RM lists it until the process is gone) counts once.
  m.on_state(state("j", {{"p1", "n1", msg::share_status::running}, {"p2", "n2", msg::share_status::preempt}}),
             1300);
  CHECK(m.job("j")->preempted == 1);
}

TEST_CASE("orchestrator: an evicted process ends after the evict delay (0: at once)") {
  orchestrator_model m{{job("j", 1000, 1, 100, 0)}, timing(0, 1000, 0), epoch};
  m.on_state(state("j", {{"p1", "n1", msg::share_status::new_}}), 0);
  m.on_state(state("j", {{"p1", "n1", msg::share_status::evict}}), 150);
  CHECK(m.job("j")->evicted == 1);
  CHECK(m.job("j")->items_done == 1);  // the item finished at 100 stays done; the one in flight is lost
  auto wm = m.workmap(150);
  CHECK(process(wm, "j", "p1")->state == msg::process_state::ended);
  CHECK(process(m.workmap(200), "j", "p1") == nullptr);
  CHECK(m.job("j")->items_done == 1);  // nothing runs any more
  // The job keeps its "running" state after losing every process (DUCC does the same).
  CHECK(item(m.workmap(300), "j")->state == msg::work_state::running);

  orchestrator_model slow{{job("k", 1000, 1, 100, 0)}, timing(0, 1000, 400), epoch};
  slow.on_state(state("k", {{"q", "n1", msg::share_status::new_}}), 0);
  slow.on_state(state("k", {{"q", "n1", msg::share_status::evict}}), 100);
  CHECK(process(slow.workmap(499), "k", "q")->state == msg::process_state::running);
  CHECK(process(slow.workmap(500), "k", "q")->state == msg::process_state::ended);
}

TEST_CASE("orchestrator: a process preempted while initializing never runs") {
  orchestrator_model m{{job("j", 10, 1, 100, 2000)}, timing(0, 500), epoch};
  m.on_state(state("j", {{"p", "n1", msg::share_status::new_}}), 0);
  m.on_state(state("j", {{"p", "n1", msg::share_status::preempt}}), 1000);
  auto wm = m.workmap(1400);
  CHECK(process(wm, "j", "p")->state == msg::process_state::initializing);
  CHECK(process(wm, "j", "p")->init_ms == 1000);  // frozen when it stopped
  CHECK(item(wm, "j")->state == msg::work_state::waiting);
  CHECK(process(m.workmap(1500), "j", "p")->state == msg::process_state::ended);
  CHECK(m.job("j")->items_done == 0);
}

TEST_CASE("orchestrator: shares are started once, and not for work with nothing left to hand out") {
  orchestrator_model m{{job("j", 2, 2, 1000, 0)}, timing(0), epoch};
  m.on_state(state("j", {{"p1", "n1", msg::share_status::new_}}), 0);
  // The same "new" share again (the RM repeats it until the map shows it): still one process.
  m.on_state(state("j", {{"p1", "n1", msg::share_status::new_}}), 10);
  CHECK(item(m.workmap(10), "j")->processes.size() == 1);
  // Both items are in flight (completing): a further share would idle, so it is not started.
  CHECK(item(m.workmap(20), "j")->state == msg::work_state::completing);
  m.on_state(state("j", {{"p1", "n1", msg::share_status::running}, {"p2", "n2", msg::share_status::new_}}),
             20);
  CHECK(item(m.workmap(30), "j")->processes.size() == 1);
}

TEST_CASE("orchestrator: refused work is withdrawn") {
  orchestrator_model m{{job("j", 10, 1, 100, 0)}, timing(0), epoch};
  m.workmap(0);
  m.on_state(state("j", {}, msg::job_status::refused), 50);
  auto wm = m.workmap(50);
  CHECK(item(wm, "j")->state == msg::work_state::completed);
  CHECK(m.job("j")->refused);
  CHECK(item(m.workmap(100), "j") == nullptr);
  CHECK(m.finished());
}

TEST_CASE("orchestrator: work arrives at its time: unknown jobs and shares are ignored") {
  orchestrator_model m{{job("early", 10, 1, 100, 0, 0), job("late", 10, 1, 100, 0, 5000)}, timing(0), epoch};
  auto wm = m.workmap(4999);
  CHECK(item(wm, "early") != nullptr);
  CHECK(item(wm, "late") == nullptr);
  // A share for work that has not arrived yet, or that we never had, changes nothing.
  m.on_state(state("late", {{"x", "n1", msg::share_status::new_}}), 4999);
  m.on_state(state("stranger", {{"y", "n1", msg::share_status::new_}}), 4999);
  CHECK_FALSE(m.job("late")->first_process_ms.has_value());
  wm = m.workmap(5000);
  REQUIRE(item(wm, "late") != nullptr);
  CHECK(item(wm, "late")->submitted_ms == static_cast<std::uint64_t>(epoch + 5000));
  CHECK(item(wm, "late")->processes.empty());
  // Time never runs backwards: an earlier time is taken as the latest seen.
  m.advance(100);
  CHECK(m.now() == 5000);
}

TEST_CASE("orchestrator: demand is what the remaining work could use, capped by max_processes") {
  auto j = job("j", 100, 4, 1000, 0);
  orchestrator_model m{{j}, timing(0), epoch};
  m.advance(0);
  CHECK(m.job("j")->demand == 25);  // ceil(100 / 4)
  j.max_processes = 10;
  orchestrator_model capped{{j}, timing(0), epoch};
  capped.advance(0);
  CHECK(capped.job("j")->demand == 10);
  orchestrator_model before{{job("k", 100, 4, 1000, 0, 500)}, timing(0), epoch};
  before.advance(0);
  CHECK(before.job("k")->demand == 0);  // not arrived yet
}

TEST_CASE("orchestrator: services and reservations hold their processes until their end time") {
  job_spec svc;
  svc.id = "svc";
  svc.user = "bob";
  svc.class_name = "fixed";
  svc.kind = msg::work_kind::service;
  svc.memory_mb = 8192;
  svc.init_ms = 1000;
  svc.end_ms = 10000;
  job_spec res = svc;
  res.id = "res";
  res.kind = msg::work_kind::reservation;
  res.class_name = "reserve";
  res.init_ms = 0;
  res.end_ms.reset();  // for ever
  orchestrator_model m{{svc, res}, timing(0), epoch};
  m.on_state(state("svc", {{"s", "n1", msg::share_status::new_}}), 0);
  m.on_state(state("res", {{"r", "n2", msg::share_status::new_}}), 0);
  auto wm = m.workmap(0);
  CHECK(process(wm, "res", "r")->state == msg::process_state::running);  // nothing to initialize
  CHECK(item(wm, "res")->state == msg::work_state::running);
  CHECK(process(wm, "svc", "s")->state == msg::process_state::initializing);
  CHECK(item(wm, "svc")->items_total == 0);
  wm = m.workmap(1000);
  CHECK(item(wm, "svc")->state == msg::work_state::running);
  CHECK(m.job("svc")->demand == 1);
  wm = m.workmap(10000);
  CHECK(item(wm, "svc")->state == msg::work_state::completed);
  CHECK(process(wm, "svc", "s")->state == msg::process_state::ended);
  CHECK(m.job("svc")->completed_ms == 10000);
  wm = m.workmap(20000);
  CHECK(item(wm, "svc") == nullptr);
  CHECK(item(wm, "res") != nullptr);  // no end time: it stays
  CHECK_FALSE(m.finished());
}

TEST_CASE("orchestrator: a dead node stops its processes: they end when it returns or when evicted") {
  orchestrator_model m{{job("j", 1000, 1, 100, 0)}, timing(0, 1000, 300), epoch};
  m.on_state(state("j", {{"p1", "n1", msg::share_status::new_}, {"p2", "n2", msg::share_status::new_}}), 0);
  m.node_down("n1", 150);  // p1 finished 1 item (at 100), the one in flight dies with it
  m.node_down("n2", 150);
  auto wm = m.workmap(1000);
  // The orchestrator does not know yet: both still listed as running, but nothing progresses.
  CHECK(process(wm, "j", "p1")->state == msg::process_state::running);
  CHECK(item(wm, "j")->items_done == 2);
  CHECK(m.job("j")->processes == 0);
  // n1's agent comes back and reports its processes gone: p1 ends at once.
  m.node_up("n1", 1000);
  CHECK(process(m.workmap(1000), "j", "p1")->state == msg::process_state::ended);
  // The RM evicts p2 (its node stayed down): it ends after the evict delay of 300 ms.
  m.on_state(state("j", {{"p2", "n2", msg::share_status::evict}}), 1100);
  CHECK(process(m.workmap(1399), "j", "p2")->state == msg::process_state::running);
  CHECK(process(m.workmap(1400), "j", "p2")->state == msg::process_state::ended);
  CHECK(item(m.workmap(1500), "j")->processes.empty());
  CHECK(m.job("j")->evicted == 1);
}

TEST_CASE("orchestrator: items lost by a preempted process are done by another") {
  // 3 items, 2 threads per process: p1 takes 2 items, p2 the last one. p2 is preempted at 500: its item
  // goes back to the queue, and p1 (busy until 1000) takes it when its batch ends. Were lost items not
  // returned, the job could never complete.
  orchestrator_model m{{job("j", 3, 2, 1000, 0)}, timing(0, 1000), epoch};
  m.on_state(state("j", {{"p1", "n1", msg::share_status::new_}, {"p2", "n2", msg::share_status::new_}}), 0);
  m.on_state(state("j", {{"p1", "n1", msg::share_status::running}, {"p2", "n2", msg::share_status::preempt}}),
             500);
  // p1 finishes its 2 at 1000 and takes the returned one; done at 2000.
  m.advance(10000);
  CHECK(m.job("j")->completed_ms == 2000);
}

TEST_CASE("orchestrator: a big job is replayed exactly and quickly") {
  // 2000 processes running from time 0, 1 thread, 1 s per item: 2000 items per second, so 1,000,000 items
  // take exactly 500 s. One advance over the whole run replays a million batches (a min-heap of events keeps
  // that to about a million heap steps; scanning every process per event would be two billion).
  orchestrator_model m{{job("big", 1000000, 1, 1000, 0)}, timing(0), epoch};
  msg::rm_state s;
  msg::job_schedule js;
  js.id = "big";
  js.status = msg::job_status::scheduled;
  for (int i = 0; i < 2000; ++i)
    js.shares.push_back({"s" + std::to_string(i), "n" + std::to_string(i % 50), 4, msg::share_status::new_, std::nullopt});
  s.jobs.push_back(js);
  m.on_state(s, 0);
  m.advance(499999);
  CHECK(m.job("big")->items_done == 998000);  // 499 full seconds
  m.advance(600000);
  CHECK(m.job("big")->completed_ms == 500000);
}

TEST_CASE("orchestrator: a share on a node that is not the scenario's fails to launch") {
  // The scenario has n1 only; the RM still remembers n9 from an earlier run and places a share there.
  orchestrator_model m{{job("j", 100, 1, 100, 0)}, timing(0), epoch, {{"n1", 32768}}};
  m.on_state(state("j", {{"ok", "n1", msg::share_status::new_}, {"ghost", "n9", msg::share_status::new_}}),
             0);
  auto wm = m.workmap(0);
  CHECK(process(wm, "j", "ok")->state == msg::process_state::running);
  CHECK(process(wm, "j", "ghost")->state == msg::process_state::ended);  // published ended once ...
  CHECK(process(m.workmap(10), "j", "ghost") == nullptr);                // ... then gone
  CHECK(m.job("j")->launch_failures == 1);
  CHECK(m.job("j")->processes == 1);
  // The RM repeating the share "new" does not start it again.
  m.on_state(state("j", {{"ok", "n1", msg::share_status::running}, {"ghost", "n9", msg::share_status::new_}}),
             20);
  CHECK(m.job("j")->launch_failures == 1);
}

// ---- Draining on a reclaim deadline (rmbus-sim --drain-on-reclaim). The RM lists a running share chosen for
// preemption under a class's reclaim grace with reclaim_at_ms; with the option on, the orchestrator drains
// it.

namespace {

constexpr std::uint64_t deadline =
    epoch + 60'000;  // its value is not read: the key's presence starts a drain

// `s` with reclaim_at_ms on share `share` (which must be listed running).
msg::rm_state with_deadline(msg::rm_state s, const std::string& share) {
  for (auto& j : s.jobs)
    for (auto& sh : j.shares)
      if (sh.id == share) sh.reclaim_at_ms = deadline;
  return s;
}

// 20 items, 2 threads, 1000 ms per item, nothing to start or initialize: p1 and p2 run from 0. At 1500 each
// has finished one batch (at 1000: 4 done) and holds 2 items since 1000; p2 then gets a deadline.
msg::rm_state both_running() {
  return state("j", {{"p1", "n1", msg::share_status::running}, {"p2", "n2", msg::share_status::running}});
}

}  // namespace

TEST_CASE(
    "orchestrator: with drain on reclaim, a process given a deadline ends after its items in flight and its "
    "remaining work is not lost") {
  orchestrator_model m{{job("j", 20, 2, 1000, 0)}, timing(0), epoch, {}, true};
  m.on_state(state("j", {{"p1", "n1", msg::share_status::new_}, {"p2", "n2", msg::share_status::new_}}), 0);
  m.on_state(with_deadline(both_running(), "p2"), 1500);
  CHECK(m.job("j")->items_done == 4);
  CHECK(m.job("j")->processes == 2);  // draining is still running: it holds its 2 items until 2000
  auto wm = m.workmap(1999);
  CHECK(process(wm, "j", "p2")->state == msg::process_state::running);
  CHECK(process(wm, "j", "p2")->run_ms == 2 * 999);  // 2 items in flight since 1000
  // At 2000 both batches end: 4 + 2 (p1) + 2 (p2) = 8 done, none lost. p2 takes no new batch and ends then;
  // p1 takes the next 2 (12 left: 2 in flight, 10 queued).
  wm = m.workmap(2000);
  CHECK(item(wm, "j")->items_done == 8);
  CHECK(process(wm, "j", "p2")->state == msg::process_state::ended);
  CHECK(process(wm, "j", "p2")->run_ms == 0);
  CHECK(process(wm, "j", "p1")->state == msg::process_state::running);
  CHECK(m.job("j")->drained == 1);
  CHECK(m.job("j")->preempted == 0);
  CHECK(m.job("j")->processes == 1);
  CHECK(process(m.workmap(2100), "j", "p2") == nullptr);  // published ended once, then left out
  // The 12 items p2 did not take are still the job's: p1 alone does 2 per 1000 ms, 12 / 2 = 6 batches after
  // 2000, so the job completes at 2000 + 6 x 1000 = 8000 with all 20 done.
  m.advance(7999);
  CHECK(m.job("j")->items_done == 18);
  m.advance(8000);
  CHECK(m.job("j")->items_done == 20);
  CHECK(m.job("j")->completed_ms == 8000);
}

TEST_CASE("orchestrator: without drain on reclaim, a deadline changes nothing") {
  orchestrator_model m{{job("j", 20, 2, 1000, 0)}, timing(0), epoch, {}};
  m.on_state(state("j", {{"p1", "n1", msg::share_status::new_}, {"p2", "n2", msg::share_status::new_}}), 0);
  m.on_state(with_deadline(both_running(), "p2"), 1500);
  auto wm = m.workmap(2100);
  REQUIRE(process(wm, "j", "p2") != nullptr);
  CHECK(process(wm, "j", "p2")->state == msg::process_state::running);
  CHECK(m.job("j")->drained == 0);
  CHECK(m.job("j")->processes == 2);
  // Both keep working: 2 processes x 2 items per 1000 ms, batches at 1000 .. 5000 = 5 x 4 = 20 items.
  m.advance(5000);
  CHECK(m.job("j")->completed_ms == 5000);
}

TEST_CASE("orchestrator: a drain is called off when the RM drops the deadline before the batch ends") {
  orchestrator_model m{{job("j", 20, 2, 1000, 0)}, timing(0), epoch, {}, true};
  m.on_state(state("j", {{"p1", "n1", msg::share_status::new_}, {"p2", "n2", msg::share_status::new_}}), 0);
  m.on_state(with_deadline(both_running(), "p2"), 1500);
  m.on_state(both_running(), 1800);  // the need went away: no key any more
  auto wm = m.workmap(2100);
  CHECK(process(wm, "j", "p2")->state == msg::process_state::running);
  CHECK(process(wm, "j", "p2")->run_ms == 2 * 100);  // it took its next batch at 2000
  CHECK(m.job("j")->drained == 0);
  m.advance(5000);
  CHECK(m.job("j")->completed_ms == 5000);  // as if there had been no deadline (previous test)
}

TEST_CASE(
    "orchestrator: a draining process the RM preempts first is preempted, its batch back in the queue") {
  orchestrator_model m{{job("j", 20, 2, 1000, 0)}, timing(0, 1000), epoch, {}, true};
  m.on_state(state("j", {{"p1", "n1", msg::share_status::new_}, {"p2", "n2", msg::share_status::new_}}), 0);
  m.on_state(with_deadline(both_running(), "p2"), 1500);
  m.on_state(state("j", {{"p1", "n1", msg::share_status::running}, {"p2", "n2", msg::share_status::preempt}}),
             1800);
  CHECK(m.job("j")->preempted == 1);
  CHECK(m.job("j")->drained == 0);
  // At 2000 only p1's batch counts: 4 + 2 = 6; p2's 2 items went back to the queue at 1800.
  m.advance(2000);
  CHECK(m.job("j")->items_done == 6);
  CHECK(process(m.workmap(2800), "j", "p2")->state == msg::process_state::ended);  // 1800 + 1000
  CHECK(m.job("j")->drained == 0);
}

TEST_CASE(
    "orchestrator: with drain on reclaim, a process holding no items ends at once and services are left "
    "alone") {
  // Initializing until 0 + 3000: nothing in flight, so nothing to finish.
  orchestrator_model m{{job("j", 20, 2, 1000, 3000)}, timing(0), epoch, {}, true};
  m.on_state(state("j", {{"p1", "n1", msg::share_status::new_}}), 0);
  m.on_state(with_deadline(state("j", {{"p1", "n1", msg::share_status::running}}), "p1"), 1000);
  auto wm = m.workmap(1000);
  CHECK(process(wm, "j", "p1")->state == msg::process_state::ended);
  CHECK(process(wm, "j", "p1")->init_ms == 1000);  // frozen when it ended
  CHECK(m.job("j")->drained == 1);
  CHECK(m.job("j")->items_done == 0);
  // All 20 items are still there for the next process: from 2000 + 3000 = 5000, 10 batches of 2 end at 15000.
  m.on_state(state("j", {{"p3", "n1", msg::share_status::new_}}), 2000);
  m.advance(15000);
  CHECK(m.job("j")->items_done == 20);
  CHECK(m.job("j")->completed_ms == 15000);

  // A service has no work items to finish: it is not drained, and runs on until the RM preempts it.
  job_spec svc;
  svc.id = "svc";
  svc.user = "bob";
  svc.kind = msg::work_kind::service;
  svc.memory_mb = 4096;
  svc.init_ms = 0;
  orchestrator_model s{{svc}, timing(0), epoch, {}, true};
  s.on_state(state("svc", {{"s1", "n1", msg::share_status::new_}}), 0);
  s.on_state(with_deadline(state("svc", {{"s1", "n1", msg::share_status::running}}), "s1"), 1000);
  CHECK(process(s.workmap(5000), "svc", "s1")->state == msg::process_state::running);
  CHECK(s.job("svc")->drained == 0);
}
