// Equivalence of the scheduler's incremental bookkeeping (issue 3's performance work): what it keeps
// between rounds to avoid redoing work (the tie-break orders of machines, jobs and users, the plan's
// per-job share lists, apply_work's matching of processes to shares) must never change a decision.
//
// Two schedulers built alike follow the same seeded random sequence of inputs: work maps from the
// orchestrator model of tools/bench/workload.hpp, perturbed at random (submission times and users
// changed, work vanishing and coming back under the same id, completions, processes vanishing or ending,
// host lists, repeated unchanged maps) and machine events (down and back, vary-off/on, blacklist, new
// machines whose names sort between the others, quiesced, resized, holding another pool's processes,
// forgotten). Before every call the second one forgets every index and cache (drop_caches()), so it
// rebuilds them from its model each time, as a scheduler starting from scratch would. Every round their plans
// must be identical, and so must every job's explanation and the users' non-preemptable holdings. The plan's
// changes (plan_changed_entries, plan_removed_jobs) applied to the plan before give the plan after, for both,
// and the kept one reports no entry that did not change. With one change a round (delta maps), the same holds
// for How Much's kept class splits.
#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/nodepool_scheduler.hpp"
#include "tests/core/random_spec.hpp"
#include "tools/bench/workload.hpp"

using namespace rmbus;
using namespace rmbus::core;

namespace {

// The scenarios: small clusters, or larger ones (more ties in every order).
bench::workload_spec random_spec(std::uint32_t seed, bool larger) {
  test::spec_ranges r;
  r.min_nodes = larger ? 100 : 3;
  r.max_nodes = larger ? 200 : 30;
  r.min_jobs = larger ? 200 : 4;
  r.max_jobs = larger ? 400 : 60;
  r.max_users = 8;
  r.max_fixed_percent = 20;
  r.max_reserve_percent = 10;
  r.max_last_arrival_round = 6;
  return test::random_spec(seed, r);
}

// Both schedulers get exactly the same calls; `scratch` forgets its caches before each one.
struct pair_of_schedulers {
  nodepool_scheduler kept;
  nodepool_scheduler scratch;

  explicit pair_of_schedulers(const scheduler_config& cfg) : kept("default", cfg, "p"), scratch("default", cfg, "p") {}

  template <class F>
  void both(F&& call) {
    call(kept);
    scratch.drop_caches();
    call(scratch);
  }
};

void require_same(const nodepool_scheduler& a, const nodepool_scheduler& b, const schedule_plan& pa,
                  const schedule_plan& pb) {
  REQUIRE(pa.jobs.size() == pb.jobs.size());
  for (std::size_t i = 0; i < pa.jobs.size(); ++i) {
    const auto& x = pa.jobs[i];
    const auto& y = pb.jobs[i];
    INFO("job " << x.id << " / " << y.id << ": given " << x.given << " / " << y.given << ", shares "
                << x.shares.size() << " / " << y.shares.size() << ", reason " << x.reason_text << " / "
                << y.reason_text << ", user " << x.user << " / " << y.user);
    REQUIRE(x == y);
  }
  REQUIRE(pa == pb);
  for (const auto& jp : pa.jobs) {
    INFO("job " << jp.id);
    REQUIRE(a.explain(jp.id).text() == b.explain(jp.id).text());
  }
  REQUIRE(a.nonpreemptable_mb_by_user() == b.nonpreemptable_mb_by_user());
}

// Both apply `map` and schedule a round at `now_ms` (a settling one when `settling`); their plans must be the
// same. Returns them (kept, scratch).
std::pair<schedule_plan, schedule_plan> round_of_both(pair_of_schedulers& p, const work_map& map,
                                                      std::int64_t now_ms, bool settling = false) {
  p.both([&](nodepool_scheduler& s) { s.apply_work(map); });
  round_input in;
  in.now_ms = now_ms;
  in.settling = settling;
  schedule_plan plan_kept, plan_scratch;
  p.both([&](nodepool_scheduler& s) { (&s == &p.kept ? plan_kept : plan_scratch) = s.schedule(in); });
  require_same(p.kept, p.scratch, plan_kept, plan_scratch);
  return {plan_kept, plan_scratch};
}

// Perturbs the orchestrator's map the way a real one may change between rounds.
work_map perturb(const work_map& map, std::mt19937& rng, const std::vector<machine_report>& machines, int users) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  work_map out = map;
  if (out.empty()) return out;
  const int edits = pick(0, 4);
  for (int e = 0; e < edits; ++e) {
    auto it = out.begin();
    std::advance(it, pick(0, static_cast<int>(out.size()) - 1));
    auto& w = it->second;
    switch (pick(0, 7)) {
      case 0: w.submitted_ms += pick(-20000, 20000); break;  // resubmitted: its age changes
      case 1: w.user = user_id("u" + std::to_string(pick(0, users))); break;
      case 2: out.erase(it); break;                         // vanishes (comes back next round)
      case 3: w.state = work_state::completed; break;
      case 4:
        if (!w.processes.empty()) w.processes.erase(w.processes.begin() + pick(0, static_cast<int>(w.processes.size()) - 1));
        break;
      case 5:
        if (!w.processes.empty()) w.processes[static_cast<std::size_t>(pick(0, static_cast<int>(w.processes.size()) - 1))].state = process_state::ended;
        break;
      case 6: {
        w.hosts.clear();
        for (int h = pick(1, 3); h > 0; --h)
          w.hosts.push_back(machines[static_cast<std::size_t>(pick(0, static_cast<int>(machines.size()) - 1))].name.str());
        break;
      }
      default:
        if (w.processes.size() > 1) std::swap(w.processes.front(), w.processes.back());  // listed in another order
        break;
    }
  }
  return out;
}

void machine_event(pair_of_schedulers& p, std::mt19937& rng, std::vector<machine_report>& machines, int round) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const auto& m = machines[static_cast<std::size_t>(pick(0, static_cast<int>(machines.size()) - 1))];
  switch (pick(0, 13)) {
    case 0: p.both([&](nodepool_scheduler& s) { s.machine_down(m.name); }); break;
    case 1: p.both([&](nodepool_scheduler& s) { s.update_machine(m); }); break;  // back up
    case 2: p.both([&](nodepool_scheduler& s) { s.vary_off(m.name); }); break;
    case 3: p.both([&](nodepool_scheduler& s) { s.vary_on(m.name); }); break;
    case 4: {
      const bool on = pick(0, 1) == 1;
      p.both([&](nodepool_scheduler& s) { s.set_blacklisted(m.name, on); });
      break;
    }
    case 5: {
      // A new machine whose name sorts between the others.
      machine_report r = m;
      r.name = machine_id(m.name.str() + "-new" + std::to_string(round));
      r.ip.clear();
      machines.push_back(r);
      p.both([&](nodepool_scheduler& s) { s.update_machine(r); });
      break;
    }
    case 6: {
      machine_report r = m;
      r.quiesced = pick(0, 1) == 1;
      p.both([&](nodepool_scheduler& s) { s.update_machine(r); });
      break;
    }
    case 7: {
      // Reported with more or less memory (a smaller one evicts what no longer fits).
      machine_report r = m;
      r.memory_mb = m.memory_mb / 2 + static_cast<std::uint64_t>(pick(0, 2)) * m.memory_mb / 2;
      p.both([&](nodepool_scheduler& s) { s.update_machine(r); });
      break;
    }
    case 8: {
      const std::map<machine_id, int> per_node{{m.name, pick(0, 2)}};
      p.both([&](nodepool_scheduler& s) { s.set_foreign_processes(per_node); });
      break;
    }
    case 9:
      // Forgotten when it holds nothing (the machines after it are renumbered); a later event brings it back.
      p.both([&](nodepool_scheduler& s) { s.forget_machines({m.name}); });
      break;
    default: break;  // most rounds: no machine event
  }
}

// A scheduler's plan rebuilt from the changes it reports: the previous one, removed jobs erased, changed
// entries replaced. Returns how many entries were reported changed, and how many of those had not.
std::pair<std::size_t, std::size_t> replay(std::map<job_id, job_plan>& plan, const nodepool_scheduler& s, const schedule_plan& now) {
  for (const auto& id : s.plan_removed_jobs()) REQUIRE(plan.erase(id) == 1);
  std::size_t same = 0;
  for (auto k : s.plan_changed_entries()) {
    auto it = plan.find(now.jobs.at(k).id);
    if (it != plan.end() && it->second == now.jobs.at(k)) ++same;
    plan[now.jobs.at(k).id] = now.jobs.at(k);
  }
  REQUIRE(plan.size() == now.jobs.size());
  std::size_t k = 0;
  for (const auto& [id, j] : plan) REQUIRE(j == now.jobs[k++]);
  return {s.plan_changed_entries().size(), same};
}

// Every job of every round counted, and those reported changed by the kept scheduler.
struct compared_counts {
  std::size_t changed = 0;
  std::size_t unchanged_reported = 0;  // reported changed, equal to the version before
  int partial_rounds = 0;              // rounds that reported fewer entries than the plan holds
};

int run_pair(const bench::workload_spec& spec, int rounds, compared_counts* counts = nullptr) {
  auto w = bench::generate_workload(spec);
  pair_of_schedulers p(w.config);
  std::vector<machine_report> machines = w.machines;
  for (const auto& m : machines) p.both([&](nodepool_scheduler& s) { s.update_machine(m); });
  bench::orchestrator_model orch(w.arrivals);
  std::mt19937 rng(static_cast<std::uint32_t>(spec.seed * 7919 + 13));
  int compared = 0;
  work_map last;
  std::map<job_id, job_plan> replay_kept, replay_scratch;
  for (int r = 0; r < rounds; ++r) {
    INFO("round " << r);
    machine_event(p, rng, machines, r);
    // Now and then the previous map again, unchanged (the scheduler may skip an unchanged round).
    const bool repeat = r > 0 && std::uniform_int_distribution<int>(0, 4)(rng) == 0;
    const work_map map = repeat ? last : perturb(orch.begin_round(r), rng, machines, spec.users);
    const auto [plan_kept, plan_scratch] = round_of_both(p, map, orch.now_ms());
    const auto [changed, same] = replay(replay_kept, p.kept, plan_kept);
    replay(replay_scratch, p.scratch, plan_scratch);
    if (counts != nullptr) {
      counts->changed += changed;
      counts->unchanged_reported += same;
      counts->partial_rounds += changed < plan_kept.jobs.size() ? 1 : 0;
    }
    compared += static_cast<int>(plan_kept.jobs.size());
    if (!repeat) orch.observe(plan_kept);
    last = map;
  }
  return compared;
}

// One change a round, as delta work maps bring them: after a few rounds of the orchestrator's own maps, each
// round edits one item of the last map (a completion, an item gone, a job moved to another user, a job
// submitted at another time, so that its age moves among its user's jobs, a new job), and now and then the
// orchestrator acts on the plan. Most fair-share classes keep every input then, and How Much takes their
// splits as kept (how_much_cache), and in a class split again most users' splits, and puts the jobs of the
// users the change did not touch in order from the kept split. Returns the class splits and the users'
// splits the kept scheduler reused, the splits it put in order from its kept one, and its plan merges done
// in place. The plans' reported changes replay as in run_pair.
struct one_change_counts {
  std::uint64_t classes_reused = 0, users_reused = 0, splits_edited = 0, merges_in_place = 0,
                merges_logged = 0;
};
one_change_counts run_pair_one_change(const bench::workload_spec& spec, int rounds) {
  auto w = bench::generate_workload(spec);
  pair_of_schedulers p(w.config);
  for (const auto& m : w.machines) p.both([&](nodepool_scheduler& s) { s.update_machine(m); });
  bench::orchestrator_model orch(w.arrivals);
  std::mt19937 rng(static_cast<std::uint32_t>(spec.seed * 104729 + 7));
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  work_map map;
  std::map<job_id, job_plan> replay_kept, replay_scratch;
  int added = 0;
  for (int r = 0; r < rounds; ++r) {
    INFO("round " << r);
    if (r < 3) {
      map = orch.begin_round(r);
    } else if (!map.empty()) {
      auto it = map.begin();
      std::advance(it, pick(0, static_cast<int>(map.size()) - 1));
      switch (pick(0, 5)) {
        case 0: it->second.state = work_state::completed; break;
        case 1: map.erase(it); break;
        case 2: it->second.user = user_id("u" + std::to_string(pick(0, spec.users))); break;
        case 3:
          it->second.submitted_ms += pick(-20000, 20000);
          break;
        default: {  // a new job: a copy of this one under a new id, with no processes
          work_item copy = it->second;
          copy.id = job_id("added-" + std::to_string(++added));
          copy.processes.clear();
          copy.submitted_ms += pick(0, 5000);
          map[copy.id] = copy;
          break;
        }
      }
    }
    const auto [plan_kept, plan_scratch] = round_of_both(p, map, orch.now_ms());
    replay(replay_kept, p.kept, plan_kept);
    replay(replay_scratch, p.scratch, plan_scratch);
    if (r < 3 || pick(0, 3) == 0) orch.observe(plan_kept);
  }
  return {p.kept.how_much_splits_reused(), p.kept.how_much_users_reused(), p.kept.how_much_splits_edited(),
          p.kept.plan_merges_in_place(), p.kept.plan_merges_logged()};
}

// Classes `normal` (the default) and `urgent` (served first), both fair share, in one pool, quantum 1 GB;
// a job of either may start ten processes before one has initialized.
scheduler_config urgent_and_normal() {
  scheduler_config cfg;
  cfg.settings.quantum_mb = 1024;
  cfg.nodepools.push_back(nodepool_def{});
  cfg.nodepools.back().name = "default";
  resource_class normal;
  normal.name = "normal";
  normal.nodepool = "default";
  normal.is_default = true;
  normal.initialization_cap = 10;
  resource_class urgent = normal;
  urgent.name = "urgent";
  urgent.is_default = false;
  urgent.priority = 1;
  cfg.classes = {normal, urgent};
  return cfg;
}

// Machine m0, 3 GB: three quanta.
void add_machine_of_3_gb(pair_of_schedulers& p) {
  p.both([&](nodepool_scheduler& s) { s.update_machine({machine_id("m0"), "", 3 * 1024, false}); });
}

// A job of user ann in class `cls`, one 1 GB process per work item, 100 items.
work_item one_gb_job(const std::string& id, const std::string& cls, std::int64_t submitted,
                     int max_processes) {
  work_item w;
  w.id = job_id(id);
  w.user = user_id("ann");
  w.class_name = cls;
  w.memory_mb = 1024;
  w.items_total = 100;
  w.submitted_ms = submitted;
  w.max_processes = max_processes;
  return w;
}

}  // namespace

TEST_CASE("How Much's kept splits: one change a round decides exactly what computing every split decides") {
  std::uint64_t classes_reused = 0, users_reused = 0, splits_edited = 0, merges_in_place = 0,
                merges_logged = 0;
  for (std::uint32_t seed = 1; seed <= 60; ++seed) {
    auto spec = random_spec(seed, seed % 4 == 0);
    spec.users = std::max(spec.users, 3);
    INFO("seed " << seed << ": " << spec.nodes << " nodes, " << spec.jobs << " jobs");
    const auto counts = run_pair_one_change(spec, 14);
    classes_reused += counts.classes_reused;
    users_reused += counts.users_reused;
    splits_edited += counts.splits_edited;
    merges_in_place += counts.merges_in_place;
    merges_logged += counts.merges_logged;
  }
  // The kept splits were taken, often: otherwise the comparison would say nothing about them.
  CHECK(classes_reused > 300);
  CHECK(users_reused > 300);
  CHECK(splits_edited > 100);
  // So were the plan's entries edited in place when one job came or went (plan_keeper::merge_in_place),
  // most often found from the model's log of ids (merge_logged).
  CHECK(merges_in_place > 200);
  CHECK(merges_logged > 200);
}

TEST_CASE("a job gone and back under its id in another slot between two rounds gets its entry built anew") {
  // Two maps applied between rounds: A leaves and C takes A's slot, then A comes back into a new slot. The
  // plan's entry for A must be A's, as a scheduler rebuilding its plan from scratch lists it.
  scheduler_config cfg;
  cfg.settings.quantum_mb = 1024;
  cfg.nodepools.push_back(nodepool_def{});
  cfg.nodepools.back().name = "default";
  resource_class fair;
  fair.name = "normal";
  fair.policy = policy::fair_share;
  fair.nodepool = "default";
  fair.is_default = true;
  cfg.classes.push_back(fair);
  pair_of_schedulers p(cfg);
  for (int i = 0; i < 4; ++i)
    p.both([&](nodepool_scheduler& s) {
      s.update_machine({machine_id("m" + std::to_string(i)), "", 8 * 1024, false});
    });
  auto item = [](const std::string& id, const std::string& user, std::int64_t submitted, std::uint64_t gb) {
    work_item w;
    w.id = job_id(id);
    w.user = user_id(user);
    w.memory_mb = gb * 1024;
    w.items_total = 100;
    w.submitted_ms = submitted;
    return w;
  };
  work_map first{{job_id("A"), item("A", "ann", 1, 2)}, {job_id("B"), item("B", "bob", 2, 1)}};
  work_map between{{job_id("B"), item("B", "bob", 2, 1)}, {job_id("C"), item("C", "cat", 3, 4)}};
  work_map back = between;
  back[job_id("A")] = item("A", "ann", 4, 3);
  std::int64_t now = 1000;
  p.both([&](nodepool_scheduler& s) { s.apply_work(first); });
  const schedule_plan kept_first = p.kept.schedule({now, {}});
  p.scratch.schedule({now, {}});
  const auto logged_before = p.kept.plan_merges_logged();
  p.both([&](nodepool_scheduler& s) { s.apply_work(between); });
  p.both([&](nodepool_scheduler& s) { s.apply_work(back); });
  now += 10000;
  const schedule_plan kept = p.kept.schedule({now, {}});
  p.scratch.drop_caches();
  const schedule_plan& scratch = p.scratch.schedule({now, {}});
  CHECK(p.kept.plan_merges_logged() == logged_before + 1);
  require_same(p.kept, p.scratch, kept, scratch);
  const auto* a = kept.find(job_id("A"));
  REQUIRE(a != nullptr);
  CHECK(a->user == user_id("ann"));
  CHECK(a->order == 3);
  CHECK(kept_first.find(job_id("A"))->order == 2);
}

TEST_CASE("How Much's tables follow every change of a machine in rounds where no job changes") {
  // How Much keeps its walk of the machines from round to round while no machine changed
  // (cluster_model::machine_changes). Here the work map never changes, so nothing but the machine events
  // below makes the kept scheduler walk its machines again: an event that did not count would leave its
  // tables as they were, and its plan would differ from the one computed from scratch. Fixed-share work
  // holds machines too, so that each event moves what is free for fair-share work and for it.
  scheduler_config cfg = urgent_and_normal();
  resource_class fixed;
  fixed.name = "fixed";
  fixed.policy = policy::fixed_share;
  fixed.nodepool = "default";
  fixed.priority = 0;
  cfg.classes.push_back(fixed);
  pair_of_schedulers p(cfg);
  const auto machine = [](const std::string& name, std::uint64_t gb, bool quiesced = false) {
    return machine_report{machine_id(name), "", gb * 1024, quiesced};
  };
  for (int i = 0; i < 4; ++i)
    p.both([&](nodepool_scheduler& s) { s.update_machine(machine("m" + std::to_string(i), 3)); });
  work_map map;
  map[job_id("a")] = one_gb_job("a", "normal", 1, 0);  // wants more than the cluster holds
  map[job_id("b")] = one_gb_job("b", "urgent", 2, 4);
  map[job_id("f")] = one_gb_job("f", "fixed", 3, 2);
  std::int64_t now = 1000;
  for (int r = 0; r < 3; ++r) round_of_both(p, map, now += 10000);
  const auto given_a = [](const schedule_plan& plan) { return plan.find(job_id("a"))->given; };
  const int before = given_a(round_of_both(p, map, now += 10000).first);

  std::vector<machine_id> forgotten;
  const std::vector<std::pair<std::string, std::function<void(nodepool_scheduler&)>>> events{
      {"vary off", [](nodepool_scheduler& s) { s.vary_off(machine_id("m1")); }},
      {"vary on", [](nodepool_scheduler& s) { s.vary_on(machine_id("m1")); }},
      {"down", [](nodepool_scheduler& s) { s.machine_down(machine_id("m2")); }},
      {"back up", [&](nodepool_scheduler& s) { s.update_machine(machine("m2", 3)); }},
      {"blacklisted", [](nodepool_scheduler& s) { s.set_blacklisted(machine_id("m3"), true); }},
      {"blacklist lifted", [](nodepool_scheduler& s) { s.set_blacklisted(machine_id("m3"), false); }},
      {"quiesced", [&](nodepool_scheduler& s) { s.update_machine(machine("m0", 3, true)); }},
      {"quiesce lifted", [&](nodepool_scheduler& s) { s.update_machine(machine("m0", 3)); }},
      {"grown", [&](nodepool_scheduler& s) { s.update_machine(machine("m1", 6)); }},
      {"shrunk", [&](nodepool_scheduler& s) { s.update_machine(machine("m1", 2)); }},
      {"another pool's processes",
       [](nodepool_scheduler& s) {
         s.set_foreign_processes({{machine_id("m2"), 1}});
       }},
      {"they ended", [](nodepool_scheduler& s) { s.set_foreign_processes({}); }},
      {"a quiesced machine, that gets nothing",
       [&](nodepool_scheduler& s) { s.update_machine(machine("m11", 3, true)); }},
      {"a new machine", [&](nodepool_scheduler& s) { s.update_machine(machine("m10", 3)); }},
      {"the quiesced one forgotten (the new one's slot moves)",
       [&](nodepool_scheduler& s) { forgotten = s.forget_machines({machine_id("m11")}).forgotten; }},
  };
  std::map<std::string, int> given_after;
  for (const auto& [what, event] : events) {
    INFO("after: " << what);
    p.both(event);
    given_after[what] = given_a(round_of_both(p, map, now += 10000).first);
    round_of_both(p, map, now += 10000);  // and the round after, with nothing changed
  }
  // The scenario is one where the machines decide the counts: taking one away and giving it back moves them.
  CHECK(given_after["vary off"] < before);
  CHECK(given_after["vary on"] > given_after["vary off"]);
  CHECK(given_after["grown"] > given_after["quiesce lifted"]);
  CHECK(forgotten == std::vector<machine_id>{machine_id("m11")});
}

TEST_CASE("incremental bookkeeping decides exactly what a scheduler rebuilding every index each round decides") {
  int compared = 0;
  compared_counts counts;
  for (std::uint32_t seed = 1; seed <= 120; ++seed) {
    const auto spec = random_spec(seed, false);
    INFO("seed " << seed << ": " << spec.nodes << " nodes, " << spec.jobs << " jobs");
    compared += run_pair(spec, 12, &counts);
  }
  // The scenarios hold work: otherwise the comparison would pass vacuously.
  CHECK(compared > 10000);
  // The kept plan reports exactly what changed: no entry equal to its version before (the workload churns
  // most jobs in most rounds; rounds that change little report little).
  CHECK(counts.changed > 1000);
  CHECK(counts.unchanged_reported == 0);
  CHECK(counts.partial_rounds > 300);
}

TEST_CASE("incremental bookkeeping on larger clusters (more ties in every order)") {
  int compared = 0;
  for (std::uint32_t seed = 501; seed <= 506; ++seed) {
    const auto spec = random_spec(seed, true);
    INFO("seed " << seed << ": " << spec.nodes << " nodes, " << spec.jobs << " jobs");
    compared += run_pair(spec, 10);
  }
  CHECK(compared > 5000);
}

TEST_CASE("a class left out of a round keeps no stale age order: its jobs are ordered by their ages of now") {
  // Round 1 splits class `normal` (A older than B), a more urgent class taking every quantum. In round 2
  // `normal` wants nothing, so it is not split, while B is submitted earlier than A. In round 3 the
  // urgent job is gone: the three quanta go to A and B, one each, and the third to the older, now B. A
  // kept split may give the jobs their old order only where the model's log since that split shows no
  // change of age: the log of round 2 must count for `normal` too.
  pair_of_schedulers p(urgent_and_normal());
  add_machine_of_3_gb(p);
  const work_map first{{job_id("A"), one_gb_job("A", "normal", 10, 0)},
                       {job_id("B"), one_gb_job("B", "normal", 20, 0)},
                       {job_id("U"), one_gb_job("U", "urgent", 5, 0)}};
  // max_processes -1: no more than it holds, which is nothing.
  const work_map second{{job_id("A"), one_gb_job("A", "normal", 10, -1)},
                        {job_id("B"), one_gb_job("B", "normal", 1, -1)},
                        {job_id("U"), one_gb_job("U", "urgent", 5, 0)}};
  const work_map third{{job_id("A"), one_gb_job("A", "normal", 10, 0)},
                       {job_id("B"), one_gb_job("B", "normal", 1, 0)}};
  round_of_both(p, first, 1000);
  round_of_both(p, second, 11000);
  const schedule_plan last = round_of_both(p, third, 21000).first;
  REQUIRE(last.find(job_id("A")) != nullptr);
  REQUIRE(last.find(job_id("B")) != nullptr);
  CHECK(last.find(job_id("B"))->given == 2);
  CHECK(last.find(job_id("A"))->given == 1);
  CHECK(p.kept.how_much_splits_edited() > 0);
}

TEST_CASE("a job a settling round gave another text is written again by the next full round") {
  // A and B are counted nothing (the urgent job takes every quantum) and keep that text from round to round
  // without being written again (how_much_cache::outcome). A settling round gives them its own text; the
  // next full round, whose split of `normal` is the kept one, must write theirs again.
  pair_of_schedulers p(urgent_and_normal());
  add_machine_of_3_gb(p);
  const work_map map{{job_id("A"), one_gb_job("A", "normal", 10, 0)},
                     {job_id("B"), one_gb_job("B", "normal", 20, 0)},
                     {job_id("U"), one_gb_job("U", "urgent", 5, 0)}};
  std::int64_t now = 1000;
  schedule_plan last;
  for (const bool settling : {false, false, true, false}) {
    last = round_of_both(p, map, now, settling).first;
    now += 10000;
  }
  REQUIRE(last.find(job_id("A")) != nullptr);
  CHECK(last.find(job_id("A"))->given == 0);
  CHECK(last.find(job_id("A"))->reason_text.find("counted nothing") != std::string::npos);
  CHECK(p.kept.how_much_splits_reused() > 0);
}
