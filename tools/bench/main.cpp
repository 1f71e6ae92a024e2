// rmbus-bench: times the scheduling cycle of one top-level nodepool on the seeded workload of issue 3
// (tools/bench/workload.hpp), so that its figures compare with those measured on DUCC's own scheduler code
// (shared/ducc-rm.md section 6.3). Build in Release. Prints, per size and quantum, the first round and the
// median of rounds 5-20 for each phase, an unchanged round, each size's ratio to the size below, and the
// peak RSS. Progress goes to stderr.
//
// The round is timed through the public API: apply_work (work map intake) + schedule (the whole cycle and
// the plan). The phases inside schedule() are read from the scheduler's own stage timings (it measures
// each stage with the clock the caller gives it, set_stage_clock); "plan and the rest" is what schedule()
// spent outside the stages, mostly bringing the plan up to date.

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/nodepool_scheduler.hpp"
#include "core/work_map.hpp"
#include "tools/bench/fairness.hpp"
#include "tools/bench/workload.hpp"
#include "tools/common/version_flag.hpp"

using namespace rmbus;
using clock_type = std::chrono::steady_clock;

namespace {

struct size_spec {
  int nodes = 0;
  int jobs = 0;
  int users = 100;
};

enum phase {
  p_apply,
  p_how_much,
  p_what_of,
  p_preempt,
  p_defrag,
  p_plan,
  p_schedule,
  p_round,
  p_diff,
  n_phases
};
// How Much computes the job caps in its first sweep over the jobs: its figure includes them.
const char* phase_names[n_phases] = {"apply work map",  "how much",          "what of",    "preemption",
                                     "defragmentation", "plan and the rest", "schedule()", "round total",
                                     "(map diff only)"};

struct run_result {
  std::vector<std::vector<double>> ms;  // [round][phase]
  double unchanged_ms = 0;
  double unchanged_apply_ms = 0;  // of which apply_work
  double unchanged_diff_ms = 0;   // diff of the map with itself: finding out that nothing changed
  bool unchanged_stable = false;
  int repeats_to_fixed_point = 0;  // unchanged rounds before the plan stopped changing
  int max_order = 0;
  long shares_at_end = 0;
  long preempted = 0;
  long given = 0;
  int completed = 0;
  int pending_at_end = 0;
  std::uint64_t digest = 0;  // of every round's plan, the unchanged rounds' included
  // Fairness against churn (fairness.hpp), over the rounds (the unchanged round aside).
  double fairness_error = 0;
  double time_to_fair_s = 0;
  int fair_episodes = 0;
  int fair_unreached = 0;
  int unchanged_preempted = 0;  // preemptions in the unchanged round: must be 0
  std::vector<std::vector<double>> delta_ms;  // [delta round][phase] (--deltas)
};

// A fingerprint of a plan (every field of every job and share, reason texts included), so that two builds
// of the scheduler can be shown to decide exactly the same rounds: FNV-1a over the fields.
struct plan_digest {
  std::uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
  }
  void str(const std::string& s) {
    bytes(s.data(), s.size());
    bytes("\0", 1);
  }
  template <class T>
  void num(T v) {
    const auto x = static_cast<std::int64_t>(v);
    bytes(&x, sizeof x);
  }
  void plan(const core::schedule_plan& p) {
    for (const auto& j : p.jobs) {
      str(j.id.str());
      num(j.status), num(j.reason), str(j.reason_text), num(j.memory_mb_per_process), num(j.order),
          num(j.given);
      str(j.user.str()), str(j.class_name), num(j.demand), num(j.fair_share);
      for (const auto& s : j.shares) str(s.id.str()), str(s.node.str()), num(s.quanta), num(s.status);
    }
    const auto& c = p.counts;
    num(c.jobs), num(c.nodes), num(c.schedulable_nodes), num(c.given), num(c.preempted), num(c.evicted);
    num(c.pending_jobs), num(c.refused_jobs);
  }
};

double since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

long peak_rss_kb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// An unchanged round: the same map again, nothing confirmed or ended in between. A job still ramping up
// (doubling) legitimately grows on an unchanged map, so the map is first repeated until the plan is a
// fixed point (at most 20 times); the round timed is the one after that, and it must change nothing.
// Returns the plan of that round.
const core::schedule_plan& measure_unchanged(core::nodepool_scheduler& sched,
                                             const bench::orchestrator_model& orch,
                                             const core::work_map& last_map, const core::schedule_plan& plan,
                                             plan_digest& digest, run_result& r) {
  core::round_input in;
  in.now_ms = orch.now_ms();
  // A copy: the scheduler rewrites its plan in place.
  containers::indirect_vector<core::job_plan> last_jobs = plan.jobs;
  for (r.repeats_to_fixed_point = 1; r.repeats_to_fixed_point <= 20; ++r.repeats_to_fixed_point) {
    sched.apply_work(last_map);
    const auto& next = sched.schedule(in);
    const bool same = next.jobs == last_jobs;
    digest.plan(next);
    if (same) break;
    last_jobs = next.jobs;
  }
  auto t0 = clock_type::now();
  r.unchanged_diff_ms = core::diff(last_map, last_map).empty() ? since(t0) : -1;
  t0 = clock_type::now();
  sched.apply_work(last_map);
  r.unchanged_apply_ms = since(t0);
  const auto& again = sched.schedule(in);
  r.unchanged_ms = since(t0);
  r.unchanged_stable = again.jobs == last_jobs;
  digest.plan(again);
  return again;
}

// The phases of one round, ms: `apply` as measured by the caller, the stages from the scheduler's clock.
std::vector<double> round_phases(const core::nodepool_scheduler& sched, double apply_ms, double schedule_ms) {
  std::vector<double> ms(n_phases, 0.0);
  const auto& st = sched.last_stage_timings();
  ms[p_apply] = apply_ms;
  ms[p_schedule] = schedule_ms;
  ms[p_how_much] = st.how_much_us / 1000.0;
  ms[p_what_of] = st.what_of_us / 1000.0;
  ms[p_preempt] = st.preempt_us / 1000.0;
  ms[p_defrag] = st.defrag_us / 1000.0;
  ms[p_plan] = ms[p_schedule] - ms[p_how_much] - ms[p_what_of] - ms[p_preempt] - ms[p_defrag];
  ms[p_round] = ms[p_apply] + ms[p_schedule];
  return ms;
}

// Rounds after one change each, as delta work maps bring them (rmbus-load's events phase, at the core):
// in turn one job ends (its item leaves the map) and the same work is submitted again under a new id, then
// apply_changes and schedule(). The jobs that end are spread over the map by a fixed stride. The
// orchestrator does not answer in between: the one change is all that differs from the round before.
void measure_deltas(core::nodepool_scheduler& sched, core::work_map map, std::int64_t now_ms, int deltas,
                    plan_digest& digest, run_result& r) {
  std::vector<core::job_id> ids;
  for (const auto& [id, item] : map)
    if (!item.processes.empty()) ids.push_back(id);  // running work
  if (ids.empty()) return;
  std::size_t pick = 0;
  core::work_item ended;
  for (int d = 0; d < deltas; ++d) {
    core::job_id touched;
    if (d % 2 == 0) {
      pick = (pick + 7919) % ids.size();
      touched = ids[pick];
      auto it = map.find(touched);
      if (it == map.end()) continue;  // ended already (the stride came round)
      ended = it->second;
      map.erase(it);
    } else {
      ended.id = core::job_id("delta-" + std::to_string(d));
      ended.processes.clear();
      ended.state = core::work_state::waiting;
      ended.items_done = 0;
      ended.submitted_ms = now_ms;
      touched = ended.id;
      map.emplace(ended.id, ended);
    }
    core::round_input in;
    in.now_ms = now_ms += 1000;
    auto t0 = clock_type::now();
    sched.apply_changes(map, {touched});
    const double apply_ms = since(t0);
    t0 = clock_type::now();
    const auto& plan = sched.schedule(in);
    r.delta_ms.push_back(round_phases(sched, apply_ms, since(t0)));
    digest.plan(plan);
  }
}

run_result run_once(const size_spec& sz, std::uint64_t quantum_gb, int rounds, std::uint64_t seed,
                    bool unchanged, int deltas, core::preemption_policy preemption) {
  bench::workload_spec spec;
  spec.nodes = sz.nodes;
  spec.jobs = sz.jobs;
  spec.users = sz.users;
  spec.quantum_mb = quantum_gb * 1024;
  spec.seed = seed;
  auto w = bench::generate_workload(spec);
  w.config.settings.preemption_policy = preemption;
  core::nodepool_scheduler sched("default", w.config, "bench");
  bench::fairness_tracker fairness(w.config, w.config.settings.epoch_ms);
  sched.set_stage_clock([] {
    return std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now().time_since_epoch())
        .count();
  });
  for (const auto& m : w.machines) sched.update_machine(m);
  bench::orchestrator_model orch(w.arrivals);

  run_result r;
  plan_digest digest;
  core::work_map last_map;
  const core::schedule_plan* plan = nullptr;  // the scheduler keeps it; valid until its next round
  for (int round = 0; round < rounds; ++round) {
    const core::work_map& map = orch.begin_round(round);
    core::round_input in;
    in.now_ms = orch.now_ms();

    // What the differencing actor would spend to find the changes (core/work_map.hpp), for comparison with
    // apply_work, which reconciles the whole snapshot. Not part of the round total.
    auto t0 = clock_type::now();
    const auto edit = core::diff(last_map, map);
    const double diff_ms = since(t0);
    if (edit.empty() && round > 0) std::fprintf(stderr, "  (map unchanged)\n");

    t0 = clock_type::now();
    sched.apply_work(map);
    const double apply_ms = since(t0);

    t0 = clock_type::now();
    plan = &sched.schedule(in);
    auto ms = round_phases(sched, apply_ms, since(t0));
    ms[p_diff] = diff_ms;
    digest.plan(*plan);
    fairness.observe(*plan, bench::capacity_quanta(sched));
    r.ms.push_back(ms);
    r.given += plan->counts.given;
    r.preempted += plan->counts.preempted;
    std::fprintf(stderr, "  %d/%d q=%lluGB round %2d: %9.2f ms (jobs %d, given %d, preempted %d)\n", sz.nodes,
                 sz.jobs, static_cast<unsigned long long>(quantum_gb), round, ms[p_round], plan->counts.jobs,
                 plan->counts.given, plan->counts.preempted);
    last_map = map;
    if (round + 1 < rounds) orch.observe(*plan);
  }

  r.max_order = sched.model().max_order;
  r.completed = orch.completed_jobs();
  if (unchanged) {
    plan = &measure_unchanged(sched, orch, last_map, *plan, digest, r);
    r.unchanged_preempted = plan->counts.preempted;
  }
  // The end of the run as the rounds left it (the delta rounds below rewrite the plan in place).
  for (const auto& j : plan->jobs) {
    r.shares_at_end += static_cast<long>(j.shares.size());
    r.pending_at_end += j.reason != core::reason_code::none ? 1 : 0;
  }
  if (deltas > 0) measure_deltas(sched, last_map, orch.now_ms(), deltas, digest, r);
  r.digest = digest.h;
  r.fairness_error = fairness.mean_error();
  r.time_to_fair_s = fairness.mean_time_to_fair_s();
  r.fair_episodes = fairness.episodes();
  r.fair_unreached = fairness.unreached();
  return r;
}

std::vector<size_spec> parse_sizes(const std::string& text) {
  std::vector<size_spec> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_spec s;
    char slash1 = 0, slash2 = 0;
    std::stringstream is(item);
    is >> s.nodes >> slash1 >> s.jobs;
    if (!is || slash1 != '/' || s.nodes <= 0 || s.jobs <= 0) {
      throw CLI::ValidationError("--sizes", "expected NODES/JOBS[/USERS][,...], got '" + item + "'");
    }
    if (is >> slash2) {
      if (slash2 != '/' || !(is >> s.users) || s.users <= 0) {
        throw CLI::ValidationError("--sizes", "bad user count in '" + item + "'");
      }
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rmbus-bench: time the DUCC scheduling cycle on a seeded synthetic cluster"};
  rmbus::tools::add_version_flag(app, "rmbus-bench");
  std::string sizes_text = "1000/2000,5000/10000,10000/20000,50000/100000/1000";
  std::vector<int> quanta{15, 1};
  int rounds = 21;
  std::uint64_t seed = 1;
  int repeat = 1;
  bool no_phases = false;
  bool no_unchanged = false;
  int deltas = 0;
  std::vector<std::string> policies{"ducc"};
  app.add_option("--sizes", sizes_text, "NODES/JOBS[/USERS],... (users default 100)");
  app.add_option("--quantum", quanta, "quantum sizes in GB (comma-separated)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024));
  app.add_option("--rounds", rounds, "scheduling rounds per run (>= 6 for the 5-20 median)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--seed", seed, "workload seed");
  app.add_option("--repeat", repeat, "runs per size; figures are medians over runs")
      ->check(CLI::Range(1, 100));
  app.add_flag("--no-phases", no_phases, "print the round totals without the per-phase breakdown");
  app.add_flag("--no-unchanged", no_unchanged,
               "skip the unchanged round (its repeats of the last map), e.g. to count a run's instructions");
  app.add_option("--deltas", deltas,
                 "after the rounds, this many rounds of one change each (a job ends, then its work comes "
                 "again under a new id), applied as a delta map brings them")
      ->check(CLI::Range(0, 1000));
  app.add_option("--preemption-policy", policies,
                 "preemption policies to run, each on the same workload (ducc, sparing; comma-separated)")
      ->delimiter(',')
      ->check(CLI::IsMember({"ducc", "sparing"}));
  std::vector<size_spec> sizes;
  try {
    app.parse(argc, argv);
    sizes = parse_sizes(sizes_text);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // a bad argument exits 2, as in every tool of the project
  }

  std::printf("rmbus-bench: seed %llu, %d rounds, medians of rounds 5-%d, %d run(s) per size\n",
              static_cast<unsigned long long>(seed), rounds, std::min(rounds - 1, 20), repeat);
  for (int q : quanta) {
    double prev_median = 0;
    int prev_nodes = 0;
    for (const auto& sz : sizes) {
      std::vector<std::pair<std::string, std::vector<double>>>
          churn;  // per policy: ratio, error, time to fair
      for (const auto& policy_name : policies) {
        const auto preemption =
            policy_name == "sparing" ? core::preemption_policy::sparing : core::preemption_policy::ducc;
        std::vector<std::vector<double>> first(n_phases), med(n_phases);
        std::vector<double> per_given, errors, to_fair, preempted_runs, given_runs;
        std::vector<double> unchanged, unchanged_diff, unchanged_apply;
        std::vector<std::vector<double>> delta_med(n_phases);  // per phase: each run's median
        run_result last;
        for (int k = 0; k < repeat; ++k) {
          std::fprintf(stderr, "run %d/%d: %d nodes, %d jobs, %d users, quantum %d GB\n", k + 1, repeat,
                       sz.nodes, sz.jobs, sz.users, q);
          last = run_once(sz, static_cast<std::uint64_t>(q), rounds, seed, !no_unchanged, deltas, preemption);
          per_given.push_back(
              last.given > 0 ? static_cast<double>(last.preempted) / static_cast<double>(last.given) : 0);
          errors.push_back(last.fairness_error);
          to_fair.push_back(last.time_to_fair_s);
          preempted_runs.push_back(static_cast<double>(last.preempted));
          given_runs.push_back(static_cast<double>(last.given));
          for (int ph = 0; ph < n_phases; ++ph) {
            first[ph].push_back(last.ms[0][ph]);
            std::vector<double> later;
            for (int round = 5; round < static_cast<int>(last.ms.size()) && round <= 20; ++round) {
              later.push_back(last.ms[static_cast<std::size_t>(round)][ph]);
            }
            med[ph].push_back(median(later));
          }
          unchanged.push_back(last.unchanged_ms);
          unchanged_apply.push_back(last.unchanged_apply_ms);
          unchanged_diff.push_back(last.unchanged_diff_ms);
          for (int ph = 0; ph < n_phases && !last.delta_ms.empty(); ++ph) {
            std::vector<double> v;
            for (const auto& round : last.delta_ms) v.push_back(round[static_cast<std::size_t>(ph)]);
            delta_med[static_cast<std::size_t>(ph)].push_back(median(v));
          }
        }
        std::printf(
            "\n== %d nodes / %d jobs / %d users, quantum %d GB (max order %d), preemption policy %s ==\n",
            sz.nodes, sz.jobs, sz.users, q, last.max_order, policy_name.c_str());
        std::printf("%-18s %12s %14s\n", "phase (ms)", "first round", "median 5-20");
        for (int ph = 0; ph < n_phases; ++ph) {
          if (no_phases && ph >= p_how_much && ph <= p_plan) continue;
          std::printf("%-18s %12.2f %14.2f\n", phase_names[ph], median(first[ph]), median(med[ph]));
        }
        if (!no_unchanged) {
          std::printf(
              "%-18s %12s %14.2f  (at the fixed point reached after %d repeat(s); plan identical: %s)\n",
              "unchanged round", "", median(unchanged), last.repeats_to_fixed_point,
              last.unchanged_stable ? "yes" : "NO");
          std::printf("%-18s %12s %14.2f  (apply_work; the rest is schedule() finding nothing to do)\n",
                      "  of which apply", "", median(unchanged_apply));
          std::printf(
              "%-18s %12s %14.2f  (diff of the unchanged map: what detecting \"nothing changed\" costs)\n",
              "  of which needed", "", median(unchanged_diff));
        }
        if (!delta_med[p_round].empty()) {
          std::printf("delta round (ms, median of %zu rounds of one change):", last.delta_ms.size());
          for (int ph : {p_round, p_apply, p_how_much, p_what_of, p_preempt, p_defrag, p_plan})
            std::printf(" %s %.2f%s", phase_names[ph], median(delta_med[static_cast<std::size_t>(ph)]),
                        ph == p_plan ? "\n" : (ph == p_round ? ";" : ","));
        }
        const double m = median(med[p_round]);
        const bool first_policy = &policy_name == &policies.front();  // size ratios compare one policy
        if (first_policy && prev_median > 0) {
          const double n_ratio = static_cast<double>(sz.nodes) / prev_nodes;
          std::printf(
              "ratio to %d nodes: %.2f (size ratio %.1f, n log n ratio %.2f)\n", prev_nodes, m / prev_median,
              n_ratio,
              n_ratio * std::log(static_cast<double>(sz.nodes)) / std::log(static_cast<double>(prev_nodes)));
        }
        std::printf("shares at end %ld, given %ld, preempted %ld, jobs completed %d, pending at end %d\n",
                    last.shares_at_end, last.given, last.preempted, last.completed, last.pending_at_end);
        std::printf("plan digest %016llx (every round's plan: equal digests, equal decisions)\n",
                    static_cast<unsigned long long>(last.digest));
        std::printf(
            "churn: preempted %.0f for %.0f given = %.3f preemptions per given share; fairness error %.4f "
            "(time-averaged); time to fair share %.1f s mean (%d episodes, %d unreached at end)",
            median(preempted_runs), median(given_runs), median(per_given), median(errors), median(to_fair),
            last.fair_episodes, last.fair_unreached);
        if (!no_unchanged) std::printf("; unchanged round preempted %d", last.unchanged_preempted);
        std::printf("\n");
        churn.emplace_back(policy_name,
                           std::vector<double>{median(per_given), median(errors), median(to_fair)});
        std::printf("peak RSS so far: %.1f MB\n", peak_rss_kb() / 1024.0);
        std::fflush(stdout);
        if (first_policy) {
          prev_median = m;
          prev_nodes = sz.nodes;
        }
      }
      if (churn.size() > 1) {
        std::printf("\n-- churn against %s, %d nodes / %d jobs, quantum %d GB (medians of %d run(s)) --\n",
                    churn.front().first.c_str(), sz.nodes, sz.jobs, q, repeat);
        std::printf("%-10s %22s %16s %18s\n", "policy", "preempted/given (x)", "fair error (x)",
                    "to fair s (x)");
        const auto& base = churn.front().second;
        const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
        for (const auto& [name, v] : churn)
          std::printf("%-10s %13.3f (%5.2f) %9.4f (%5.2f) %11.1f (%5.2f)\n", name.c_str(), v[0],
                      ratio(v[0], base[0]), v[1], ratio(v[1], base[1]), v[2], ratio(v[2], base[2]));
      }
    }
  }
  return 0;
}
