// The report's arithmetic: water-filling and weighted max-min fair shares, what a sample takes from rm.state
// and rm.nodes (holdings, utilization, double booking, preemption counts), and the figures computed from the
// samples and jobs (time-weighted means, final values under contention, makespan, time to first process),
// with the CSV, the SVG and the progress line.

#include <catch2/catch.hpp>

#include "tools/sim/fair_share.hpp"
#include "tools/sim/plot.hpp"
#include "tools/sim/recorder.hpp"
#include "tools/sim/report.hpp"

using namespace rmbus::sim;
namespace msg = rmbus::messages;

namespace {

job_view jv(std::string id, std::string user, std::string cls, std::uint64_t demand, std::int64_t at_ms = 0) {
  job_view j;
  j.id = std::move(id);
  j.user = std::move(user);
  j.class_name = std::move(cls);
  j.memory_mb = 4096;
  j.arrived = true;
  j.demand = demand;
  j.at_ms = at_ms;
  j.state = msg::work_state::running;
  return j;
}

msg::job_schedule js(std::string id, std::vector<msg::share_schedule> shares, std::uint64_t fair_share = 0) {
  msg::job_schedule j;
  j.id = std::move(id);
  j.status = msg::job_status::scheduled;
  j.memory_mb = shares.empty() ? 4096 : shares.front().quanta * 1024;
  j.shares = std::move(shares);
  j.fair_share = fair_share;
  return j;
}

msg::share_schedule share(std::string id, std::string node, std::uint64_t quanta,
                          msg::share_status status = msg::share_status::running) {
  return {std::move(id), std::move(node), quanta, status, {}};
}

msg::rm_nodes cluster(std::initializer_list<std::pair<const char*, std::uint64_t>> free_per_node,
                      std::uint64_t quanta = 32) {
  msg::rm_nodes n;
  for (const auto& [name, free] : free_per_node) {
    msg::node_report r;
    r.node = name;
    r.pool = "--default--";
    r.nodepool = "--default--";
    r.state = msg::node_state::up;
    r.memory_mb = quanta * 1024;
    r.quanta = quanta;
    r.free_quanta = free;
    n.nodes.push_back(r);
  }
  return n;
}

}  // namespace

TEST_CASE("water fill: proportional to weights, never above demand, leftovers shared") {
  // 100 among weights 1:1 wanting 30 and 200: the first is satisfied (30), the rest goes to the second (70).
  CHECK(water_fill(100, {{1, 30}, {1, 200}}) == std::vector<double>{30, 70});
  // 120 among weights 2:1 wanting plenty: 80 and 40.
  CHECK(water_fill(120, {{2, 1000}, {1, 1000}}) == std::vector<double>{80, 40});
  // Weights 200:100:50 over 224, all wanting plenty: 224 x 4/7 = 128, 64, 32.
  CHECK(water_fill(224, {{200, 1e9}, {100, 1e9}, {50, 1e9}}) == std::vector<double>{128, 64, 32});
  // Total demand below capacity: everyone gets what it asks.
  CHECK(water_fill(100, {{1, 10}, {5, 20}}) == std::vector<double>{10, 20});
  // No demand, no share; nothing to share, nothing given.
  CHECK(water_fill(100, {{1, 0}, {1, 50}}) == std::vector<double>{0, 50});
  CHECK(water_fill(0, {{1, 10}}) == std::vector<double>{0});
  // Cascade: 90 among 1:1:1 wanting 10, 25, 100: 10; then 80 over two -> 25 satisfied; the last gets 55.
  CHECK(water_fill(90, {{1, 10}, {1, 25}, {1, 100}}) == std::vector<double>{10, 25, 55});
}

TEST_CASE("fair shares: classes by weight, users equally within a class, priorities in order") {
  // 128 quanta. Class normal (100) has alice and bob; class high (200) has carol; all want plenty.
  // Classes: high 128 x 200/300 = 85.33, normal 42.67; normal's users 21.33 each.
  auto f = fair_shares(
      128, {{"normal", 100, 10, {{"alice", 1000}, {"bob", 1000}}}, {"high", 200, 10, {{"carol", 1000}}}});
  CHECK(f["carol"] == Approx(256.0 / 3));
  CHECK(f["alice"] == Approx(128.0 / 6));
  CHECK(f["bob"] == Approx(128.0 / 6));

  // carol wants only 20: she gets 20 and normal gets the other 108, 54 each.
  f = fair_shares(
      128, {{"normal", 100, 10, {{"alice", 1000}, {"bob", 1000}}}, {"high", 200, 10, {{"carol", 20}}}});
  CHECK(f["carol"] == Approx(20));
  CHECK(f["alice"] == Approx(54));

  // A better priority (5) is served first: dave takes his 100 of 128, priority 10 shares the other 28.
  f = fair_shares(
      128, {{"first", 100, 5, {{"dave", 100}}}, {"normal", 100, 10, {{"alice", 1000}, {"bob", 1000}}}});
  CHECK(f["dave"] == Approx(100));
  CHECK(f["alice"] == Approx(14));

  // A user in two classes gets the sum: erin in both normal and high, alone in each: all of it.
  f = fair_shares(90, {{"normal", 100, 10, {{"erin", 1000}}}, {"high", 200, 10, {{"erin", 1000}}}});
  CHECK(f["erin"] == Approx(90));
}

TEST_CASE("recorder: holdings per user, utilization from rm.nodes, fair shares") {
  recorder rec{{"alice", "bob"}, embedded_default_classes(), 1024};
  // Two 32-quanta nodes. alice holds 3 processes of 4 quanta (one new, so still held), bob 1; a preempted
  // share of bob still occupies its node but is not held.
  msg::rm_state st;
  st.jobs.push_back(js(
      "a1", {share("s1", "n1", 4), share("s2", "n1", 4), share("s3", "n2", 4, msg::share_status::new_)}, 8));
  st.jobs.push_back(js("b1", {share("s4", "n2", 4), share("s5", "n2", 4, msg::share_status::preempt)}, 8));
  rec.observe_state(st);
  // Free quanta as the RM would report: n1 32 - 8 = 24, n2 32 - 12 = 20.
  const auto nodes = cluster({{"n1", 24}, {"n2", 20}});
  // alice's job could use 100 processes, bob's 2 (8 quanta).
  const std::vector<job_view> jobs = {jv("a1", "alice", "normal", 100), jv("b1", "bob", "normal", 2)};
  rec.sample_now(5000, jobs, &st, &nodes, 2);
  REQUIRE(rec.samples().size() == 1);
  const sample& s = rec.samples()[0];
  CHECK(s.t_ms == 5000);
  CHECK(s.nodes_up == 2);
  CHECK(s.total_quanta == 64);
  CHECK(s.used_quanta == 20);  // (32 - 24) + (32 - 20)
  CHECK_FALSE(s.double_booked);
  CHECK(s.preemptions == 1);
  CHECK(s.users[0].held_processes == 3);
  CHECK(s.users[0].held_quanta == 12);
  CHECK(s.users[1].held_processes == 1);
  // Demands: alice 100 x 4 = 400 quanta, bob 2 x 4 = 8. Max-min over 64: bob 8, alice 56.
  CHECK(s.users[0].demand_quanta == Approx(400));
  CHECK(s.users[1].fair_quanta == Approx(8));
  CHECK(s.users[0].fair_quanta == Approx(56));
  // The RM's own fair share: 8 processes x 4 quanta each.
  CHECK(s.users[0].rm_fair_quanta == 32);
  CHECK(rec.quantum_mb() == 1024);  // learnt from the schedule: 4096 MB granted / 4 quanta
}

TEST_CASE("recorder: fixed-share holdings come off the top: double booking is seen") {
  recorder rec{{"alice", "carol"}, embedded_default_classes(), 1024};
  msg::rm_state st;
  // carol's fixed-share job holds 16 quanta on n1; alice's fair-share job 4 on n1 too.
  st.jobs.push_back(js("c1", {share("f1", "n1", 16)}));
  st.jobs.push_back(js("a1", {share("s1", "n1", 4)}));
  const auto nodes = cluster({{"n1", 12}, {"n2", 32}});
  std::vector<job_view> jobs = {jv("c1", "carol", "fixed", 1), jv("a1", "alice", "normal", 1000)};
  rec.sample_now(0, jobs, &st, &nodes, 2);
  const sample& s = rec.samples()[0];
  CHECK(s.fixed_quanta == 16);
  // 64 quanta less 16 held by fixed-share work: alice alone may have all 48.
  CHECK(s.users[0].fair_quanta == Approx(48));
  CHECK(s.users[1].fair_quanta == 0);
  CHECK(s.users[1].held_quanta == 16);
  CHECK(s.users[1].fair_held_quanta == 0);
  CHECK_FALSE(s.double_booked);

  // A node holding more quanta than it has (16 + 4 + 16 = 36 > 32) is double booked ...
  st.jobs.push_back(js("a2", {share("s9", "n1", 16)}));
  jobs.push_back(jv("a2", "alice", "normal", 1));
  rec.sample_now(1, jobs, &st, &nodes, 2);
  CHECK(rec.samples()[1].double_booked);
  // ... and so is a share listed twice.
  msg::rm_state twice;
  twice.jobs.push_back(js("a1", {share("s1", "n1", 4), share("s1", "n2", 4)}));
  rec.sample_now(2, jobs, &twice, &nodes, 2);
  CHECK(rec.samples()[2].double_booked);
}

TEST_CASE("recorder: preemptions and evictions are distinct shares: events counted apart") {
  recorder rec{{"alice"}, embedded_default_classes(), 1024};
  msg::rm_state st;
  st.jobs.push_back(js("a1", {share("s1", "n1", 4, msg::share_status::preempt),
                              share("s2", "n1", 4, msg::share_status::evict)}));
  rec.observe_state(st);
  rec.observe_state(st);  // listed again until gone: counted once
  st.jobs[0].shares.push_back(share("s3", "n2", 4, msg::share_status::preempt));
  rec.observe_state(st);
  CHECK(rec.preempted_shares() == 2);
  CHECK(rec.evicted_shares() == 1);
  CHECK(rec.states_received() == 3);
  rec.observe_event({"preempt", {{"job", "a1"}}});
  rec.observe_event({"node_down", {{"node", "n1"}}});
  CHECK(rec.preempt_events() == 1);
  CHECK(rec.evict_events() == 0);

  // Restricted to the scenario's jobs, another job's shares and events are not counted.
  recorder ours{{"alice"}, embedded_default_classes(), 1024, {"a1"}};
  msg::rm_state mixed = st;
  mixed.jobs.push_back(js("old", {share("x1", "n1", 4, msg::share_status::evict)}));
  ours.observe_state(mixed);
  CHECK(ours.preempted_shares() == 2);
  CHECK(ours.evicted_shares() == 1);  // s2 only; x1 belongs to "old"
  ours.observe_event({"evict", {{"job", "old"}}});
  ours.observe_event({"evict", {{"job", "a1"}}});
  CHECK(ours.evict_events() == 1);
}

TEST_CASE("recorder: very long runs are thinned by halves") {
  recorder rec{{"alice"}, embedded_default_classes(), 1024};
  for (std::int64_t t = 0; t < static_cast<std::int64_t>(recorder::max_samples); ++t)
    rec.sample_now(t, {}, nullptr, nullptr, 0);
  // At max_samples the even-indexed half is kept; from then on every second sample offered is taken.
  CHECK(rec.samples().size() == recorder::max_samples / 2);
  CHECK(rec.samples()[1].t_ms == 2);
  rec.sample_now(20000, {}, nullptr, nullptr, 0);  // offered #20000: taken (20000 % 2 == 0)
  rec.sample_now(20001, {}, nullptr, nullptr, 0);  // not taken
  CHECK(rec.samples().size() == recorder::max_samples / 2 + 1);
}

namespace {

// A hand-made run: samples at 0, 10, 20, 40 s. alice and bob both want work in all but the last sample.
recorder sample_run() {
  recorder rec{{"alice", "bob"}, embedded_default_classes(), 1024};
  const auto nodes = cluster({{"n1", 0}, {"n2", 0}});  // 64 quanta, all used
  auto at = [&](std::int64_t t, std::uint64_t alice_procs, std::uint64_t bob_procs, bool bob_wants) {
    msg::rm_state st;
    std::vector<msg::share_schedule> a, b;
    // alice fills n1 first (8 processes of 4 quanta), then n2; bob is on n2 (never more than 8 with alice's).
    for (std::uint64_t i = 0; i < alice_procs; ++i)
      a.push_back(share("a" + std::to_string(t) + "-" + std::to_string(i), i < 8 ? "n1" : "n2", 4));
    for (std::uint64_t i = 0; i < bob_procs; ++i)
      b.push_back(share("b" + std::to_string(t) + "-" + std::to_string(i), "n2", 4));
    st.jobs.push_back(js("a1", a));
    st.jobs.push_back(js("b1", b));
    std::vector<job_view> jobs = {jv("a1", "alice", "normal", 100),
                                  jv("b1", "bob", "normal", bob_wants ? 100 : 0)};
    jobs[0].processes = alice_procs;
    jobs[1].processes = bob_procs;
    if (!bob_wants) jobs[1].state = msg::work_state::completed;
    rec.sample_now(t, jobs, &st, &nodes, 2);
  };
  at(0, 2, 2, true);
  at(10000, 8, 6, true);
  at(20000, 8, 8, true);
  at(40000, 16, 0, false);
  return rec;
}

}  // namespace

TEST_CASE("report: time-weighted means, final values under contention") {
  const recorder rec = sample_run();
  std::vector<job_view> jobs = {jv("a1", "alice", "normal", 0), jv("b1", "bob", "normal", 0)};
  jobs[0].first_process_ms = 2000;
  jobs[0].completed_ms = 50000;
  jobs[1].at_ms = 1000;
  jobs[1].first_process_ms = 4000;
  jobs[1].completed_ms = 45000;
  const auto r = compute_report(rec, jobs, {"hand-made", 2.0, 25.0, 50000, "all work done"});
  REQUIRE(r.users.size() == 2);
  const auto& alice = r.users[0];
  const auto& bob = r.users[1];
  // Weights: each sample until the next: 10, 10, 20 s; the last stands for nothing.
  // alice wants in all four: held quanta (2x4=8, 32, 32, 64) -> (8x10 + 32x10 + 32x20) / 40 = 26.
  CHECK(alice.mean_held_quanta == Approx(26));
  // Her processes: (2x10 + 8x10 + 8x20) / 40 = 6.5.
  CHECK(alice.mean_held_processes == Approx(6.5));
  // bob wants in the first three only: (8x10 + 24x10 + 32x20) / 40 = 24.
  CHECK(bob.mean_held_quanta == Approx(24));
  // Fair shares: 64 quanta, both want 400: 32 each while both want; alice alone at 40 s has weight 0.
  CHECK(alice.mean_fair_quanta == Approx(32));
  CHECK(bob.mean_fair_quanta == Approx(32));
  // The last contended sample is at 20 s: both hold 8 processes, fair 32 quanta each.
  CHECK(alice.final_processes == 8);
  CHECK(bob.final_processes == 8);
  CHECK(alice.final_fair_quanta == Approx(32));
  CHECK(alice.max_processes == 16);
  CHECK(bob.max_processes == 8);
  // Time to first process: alice 2 - 0 = 2 s, bob 4 - 1 = 3 s.
  CHECK(*alice.first_process_mean_s == Approx(2));
  CHECK(*bob.first_process_mean_s == Approx(3));
  CHECK(r.first_process_count == 2);
  CHECK(r.first_process_mean_s == Approx(2.5));
  CHECK(r.first_process_p50_s == Approx(2));  // nearest rank: ceil(0.5 x 2) = 1st
  CHECK(r.first_process_max_s == Approx(3));
  // Time to fair share (90% of 32 = 28.8 quanta): alice holds 8 at 0 s and 32 at 10 s: 10 s; bob holds 8 at
  // 0 s, 24 at 10 s, 32 at 20 s: 20 s. Mean 15, max 20; alice alone at 40 s holds 64 of 64: not below.
  CHECK(r.fair_share_reached == 2);
  CHECK(r.fair_share_unreached == 0);
  CHECK(r.fair_share_mean_s == Approx(15));
  CHECK(r.fair_share_max_s == Approx(20));
  CHECK(r.fair_share_p90_s == Approx(20));  // nearest rank: ceil(0.9 x 2) = 2nd
  // Makespan: first submission 0 s, last completion 50 s.
  REQUIRE(r.makespan_s.has_value());
  CHECK(*r.makespan_s == Approx(50));
  CHECK(r.jobs_total == 2);
  CHECK(r.jobs_completed == 2);
  // Utilization: every node fully used in every sample.
  CHECK(r.utilization_mean == Approx(1.0));
  CHECK(r.double_booked_samples == 0);
}

TEST_CASE("report: no makespan while a job is unfinished: refused jobs do not count") {
  const recorder rec = sample_run();
  std::vector<job_view> jobs = {jv("a1", "alice", "normal", 0, 5000), jv("b1", "bob", "normal", 10),
                                jv("c1", "carol", "nope", 0)};
  jobs[0].completed_ms = 30000;
  jobs[2].refused = true;
  jobs[2].completed_ms = 100;
  auto r = compute_report(rec, jobs, {});
  CHECK_FALSE(r.makespan_s.has_value());
  CHECK(r.jobs_refused == 1);
  CHECK(r.jobs_completed == 1);
  CHECK(r.never_started == 2);  // a1 and b1 have no first process; the refused one is not counted
  jobs[1].completed_ms = 42000;
  r = compute_report(rec, jobs, {});
  // First submission: b1 at 0 (a1 came at 5 s); last completion 42 s.
  REQUIRE(r.makespan_s.has_value());
  CHECK(*r.makespan_s == Approx(42));
}

TEST_CASE("report: nearest-rank percentiles") {
  const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  CHECK(nearest_rank(v, 50) == 5);   // ceil(0.5 x 10) = 5th
  CHECK(nearest_rank(v, 90) == 9);   // ceil(0.9 x 10) = 9th
  CHECK(nearest_rank(v, 91) == 10);  // ceil(9.1) = 10th
  CHECK(nearest_rank(v, 0) == 1);
  CHECK(nearest_rank({}, 50) == 0);
}

TEST_CASE("report: text with a figures block, CSV, SVG, progress line") {
  const recorder rec = sample_run();
  std::vector<job_view> jobs = {jv("a1", "alice", "normal", 0), jv("b1", "bob", "normal", 0)};
  jobs[0].completed_ms = 50000;
  jobs[1].completed_ms = 45000;
  const auto r = compute_report(rec, jobs, {"hand-made", 2.0, 25.0, 50000, "all work done"});
  const std::string text = render_report(r);
  CHECK(text.find("rmbus-sim report: hand-made") == 0);
  CHECK(text.find("\nmakespan_s = 50.000\n") != std::string::npos);
  CHECK(text.find("\nuser.alice.final_processes = 8\n") != std::string::npos);
  CHECK(text.find("\nuser.bob.mean_held_quanta = 24.000\n") != std::string::npos);
  CHECK(text.find("\ndouble_booked_samples = 0\n") != std::string::npos);

  const std::string csv = render_csv(rec);
  const auto first_line = csv.substr(0, csv.find('\n'));
  CHECK(first_line ==
        "t_s,nodes_up,total_quanta,used_quanta,utilization,fixed_quanta,pending_jobs,preemptions,evictions,"
        "double_booked,"
        "alice_quanta,alice_processes,alice_fair_quanta,alice_rm_fair_quanta,bob_quanta,bob_processes,bob_"
        "fair_quanta,"
        "bob_rm_fair_quanta");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);  // header + 4 samples
  CHECK(csv.find("\n10.000,2,64,64,1.0000,0,0,0,0,0,32,8,32.00,0,24,6,32.00,0\n") != std::string::npos);

  const std::string svg = render_svg(rec, "a <b> & 'c'");
  CHECK(svg.find("<svg xmlns='http://www.w3.org/2000/svg'") != std::string::npos);
  CHECK(svg.find("a &lt;b&gt; &amp; &apos;c&apos;") != std::string::npos);
  // One polyline for the quanta up, two per user (held, fair), one for utilization.
  std::size_t polylines = 0;
  for (auto at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1))
    ++polylines;
  CHECK(polylines == 1 + 2 * 2 + 1);
  CHECK(svg.rfind("</svg>\n") == svg.size() - 7);

  CHECK(progress_line(rec.samples()[1], rec.users(), 2, 0, 2) ==
        "[    10.0 s] nodes 2/2 up | quanta 64/64 (100%) | procs alice=8 bob=6 | pending 0 | done 0/2 | "
        "preempted 0 evicted 0");
}

TEST_CASE("report: drained_early counts the processes drained before their reclaim deadline") {
  const recorder rec = sample_run();
  std::vector<job_view> jobs = {jv("a1", "alice", "normal", 0), jv("b1", "bob", "normal", 0)};
  std::string text = render_report(compute_report(rec, jobs, {}));
  // Nothing drained (no --drain-on-reclaim): the figure says 0 and the text has no line for it.
  CHECK(text.find("\ndrained_early = 0\n") != std::string::npos);
  CHECK(text.find("Drained early") == std::string::npos);
  jobs[0].drained = 3;
  jobs[1].drained = 2;
  const auto r = compute_report(rec, jobs, {});
  CHECK(r.drained_early == 5);  // 3 + 2, summed over the jobs
  text = render_report(r);
  CHECK(text.find("\ndrained_early = 5\n") != std::string::npos);
  CHECK(text.find("Drained early: 5 processes") != std::string::npos);
}

TEST_CASE(
    "recorder: a job capped by design wants what it was given, and refused work wants nothing (issue 17)") {
  recorder rec{{"alice", "bob", "dave"}, embedded_default_classes(), 1024};
  msg::rm_state st;
  // alice's job is held by DUCC's prediction at 2 processes though its work could use 100; bob's is not.
  auto a = js("a1", {share("s1", "n1", 4), share("s2", "n1", 4)}, 8);
  a.given = 2;
  a.capped_by = "prediction";
  st.jobs.push_back(a);
  st.jobs.push_back(js("b1", {share("s3", "n2", 4)}, 8));
  msg::job_schedule d;
  d.id = "d1";
  d.status = msg::job_status::refused;
  d.reason = "Cannot find class gpu for the work";
  st.jobs.push_back(d);
  rec.observe_state(st);
  const auto nodes = cluster({{"n1", 24}, {"n2", 28}});
  const std::vector<job_view> jobs = {jv("a1", "alice", "normal", 100), jv("b1", "bob", "normal", 100),
                                      jv("d1", "dave", "normal", 100)};
  rec.sample_now(0, jobs, &st, &nodes, 2);
  const sample& s = rec.samples()[0];
  // alice wants 2 x 4 = 8 quanta for now: her fair share is 8, and she holds all of it (held/fair 1, not
  // 0.14).
  CHECK(s.users[0].demand_quanta == Approx(8));
  CHECK(s.users[0].fair_quanta == Approx(8));
  CHECK(s.users[0].fair_held_quanta == 8);
  // bob takes what she leaves of the 64 quanta; dave's refused job counts for nothing.
  CHECK(s.users[1].fair_quanta == Approx(56));
  CHECK(s.users[2].demand_quanta == 0);
  CHECK(s.users[2].fair_quanta == 0);
}

TEST_CASE("report: refused work is listed with the RM's reason") {
  const recorder rec = sample_run();
  std::vector<job_view> jobs = {jv("a1", "alice", "normal", 0), jv("c1", "carol", "nope", 0)};
  jobs[1].refused = true;
  jobs[1].refused_reason = "Cannot find class nope for the work";
  const auto text = render_report(compute_report(rec, jobs, {}));
  CHECK(text.find("Refused (not counted in fair shares):\n  c1 (user carol): Cannot find class nope for the "
                  "work\n") != std::string::npos);
}

TEST_CASE("report: utilisation per nodepool, and the progress line keeps pools of different quanta apart") {
  recorder rec{{"alice"}, embedded_default_classes(), 1024};
  auto nodes = cluster({{"a1", 8}, {"a2", 0}}, 32);  // pool alpha: 64 quanta, 56 held
  auto big = cluster({{"g1", 192}}, 192);            // pool general: 192 quanta, none held
  nodes.nodes[0].pool = nodes.nodes[1].pool = "alpha";
  big.nodes[0].pool = "general";
  nodes.nodes.push_back(big.nodes[0]);
  msg::rm_state st;
  rec.sample_now(0, {}, &st, &nodes, 3);
  rec.sample_now(1000, {}, &st, &nodes, 3);
  const auto& s = rec.samples().back();
  REQUIRE(s.pools.size() == 2);
  CHECK(s.pools.at("alpha").total_quanta == 64);
  CHECK(s.pools.at("alpha").used_quanta == 56);
  CHECK(s.pools.at("general").used_quanta == 0);
  const auto r = compute_report(rec, {}, {});
  CHECK(r.utilization_by_pool.at("alpha") == Approx(56.0 / 64));
  CHECK(r.utilization_by_pool.at("general") == Approx(0));
  const auto text = render_report(r);
  CHECK(text.find("  per nodepool: alpha 87.5% general 0.0%\n") != std::string::npos);
  CHECK(text.find("utilization_mean.alpha = 0.8750\n") != std::string::npos);
  CHECK(progress_line(s, {"alice"}, 3, 0, 0).find("quanta 56/256 (22%) [alpha 56/64, general 0/192]") !=
        std::string::npos);
}

namespace {

// Two pools of different quanta, computed by hand in the test below:
//   general: g1..g6, 32 GB with a 1 GB quantum: 6 x 32 = 192 quanta; alice holds 4 processes of 4 quanta on
//   g1. bigmem:  b1, b2, 128 GB with a 4 GB quantum: 2 x 32 = 64 quanta; carol holds 1 process of 4 quanta on
//   b1.
msg::rm_nodes two_pools() {
  msg::rm_nodes n;
  const auto add = [&](std::string name, const char* pool, std::uint64_t memory_mb, std::uint64_t free) {
    msg::node_report r;
    r.node = std::move(name);
    r.pool = r.nodepool = pool;
    r.state = msg::node_state::up;
    r.memory_mb = memory_mb;
    r.quanta = 32;
    r.free_quanta = free;
    n.nodes.push_back(r);
  };
  for (int i = 1; i <= 6; ++i) add("g" + std::to_string(i), "general", 32768, i == 1 ? 16 : 32);
  add("b1", "bigmem", 131072, 28);
  add("b2", "bigmem", 131072, 32);
  return n;
}

// normal runs in general (the scenario says so); bigjobs (100) and bighigh (200) in bigmem; anywhere names
// no nodepool, so its pool is learned from where the RM places its work.
std::vector<class_spec> two_pool_classes() {
  auto classes = embedded_default_classes();
  for (auto& c : classes)
    if (c.name == "normal") c.nodepool = "general";
  classes.push_back({"bigjobs", class_policy::fair_share, 100, 10, false, "bigmem"});
  classes.push_back({"bighigh", class_policy::fair_share, 200, 10, false, "bigmem"});
  classes.push_back({"anywhere", class_policy::fair_share, 100, 10, false, ""});
  return classes;
}

}  // namespace

TEST_CASE("recorder and report: fair shares per nodepool, against each pool's own quanta (issue 17)") {
  recorder rec{{"alice", "bob", "carol", "dave"}, two_pool_classes(), 1024};
  const auto nodes = two_pools();
  msg::rm_state st;
  st.jobs.push_back(
      js("a1", {share("s1", "g1", 4), share("s2", "g1", 4), share("s3", "g1", 4), share("s4", "g1", 4)}));
  st.jobs.push_back(js("c1", {share("s5", "b1", 4)}));
  st.jobs.back().memory_mb = 16384;
  // bob's and dave's jobs wait, listed by the RM with no share (work the RM does not list yet counts
  // nowhere).
  st.jobs.push_back(js("b1", {}));
  st.jobs.push_back(js("d1", {}));
  std::vector<job_view> jobs = {jv("a1", "alice", "normal", 300), jv("b1", "bob", "bighigh", 200),
                                jv("c1", "carol", "bigjobs", 10), jv("d1", "dave", "anywhere", 5)};
  jobs[1].memory_mb = 8192;   // bigmem's quantum is 4 GB: order 2
  jobs[2].memory_mb = 16384;  // order 4 (its share says so too)
  rec.sample_now(0, jobs, &st, &nodes, 8);

  // general, 192 quanta: alice (normal, 300 processes x 4 quanta = 1200 wanted) is alone there: all 192.
  //   One pool of 256 would have given her more than the 192 her pool has (the finding: 228 in 192).
  // bigmem, 64 quanta: bighigh (200) wants 200 x 2 = 400, bigjobs (100) wants 10 x 4 = 40; neither is
  //   satisfied at 64 x 200/300 = 42.67 and 64 x 100/300 = 21.33: bob 42.67, carol 21.33.
  // dave's job is in no known pool (no share, its class names none, none of its class placed): left out.
  const auto& s = rec.samples().back();
  REQUIRE(s.pools.size() == 2);
  const auto& general = s.pools.at("general");
  const auto& bigmem = s.pools.at("bigmem");
  CHECK(general.total_quanta == 192);
  CHECK(bigmem.total_quanta == 64);
  CHECK(general.users[0].fair_quanta == Approx(192));
  CHECK(general.users[0].demand_quanta == Approx(1200));
  CHECK(general.users[0].fair_held_quanta == 16);
  CHECK(bigmem.users[0].fair_quanta == 0);
  CHECK(bigmem.users[1].fair_quanta == Approx(64.0 * 2 / 3));
  CHECK(bigmem.users[1].demand_quanta == Approx(400));
  CHECK(bigmem.users[2].fair_quanta == Approx(64.0 / 3));
  CHECK(bigmem.users[2].demand_quanta == Approx(40));
  CHECK(bigmem.users[2].fair_held_quanta == 4);
  CHECK(general.users[1].fair_quanta == 0);
  CHECK(s.users[0].fair_quanta == Approx(192));  // the sums over the pools
  CHECK(s.users[1].fair_quanta == Approx(64.0 * 2 / 3));
  CHECK(s.users[3].fair_quanta == 0);
  CHECK(s.users[3].demand_quanta == 0);
  CHECK(s.unplaced_jobs == 1);
  CHECK(progress_line(s, {"alice", "bob", "carol", "dave"}, 8, 0, 4)
            .find("quanta 20/256 (8%) [bigmem 4/64, general 16/192]") != std::string::npos);

  const auto r = compute_report(rec, jobs, {});
  REQUIRE(r.pools.size() == 2);
  CHECK(r.pools.at("general").mean_total_quanta == Approx(192));
  REQUIRE(r.pools.at("general").users.size() == 1);
  CHECK(r.pools.at("general").users[0].user == "alice");
  CHECK(r.pools.at("general").users[0].mean_held_quanta == Approx(16));
  CHECK(r.pools.at("general").users[0].mean_fair_quanta == Approx(192));
  REQUIRE(r.pools.at("bigmem").users.size() == 2);
  CHECK(r.pools.at("bigmem").users[0].user == "bob");
  CHECK(r.pools.at("bigmem").users[1].user == "carol");
  CHECK(r.utilization_by_pool.at("general") == Approx(16.0 / 192));
  CHECK(r.most_unplaced_jobs == 1);
  const auto text = render_report(r);
  CHECK(text.find("\nPer nodepool (fair share against the pool's own quanta)\n"
                  "  pool             quanta up   util  user            mean held  mean fair  held/fair\n") !=
        std::string::npos);
  CHECK(text.find("  general              192.0   8.3%  alice                16.0      192.0       0.08\n") !=
        std::string::npos);
  CHECK(text.find("  bigmem                64.0   6.2%  bob                   0.0       42.7       0.00\n"
                  "                                     carol                 4.0       21.3       0.19\n") !=
        std::string::npos);
  CHECK(text.find("pool.general.user.alice.mean_fair_quanta = 192.000\n") != std::string::npos);
  CHECK(text.find("pool.bigmem.user.bob.mean_fair_quanta = 42.667\n") != std::string::npos);
  CHECK(text.find("pool.bigmem.user.carol.mean_fair_quanta = 21.333\n") != std::string::npos);
  CHECK(text.find("pool.bigmem.mean_total_quanta = 64.000\n") != std::string::npos);
  CHECK(text.find("pool.bigmem.quantum_mb = 4096\n") != std::string::npos);
  CHECK(text.find("pool.general.quantum_mb = 1024\n") != std::string::npos);
  CHECK(text.find(" samples, quantum per nodepool: bigmem 4096 MB general 1024 MB\n") != std::string::npos);
  CHECK(text.find("most_unplaced_jobs = 1\n") != std::string::npos);
  CHECK(text.find("  per nodepool: bigmem 6.2% general 8.3%\n") != std::string::npos);
  CHECK(text.find("up to 1 job(s) at a time were in no known pool yet") != std::string::npos);

  // The plot: one allocation panel per pool, and a utilization line per pool.
  const auto svg = render_svg(rec, "two pools");
  CHECK(svg.find(">quanta in general</text>") != std::string::npos);
  CHECK(svg.find(">quanta in bigmem</text>") != std::string::npos);
  CHECK(svg.find(">nodepool bigmem</text>") != std::string::npos);
  CHECK(svg.find("height='770.0'") != std::string::npos);  // 50 + 2 x (200 + 60) + 150 + 50
  // general: quanta up + alice (fair, held); bigmem: quanta up + bob, carol; utilization: one per pool.
  std::size_t lines = 0;
  for (auto at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++lines;
  CHECK(lines == 3 + 5 + 2);
}

TEST_CASE("recorder: a class naming no nodepool is placed where the RM put its work") {
  recorder rec{{"alice", "dave"}, two_pool_classes(), 1024};
  const auto nodes = two_pools();
  msg::rm_state st;
  st.jobs.push_back(
      js("a1", {share("s1", "g1", 4), share("s2", "g1", 4), share("s3", "g1", 4), share("s4", "g1", 4)}));
  st.jobs.push_back(js("d1", {}));  // listed, waiting
  std::vector<job_view> jobs = {jv("a1", "alice", "normal", 300), jv("d1", "dave", "anywhere", 5)};
  rec.sample_now(0, jobs, &st, &nodes, 8);
  CHECK(rec.samples().back().unplaced_jobs == 1);
  // dave's second job of the class gets a process on g2: the class is general's, and d1 with it.
  st.jobs.push_back(js("d2", {share("s6", "g2", 4)}));
  jobs.push_back(jv("d2", "dave", "anywhere", 1));
  rec.sample_now(1000, jobs, &st, &nodes, 8);
  const auto& s = rec.samples().back();
  CHECK(s.unplaced_jobs == 0);
  // general: normal wants 1200, anywhere 5 x 4 (1 GB quantum) + 1 x 4 = 24: satisfied; alice the other 168.
  CHECK(s.pools.at("general").users[1].demand_quanta == Approx(24));
  CHECK(s.pools.at("general").users[1].fair_quanta == Approx(24));
  CHECK(s.pools.at("general").users[0].fair_quanta == Approx(168));
  // d1 stays placed once d2 is gone: the class's pool is remembered.
  st.jobs.pop_back();
  jobs.pop_back();
  rec.sample_now(2000, jobs, &st, &nodes, 8);
  CHECK(rec.samples().back().unplaced_jobs == 0);
  CHECK(rec.samples().back().pools.at("general").users[1].fair_quanta == Approx(20));
}

TEST_CASE(
    "recorder: work the RM has not listed, and a job no machine can hold, want no fair share (issue 51)") {
  recorder rec{{"alice", "bob", "dave"}, embedded_default_classes(), 1024};
  msg::rm_nodes nodes;
  for (const char* name : {"n1", "n2"}) {
    msg::node_report r;
    r.node = name;
    r.pool = r.nodepool = "--default--";
    r.state = msg::node_state::up;
    r.memory_mb = 32768;
    r.quanta = 32;
    r.free_quanta = 32;
    nodes.nodes.push_back(r);
  }
  msg::rm_state st;
  st.jobs.push_back(js("a1", {}));
  st.jobs.push_back(js("b1", {}));  // 48 GB: order 48 on machines of 32 quanta
  std::vector<job_view> jobs = {jv("a1", "alice", "normal", 300), jv("b1", "bob", "normal", 300),
                                jv("d1", "dave", "normal", 300)};  // d1: not in rm.state yet
  jobs[1].memory_mb = 49152;
  rec.sample_now(0, jobs, &st, &nodes, 2);
  // Only alice's job counts: 64 quanta, all hers. Before, bob's took half and dave's a third of the class.
  const auto& s = rec.samples().back();
  CHECK(s.users[0].fair_quanta == Approx(64));
  CHECK(s.users[1].fair_quanta == 0);
  CHECK(s.users[1].demand_quanta == 0);
  CHECK(s.users[1].demand_processes == 0);
  CHECK(s.users[2].fair_quanta == 0);
}
