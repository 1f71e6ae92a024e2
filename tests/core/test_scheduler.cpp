// The whole cycle through nodepool_scheduler's public API: ramp-up, node faults, recovery, refusals,
// stability, and the admin calls (whatif, explain, view).
#include <catch2/catch.hpp>

#include "tests/core/scheduler_harness.hpp"

using namespace rmbus::test;

TEST_CASE("share ids carry the boot prefix and are never reused") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 3, 1);
  h.job("a", "u", "normal", 1).max_processes = 3;
  h.round();
  std::vector<std::string> ids;
  for (const auto& sh : h.plan("a").shares) ids.push_back(sh.id.str());
  CHECK(ids == std::vector<std::string>{"b1.1", "b1.2", "b1.3"});
  h.work.erase(job_id("a"));
  h.job("b", "u", "normal", 1).max_processes = 1;
  h.round();
  // the freed space is reused, the ids are not
  CHECK(h.plan("b").shares[0].id.str() == "b1.4");
}

TEST_CASE("initialization cap, then expansion by doubling: 1, then 2, 4, 8, 16, 25") {
  resource_class c = fair_class("normal");
  c.initialization_cap = 1;
  c.expand_by_doubling = true;
  harness h(one_pool({c}));
  h.machines("n", 60, 1);
  auto& j = h.job("j", "u", "normal", 1, 100);
  j.threads = 4;          // 100 items / 4 threads = 25 processes of work
  j.max_processes = 50;
  j.state = work_state::waiting;
  h.initialize = false;   // processes stay initializing
  h.round();
  CHECK(h.count("j") == 1);  // init cap while nothing has initialized
  h.round();
  CHECK(h.count("j") == 1);
  // the first process finishes initializing
  h.work[job_id("j")].state = work_state::running;
  for (auto& p : h.work[job_id("j")].processes) p.state = process_state::running;
  h.initialize = true;
  std::vector<int> counts;
  for (int r = 0; r < 6; ++r) {
    h.round();
    counts.push_back(h.count("j"));
  }
  // min(base 25, 2 x confirmed) each round once the previous step is running
  CHECK(counts == std::vector<int>{2, 4, 8, 16, 25, 25});
}

TEST_CASE("a new share stays new, with the same id, until the work map shows the process") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 2, 1);
  h.job("a", "u", "normal", 1);
  h.round(false);
  const auto first = h.plan("a").shares;
  REQUIRE(first.size() == 2);
  CHECK(first[0].status == share_status::new_share);
  h.round(false);
  CHECK(h.plan("a").shares == first);
  h.orchestrate();
  h.round();
  CHECK(h.with_status("a", share_status::running) == 2);
}

TEST_CASE("an unchanged input gives an unchanged schedule") {
  harness h(one_pool({fair_class("high", 200), fair_class("low", 100)}));
  h.machines("n", 7, 3);
  h.job("a", "u1", "high", 1);
  h.job("b", "u2", "low", 2);
  h.job("c", "u3", "low", 1);
  h.round();
  h.round();
  h.round();
  const auto settled = h.last;
  h.round();
  CHECK(h.last.jobs == settled.jobs);
  CHECK(h.last.counts.given == 0);
  CHECK(h.last.counts.preempted == 0);
}

TEST_CASE("the same calls give the same plan (deterministic)") {
  auto run = [] {
    harness h(one_pool({fair_class("high", 200), fair_class("low", 100)}, 1));
    h.machines("n", 9, 5);
    for (int i = 0; i < 6; ++i)
      h.job("j" + std::to_string(i), "u" + std::to_string(i % 3), i % 2 ? "high" : "low", 1 + i % 3);
    h.round();
    h.job("late", "u9", "high", 2);
    h.round();
    return h.last;
  };
  CHECK(run() == run());
}

TEST_CASE("a published preemption is never taken back") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 4, 1);
  h.job("a", "u1", "normal", 1);
  h.round();
  h.job("b", "u2", "normal", 1);
  h.round(false);
  REQUIRE(h.with_status("a", share_status::preempt) == 2);
  // b leaves before the exits are confirmed: a could use the space again, but the preemptions stand
  h.work.erase(job_id("b"));
  h.round(false);
  CHECK(h.with_status("a", share_status::preempt) == 2);
  h.orchestrate();
  h.round();
  // once gone, a grows back into the space
  CHECK(h.count("a") == 4);
  CHECK(h.with_status("a", share_status::preempt) == 0);
}

TEST_CASE("node down: fair share is evicted and rescheduled elsewhere, a reservation stays") {
  harness h(one_pool({reserve_class("reserve"), fair_class("normal")}));
  h.machines("n", 4, 2);
  h.job("r", "u1", "reserve", 2).kind = work_kind::reservation;
  h.job("f", "u2", "normal", 1).max_processes = 2;
  h.round();
  REQUIRE(h.count("r") == 1);
  REQUIRE(h.count("f") == 2);
  const std::string rnode = h.plan("r").shares[0].node.str();
  const std::string fnode = h.plan("f").shares[0].node.str();
  REQUIRE(rnode != fnode);
  h.s.machine_down(machine_id(fnode));
  h.s.machine_down(machine_id(rnode));
  h.round();
  // the fair-share processes on the dead node are evicted and placed again elsewhere in the same round
  CHECK(h.with_status("f", share_status::evict) == 2);
  CHECK(h.count("f") == 2);
  CHECK(h.on_machine("f", fnode) == 0);
  CHECK(h.last.counts.evicted == 2);
  // the unmanaged reservation is never evicted; its node is just unschedulable
  CHECK(h.count("r") == 1);
  CHECK(h.with_status("r", share_status::evict) == 0);
  h.round();
  CHECK(h.plan("f").shares.size() == 2);
  CHECK(h.no_machine_overbooked());
}

TEST_CASE("vary-off evicts fair share only: fixed work stays: vary-on makes the node usable again") {
  harness h(one_pool({fixed_class("fixed"), fair_class("normal")}));
  h.machine("n1", 4);
  h.job("svc", "u1", "fixed", 1).kind = work_kind::service;
  h.job("f", "u2", "normal", 1);
  h.round();
  REQUIRE(h.count("svc") == 1);
  REQUIRE(h.count("f") == 3);
  h.s.vary_off(machine_id("n1"));
  h.round();
  CHECK(h.with_status("f", share_status::evict) == 3);
  CHECK(h.count("svc") == 1);
  h.round();
  CHECK(h.count("f") == 0);  // nothing new on a varied-off node
  h.s.vary_on(machine_id("n1"));
  h.round();
  CHECK(h.count("f") == 3);
}

TEST_CASE("a service whose process is evicted is not re-placed (the service manager resubmits)") {
  harness h(one_pool({fixed_class("fixed")}));
  h.machines("n", 2, 1);
  h.job("svc", "u", "fixed", 1).kind = work_kind::service;
  h.round();
  REQUIRE(h.count("svc") == 1);
  h.s.machine_down(h.plan("svc").shares[0].node);
  h.round();
  h.round();
  CHECK(h.count("svc") == 0);
  CHECK(h.plan("svc").reason == reason_code::completed);
}

TEST_CASE("recovery: running processes are accounted, published as running, never double-booked") {
  harness h(one_pool({fair_class("normal"), fixed_class("fixed")}));
  h.machines("n", 2, 4);  // 8 quanta
  auto& a = h.job("a", "u1", "normal", 2);
  for (int i = 0; i < 2; ++i) {
    process_report p;
    p.id = share_id("old." + std::to_string(i));
    p.node = machine_id("n000");
    p.state = process_state::running;
    a.processes.push_back(p);
  }
  auto& s = h.job("s", "u2", "fixed", 2);
  s.kind = work_kind::service;
  process_report p;
  p.id = share_id("old.9");
  p.node = machine_id("n001");
  p.state = process_state::running;
  s.processes.push_back(p);
  h.round();
  // recovered shares keep their ids and are running, not new
  CHECK(h.with_status("a", share_status::running) == 2);
  CHECK(h.plan("s").shares.size() == 1);
  CHECK(h.plan("s").shares[0].id.str() == "old.9");
  CHECK(h.plan("s").shares[0].status == share_status::running);
  // a may grow into the 2 free quanta of n001 only: 8 - 2 x 2 (a) - 2 (s) = 2 quanta = 1 process
  CHECK(h.count("a") == 3);
  CHECK(h.no_machine_overbooked());
}

TEST_CASE("recovery onto an unknown node with its memory in the report registers the node") {
  harness h(one_pool({fair_class("normal")}));
  auto& a = h.job("a", "u", "normal", 1);
  a.max_processes = 1;
  process_report p;
  p.id = share_id("old.1");
  p.node = machine_id("late");
  p.node_memory_mb = 4096;
  p.state = process_state::running;
  a.processes.push_back(p);
  h.round();
  CHECK(h.count("a") == 1);
  CHECK(h.s.view().machines.size() == 1);
  CHECK(h.s.view().machines[0].free_quanta == 3);
}

namespace {
// Job `id` of user `user`, one process of 2 GB running on each of `nodes`, as a restarted RM's first map lists
// it: the orchestrator gives no node sizes (node_memory_mb absent).
void running_everywhere(harness& h, const std::string& id, const std::string& user, const std::vector<std::string>& nodes) {
  auto& j = h.job(id, user, "normal", 2);
  j.max_processes = static_cast<int>(nodes.size());
  for (const auto& n : nodes) j.processes.push_back(running_process(id + "." + n, n));
}
}  // namespace

TEST_CASE("recovery onto nodes not heard yet, without their sizes, keeps the work where it runs and gives nothing "
          "there until each node is heard") {
  harness h(one_pool({fair_class("normal")}));
  const std::vector<std::string> nodes{"n01", "n02", "n03", "n04", "n05", "n06"};
  running_everywhere(h, "ja", "alice", nodes);
  running_everywhere(h, "jb", "bob", nodes);
  h.job("jc", "carol", "normal", 2).max_processes = 4;  // new work, asking for space
  // The first rounds after the restart: no node heard at all.
  for (int round = 0; round < 3; ++round) {
    h.round();
    for (const char* id : {"ja", "jb"}) {
      INFO(id << " round " << round);
      CHECK(h.plan(id).status != job_status::refused);
      CHECK(h.with_status(id, share_status::running) == 6);
      CHECK(h.with_status(id, share_status::preempt) == 0);
      CHECK(h.with_status(id, share_status::evict) == 0);
    }
    CHECK(h.count("jc") == 0);  // nothing placed on a node of unknown size
    CHECK(h.last.counts.preempted == 0);
    CHECK(h.last.counts.evicted == 0);
  }
  // Five nodes speak (8 GB each: order 8, 4 quanta used by ja and jb): carol may use their free 4 quanta each,
  // two processes of order 2 per node, up to her 4; n06 is still unsized and takes nothing.
  for (std::size_t i = 0; i + 1 < nodes.size(); ++i) h.machine(nodes[i], 8);
  h.round();
  CHECK(h.count("jc") == 4);
  CHECK(h.on_machine("jc", "n06") == 0);
  CHECK(h.with_status("ja", share_status::running) == 6);
  CHECK(h.with_status("jb", share_status::running) == 6);
  CHECK(h.no_machine_overbooked());
  // n06 never speaks: the intake reports it down, its work is evicted and placed again where it fits.
  CHECK(h.s.machine_down(machine_id("n06")));
  h.round();
  CHECK(h.with_status("ja", share_status::evict) == 1);
  CHECK(h.with_status("jb", share_status::evict) == 1);
}

TEST_CASE("a node heard after recovery smaller than its recovered work is repaired: back under its order, least "
          "invested first") {
  harness h(one_pool({fair_class("normal")}));
  running_everywhere(h, "ja", "alice", {"n01", "n01", "n01"});  // three processes of order 2 on n01
  auto& ja = h.work.at(job_id("ja"));
  for (std::size_t i = 0; i < ja.processes.size(); ++i) {
    ja.processes[i].id = share_id("ja." + std::to_string(i));
    ja.processes[i].run_ms = 1000 * (static_cast<std::int64_t>(i) + 1);  // ja.0 has run least
  }
  h.round();
  REQUIRE(h.with_status("ja", share_status::running) == 3);
  h.machine("n01", 4);  // order 4: two processes fit, the third must go
  h.round(false);
  CHECK(h.with_status("ja", share_status::preempt) == 1);
  CHECK(h.count("ja") == 2);
  REQUIRE(h.s.last_repairs().size() == 1);
  CHECK(h.s.last_repairs().front().shares == std::vector<share_id>{share_id("ja.0")});
}

TEST_CASE("recovered work of a class that no longer exists blacklists its node until it is gone") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 2, 2);
  auto& old = h.job("old", "u1", "vanished", 1);
  process_report p;
  p.id = share_id("old.1");
  p.node = machine_id("n000");
  p.state = process_state::running;
  old.processes.push_back(p);
  h.job("f", "u2", "normal", 1);
  h.round();
  CHECK(h.plan("old").status == job_status::refused);
  CHECK(h.plan("old").reason == reason_code::unknown_class);
  // its process is evicted; n000 gets nothing new while it is there
  CHECK(h.with_status("old", share_status::evict) == 1);
  CHECK(h.on_machine("f", "n000") == 0);
  CHECK(h.count("f") == 2);
  CHECK(h.s.view().machines[0].state == machine_state::blacklisted);
  h.work.erase(job_id("old"));
  h.round();
  CHECK(h.count("f") == 4);
}

TEST_CASE("refusals say why: unknown class, user not allowed, reservation or service in FAIR_SHARE") {
  resource_class restricted = fair_class("private");
  restricted.users = {"alice"};
  harness h(one_pool({fair_class("normal"), restricted}));
  h.machines("n", 2, 1);
  h.job("x", "u", "nope", 1);
  h.job("y", "bob", "private", 1);
  h.job("r", "u", "normal", 1).kind = work_kind::reservation;
  h.job("s", "u", "normal", 1).kind = work_kind::service;
  h.round();
  CHECK(h.plan("x").status == job_status::refused);
  CHECK(h.plan("x").reason == reason_code::unknown_class);
  CHECK(h.plan("y").reason == reason_code::user_not_allowed);
  CHECK(h.plan("y").reason_text == "User 'bob' not authorized to use class 'private'");
  CHECK(h.plan("r").reason == reason_code::reservation_in_fair_share);
  CHECK(h.plan("s").reason == reason_code::service_in_fair_share);
  CHECK(h.last.counts.refused_jobs == 4);
  for (const char* id : {"x", "y", "r", "s"}) CHECK(h.plan(id).shares.empty());
}

TEST_CASE("whatif runs on a copy: what a new job would get and whom it would preempt") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 6, 1);
  h.job("a", "u1", "normal", 1);
  h.round();
  REQUIRE(h.count("a") == 6);
  const auto w = job_item("hypo", "u2", "normal", 1, 100);
  const auto r = h.s.whatif(w);
  // two users: 3 each; hypo would wait for 3 of a's processes
  CHECK(r.plan.given == 3);
  CHECK(r.preempted.size() == 3);
  for (const auto& p : r.preempted) CHECK(p.job == job_id("a"));
  CHECK(r.explanation.given == 3);
  // the real scheduler is untouched
  h.round();
  CHECK(h.count("a") == 6);
  CHECK(h.last.find(job_id("hypo")) == nullptr);
}

TEST_CASE("explain shows demand, cap steps, fair share, given and what blocked the rest") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 4, 1);
  auto& a = h.job("a", "u1", "normal", 1, 40);
  a.threads = 2;  // 40 items / 2 threads = 20 processes of work
  h.job("b", "u2", "normal", 1);
  h.round();
  const auto e = h.s.explain(job_id("a"));
  REQUIRE(e.known);
  CHECK(e.demand == 20);
  CHECK(e.cap.by_work == 20);
  CHECK(e.cap.cap == 20);
  // 4 quanta, two users: pure fair share 2 quanta = 2 processes, given 2
  CHECK(e.pure_fair_share_qshares == 2);
  CHECK(e.pure_fair_share == 2);
  CHECK(e.given == 2);
  CHECK(e.placed == 2);
  CHECK(e.text().find("given (How Much): 2") != std::string::npos);
  CHECK_FALSE(h.s.explain(job_id("nobody")).known);
}

TEST_CASE("a job's plan carries its user, class, demand and pure fair share for monitors") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 6, 1);
  auto& a = h.job("a", "u1", "normal", 1, 40);
  a.threads = 4;  // 40 items / 4 threads = 10 processes of work
  h.job("b", "u2", "normal", 1, 1000);  // 1000 items, 1 thread: 1000 processes of work
  h.round();
  const auto& pa = h.plan("a");
  const auto& pb = h.plan("b");
  CHECK(pa.user == user_id("u1"));
  CHECK(pa.class_name == "normal");
  CHECK(pa.demand == 10);
  CHECK(pb.demand == 1000);
  // 6 order-1 quanta, two users of weight 1 in one class: 3 quanta = 3 processes each
  CHECK(pa.fair_share == 3);
  CHECK(pb.user == user_id("u2"));
  CHECK(pb.fair_share == 3);
  // the same numbers explain() reports
  CHECK(pa.fair_share == h.s.explain(job_id("a")).pure_fair_share);
  CHECK(pb.demand == h.s.explain(job_id("b")).demand);
}

TEST_CASE("stage durations come from the caller's clock, never from the core's own") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 2, 1);
  h.job("a", "u1", "normal", 1);
  h.round();
  // No clock given: every stage reads 0.
  const auto none = h.s.last_stage_timings();
  CHECK(none.how_much_us + none.what_of_us + none.preempt_us + none.defrag_us == 0);
  // A clock that advances 10, 20, 30... per reading: How Much (the job caps in it), What Of, preemption and
  // defragmentation each span the gap between two consecutive readings.
  std::int64_t t = 0, step = 0;
  h.s.set_stage_clock([&] { return t += 10 * ++step; });
  h.job("b", "u2", "normal", 1);  // a change, so the round is not skipped
  h.round();
  const auto timed = h.s.last_stage_timings();
  CHECK(timed.how_much_us == 20);
  CHECK(timed.what_of_us == 30);
  CHECK(timed.preempt_us == 40);
  CHECK(timed.defrag_us == 50);
  // A round skipped because nothing changed ran no stage (the rounds before it settle the schedule).
  for (int r = 0; r < 4; ++r) h.round();
  REQUIRE(h.last.counts.given + h.last.counts.preempted == 0);
  const auto skipped = h.s.last_stage_timings();
  CHECK(skipped.how_much_us + skipped.what_of_us + skipped.preempt_us + skipped.defrag_us == 0);
}

TEST_CASE("view: per class demand and awards by order, per machine quanta and shares") {
  harness h(one_pool({fair_class("normal")}));
  h.machines("n", 2, 4);
  h.job("a", "u1", "normal", 2).max_processes = 3;
  h.round();
  const auto v = h.s.view();
  REQUIRE(v.classes.size() == 1);
  CHECK(v.classes[0].name == "normal");
  CHECK(v.classes[0].demand_by_order.at(2) == 3);
  CHECK(v.classes[0].awarded_by_order.at(2) == 3);
  REQUIRE(v.machines.size() == 2);
  CHECK(v.machines[0].quanta == 4);
  // 3 order-2 processes on two order-4 machines: 8 - 6 = 2 quanta free in all
  CHECK(v.machines[0].free_quanta + v.machines[1].free_quanta == 2);
  CHECK(v.machines[0].shares.size() + v.machines[1].shares.size() == 3);
}

TEST_CASE("nonpreemptable memory per user is reported for the other pools") {
  harness h(one_pool({fixed_class("fixed")}));
  h.machines("n", 2, 4);
  h.job("s", "u1", "fixed", 3).kind = work_kind::service;
  h.round();
  const auto held = h.s.nonpreemptable_mb_by_user();
  CHECK(held.at(user_id("u1")) == 3 * 1024);
}

TEST_CASE("nonpreemptable memory follows work in reused job slots: counted once and not after it left") {
  harness h(one_pool({fixed_class("fixed"), fair_class("normal")}));
  h.machines("n", 4, 4);
  h.job("s1", "u1", "fixed", 3).kind = work_kind::service;
  h.round();
  REQUIRE(h.s.nonpreemptable_mb_by_user().at(user_id("u1")) == 3 * 1024);
  // s1 leaves; a fair-share job takes its slot and another service arrives: u1 holds nothing any more,
  // the fair-share job counts nowhere.
  h.work.erase(job_id("s1"));
  h.job("f", "u2", "normal", 1);
  h.job("s2", "u3", "fixed", 2).kind = work_kind::service;
  h.round();
  auto held = h.s.nonpreemptable_mb_by_user();
  CHECK(held.count(user_id("u1")) == 0);
  CHECK(held.count(user_id("u2")) == 0);
  CHECK(held.at(user_id("u3")) == 2 * 1024);
  // The fair-share job leaves and a service takes the slot once more: counted once, not twice.
  h.work.erase(job_id("f"));
  h.job("s3", "u4", "fixed", 1).kind = work_kind::service;
  h.round();
  held = h.s.nonpreemptable_mb_by_user();
  CHECK(held.at(user_id("u4")) == 1 * 1024);
  CHECK(held.at(user_id("u3")) == 2 * 1024);
  CHECK(held.size() == 2);
}

TEST_CASE("find_nodepool: lists, patterns, unknown nodes to the first top-level pool") {
  scheduler_config cfg;
  nodepool_def a;
  a.name = "general";
  nodepool_def b;
  b.name = "bigmem";
  b.parent = "general";
  b.nodes = {"bm01", "bm02.example.org"};
  nodepool_def d;
  d.name = "drivers";
  d.node_patterns = {"jd[0-9]+(\\.example\\.org)?"};
  cfg.nodepools = {a, b, d};
  CHECK(find_nodepool(cfg, "bm01.example.org", "") == "bigmem");
  CHECK(find_nodepool(cfg, "bm02", "") == "bigmem");
  CHECK(find_nodepool(cfg, "jd7.example.org", "") == "drivers");
  CHECK(find_nodepool(cfg, "other", "10.1.1.1") == "general");
  CHECK(top_level_of(cfg, "bigmem") == "general");
  CHECK(top_level_of(cfg, "drivers") == "drivers");
}

TEST_CASE("recovery never registers a node of another top-level pool as one of its own") {
  scheduler_config cfg = one_pool({fair_class("normal")});
  nodepool_def other;
  other.name = "other";
  other.nodes = {"x1"};
  cfg.nodepools.push_back(other);
  harness h(cfg);
  auto& a = h.job("a", "u", "normal", 1);
  process_report p;
  p.id = share_id("old.1");
  p.node = machine_id("x1");
  p.node_memory_mb = 4096;
  p.state = process_state::running;
  a.processes.push_back(p);
  h.round();
  // x1 belongs to pool "other": this pool neither reports it nor counts it as capacity; the process there is
  // its own (tests/core/test_node_moves.cpp follows it).
  CHECK(h.s.view().machines.empty());
  CHECK(h.last.counts.nodes == 0);
  CHECK(h.plan("a").status != job_status::refused);
}

TEST_CASE("a quiet round reuses the last plan, and any change after it is seen") {
  scheduler_config cfg = one_pool({fair_class("normal"), fixed_class("fixed")});
  cfg.settings.global_allotment_mb = 4 * 1024;
  harness h(cfg);
  h.machines("n", 4, 1);
  h.job("a", "u1", "normal", 1).max_processes = 2;
  h.round();
  h.round();
  const auto quiet = h.round();
  CHECK(quiet.counts.given == 0);
  h.round();
  CHECK(h.last.jobs == quiet.jobs);
  // a work item change
  h.work[job_id("a")].max_processes = 3;
  h.round();
  CHECK(h.count("a") == 3);
  h.round();
  // a machine arrives
  h.machine("extra", 1);
  h.work[job_id("a")].max_processes = 0;
  h.round();
  CHECK(h.count("a") == 5);
  h.round();
  h.round();
  // the other pools' allotment changes the non-preemptable count
  h.job("svc", "u2", "fixed", 1).kind = work_kind::service;
  h.round();  // a fair-share process is preempted to make room
  h.round();
  REQUIRE(h.count("svc") == 1);
  h.round();
  h.round();
  h.work[job_id("svc2")] = h.work[job_id("svc")];
  h.work[job_id("svc2")].id = job_id("svc2");
  h.work[job_id("svc2")].processes.clear();
  h.s.apply_work(h.work);
  round_input in;
  in.other_pools_nonpreemptable_mb[user_id("u2")] = 3 * 1024;  // 3 GB elsewhere + 1 GB here = the limit
  const auto p = h.s.schedule(in);
  CHECK(p.find(job_id("svc2"))->reason == reason_code::allotment_exceeded);
  // a machine state change
  h.s.vary_off(machine_id("extra"));
  const auto p2 = h.s.schedule(in);
  // 5 machines, one varied off
  CHECK(p2.counts.schedulable_nodes == 4);
  CHECK(h.s.view().machines[0].state == machine_state::varied_off);
}

TEST_CASE("absurd sizes from the wire are bounded, never crash, and say why") {
  harness h(one_pool({fair_class("normal"), fixed_class("fixed"), reserve_class("reserve")}));
  h.machines("n", 2, 4);
  h.s.update_machine({machine_id("huge"), "", ~std::uint64_t{0}, false});  // 2^64 - 1 MB
  h.job("big", "u", "normal", 1).memory_mb = ~std::uint64_t{0};
  h.job("bigfixed", "u", "fixed", 1).memory_mb = ~std::uint64_t{0} / 2;
  auto& r = h.job("bigres", "u", "reserve", 1);
  r.kind = work_kind::reservation;
  r.memory_mb = ~std::uint64_t{0} / 4;
  auto& odd = h.job("odd", "u", "normal", 1);
  odd.threads = -3;
  odd.max_processes = -1;
  odd.items_total = -5;
  odd.items_done = 1000;
  h.round();
  CHECK(h.plan("big").reason == reason_code::no_machine_of_order);
  CHECK(h.plan("bigfixed").shares.empty());
  CHECK(h.plan("bigres").reason == reason_code::no_machine_of_order);
  CHECK(h.no_machine_overbooked());
  // the huge machine is capped at 65536 quanta, and is usable
  bool seen = false;
  for (const auto& m : h.s.view().machines)
    if (m.name.str() == "huge") seen = m.quanta == 65536;
  CHECK(seen);
}

TEST_CASE("recovered fair-share work in a pool its class may not use is evicted and placed again") {
  scheduler_config cfg = one_pool({fair_class("sub_c", 100, 10, "sub")});
  add_subpool(cfg, "sub", {"s000"});
  harness h(cfg);
  h.machines("p", 1, 1);  // in the top pool: not usable by sub_c
  h.machines("s", 1, 1);
  auto& a = h.job("a", "u", "sub_c", 1);
  a.max_processes = 1;
  process_report p;
  p.id = share_id("old.1");
  p.node = machine_id("p000");
  p.state = process_state::running;
  a.processes.push_back(p);
  h.round();
  // the recovered process on p000 is evicted, a new one goes to s000 in the subpool
  CHECK(h.with_status("a", share_status::evict) == 1);
  CHECK(h.on_machine("a", "s000") == 1);
}
