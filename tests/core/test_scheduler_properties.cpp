// Property tests of the scheduling cycle (issue 3, "Quality bar"): seeded random clusters and workloads
// driven through the public nodepool_scheduler API for several rounds, with the orchestrator model of
// tools/bench/workload.hpp starting new shares, initializing them and ending preempted ones.
//
// Checked every round:
//   capacity       no machine holds more quanta than its order;
//   bookkeeping    the counts the model keeps as shares come and go (per machine: used, removing; per
//                  job: held, running, initialized and the initialization times) equal the same sums
//                  taken over the shares;
//   non-preemptable  shares of FIXED_SHARE and RESERVE work are never preempted;
//   caps           no job is counted past its cap, nor holds more active processes than its cap;
//   determinism    a copy of the scheduler scheduling the same round gives the identical plan, and a
//                  second run of the whole seeded scenario gives identical plans round by round;
// and separately:
//   stability      repeating an unchanged work map reaches a fixed point (the ramp of doubling may take
//                  a few rounds), after which the plan stays identical; no share created while the input
//                  is unchanged is preempted while it stays unchanged (no churn);
//   fairness       with one order everywhere (every machine and every process of order k: no
//                  fragmentation possible), each job's How Much count is within one nshare of its
//                  weighted max-min fair share, computed here independently by water-filling over
//                  classes (by weight), then users (equal), then jobs (equal), on the jobs' caps.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/nodepool_scheduler.hpp"
#include "tests/core/random_spec.hpp"
#include "tools/bench/workload.hpp"

using namespace rmbus;
using namespace rmbus::core;

namespace {

std::string describe(const bench::workload_spec& s) {
  std::ostringstream os;
  os << "seed " << s.seed << ": " << s.nodes << " nodes, " << s.jobs << " jobs, " << s.users << " users, quantum "
     << s.quantum_mb / 1024 << " GB, process " << s.min_process_gb << ".." << s.max_process_gb << " GB";
  return os.str();
}

bool nonpreemptable(const work_item& w) { return w.kind == work_kind::service || w.kind == work_kind::reservation; }

// The counts kept incrementally by the share bookkeeping, against the sums over the shares.
int check_bookkeeping(const cluster_model& m) {
  int checks = 0;
  for (const auto& mc : m.machines) {
    int used = 0, removing = 0;
    for (int s : mc.shares) {
      const auto& sh = m.shares[static_cast<std::size_t>(s)];
      used += sh.order;
      removing += sh.removing() ? sh.order : 0;
    }
    int reclaiming = 0;
    for (int s : mc.shares) {
      const auto& sh = m.shares[static_cast<std::size_t>(s)];
      reclaiming += sh.reclaim_at_ms > 0 ? sh.order : 0;
    }
    INFO("machine " << mc.name);
    REQUIRE(mc.used == used);
    REQUIRE(mc.removing == removing);
    REQUIRE(mc.reclaiming == reclaiming);
    ++checks;
  }
  for (const auto& j : m.jobs) {
    if (!j.live) continue;
    int held = 0, held_q = 0, running = 0, initialized = 0, timed = 0;
    std::int64_t init_sum = 0;
    for (int s : j.shares) {
      const auto& sh = m.shares[static_cast<std::size_t>(s)];
      held += !sh.removing() && !sh.blacklisted;
      held_q += !sh.removing() && !sh.blacklisted ? sh.order : 0;
      running += sh.status == share_status::running && !sh.blacklisted;
      initialized += sh.initialized;
      timed += sh.initialized && sh.init_ms > 0;
      init_sum += sh.initialized && sh.init_ms > 0 ? sh.init_ms : 0;
    }
    INFO("job " << j.item.id);
    REQUIRE(j.held == held);
    REQUIRE(j.held_q == held_q);
    REQUIRE(j.running == running);
    REQUIRE(j.initialized == initialized);
    REQUIRE(j.timed_init == timed);
    REQUIRE(j.init_ms_sum == init_sum);
    int reclaiming = 0;
    for (int s : j.shares) {
      const auto& sh = m.shares[static_cast<std::size_t>(s)];
      reclaiming += sh.reclaim_at_ms > 0;
      // A deadline is carried only by a preemptable share that is still running (not being removed).
      if (sh.reclaim_at_ms > 0) REQUIRE((!sh.removing() && !sh.fixed && sh.published));
    }
    REQUIRE(j.reclaiming == reclaiming);
    ++checks;
  }
  return checks;
}

// The per-round checks. Returns the number of checks made (so a test can assert it looked at something).
int check_round(const nodepool_scheduler& s, const schedule_plan& plan, const work_map& map) {
  int checks = check_bookkeeping(s.model());
  // Capacity.
  for (const auto& mv : s.view().machines) {
    int held = 0;
    for (const auto& h : mv.shares) held += h.share.quanta;
    INFO("machine " << mv.name << " order " << mv.quanta);
    REQUIRE(held <= mv.quanta);
    ++checks;
  }
  for (const auto& jp : plan.jobs) {
    INFO("job " << jp.id);
    const auto it = map.find(jp.id);
    // Non-preemptable work is never preempted (no node faults are injected here, so nothing is evicted).
    if (it != map.end() && nonpreemptable(it->second)) {
      for (const auto& sh : jp.shares) {
        REQUIRE(sh.status != share_status::preempt);
        REQUIRE(sh.status != share_status::evict);
        ++checks;
      }
      continue;
    }
    if (jp.status == job_status::refused) continue;
    // Caps: counted and held (active) never above the cap.
    const auto e = s.explain(jp.id);
    REQUIRE(e.known);
    int active = 0;
    for (const auto& sh : jp.shares) active += (sh.status == share_status::new_share || sh.status == share_status::running);
    INFO("cap " << e.cap.cap << " decided by " << e.cap.decided_by << ", given " << jp.given << ", active " << active);
    REQUIRE(jp.given <= e.cap.cap);
    REQUIRE(active <= e.cap.cap);
    checks += 2;
  }
  return checks;
}

struct scenario_run {
  std::vector<schedule_plan> plans;
  int checks = 0;
};

// `grace_ms` > 0 gives every FAIR_SHARE class that reclaim grace.
scenario_run run_scenario(const bench::workload_spec& spec, int rounds, bool with_checks, std::int64_t grace_ms = 0) {
  auto w = bench::generate_workload(spec);
  for (auto& c : w.config.classes)
    if (c.policy == policy::fair_share) c.reclaim_grace_ms = grace_ms;
  nodepool_scheduler s("default", w.config, "p");
  for (const auto& m : w.machines) s.update_machine(m);
  bench::orchestrator_model orch(w.arrivals);
  scenario_run out;
  for (int r = 0; r < rounds; ++r) {
    const work_map& map = orch.begin_round(r);
    s.apply_work(map);
    round_input in;
    in.now_ms = orch.now_ms();
    if (with_checks) {
      // Determinism within a run: a copy schedules the identical round.
      nodepool_scheduler copy = s;
      const auto plan = s.schedule(in);
      const auto plan_copy = copy.schedule(in);
      INFO("round " << r);
      REQUIRE(plan == plan_copy);
      out.checks += check_round(s, plan, map);
      out.plans.push_back(plan);
    } else {
      out.plans.push_back(s.schedule(in));
    }
    orch.observe(out.plans.back());
  }
  return out;
}

// Weighted max-min fair division of `total` among demands (real numbers): water-filling.
std::vector<double> water_fill(const std::vector<double>& demand, const std::vector<double>& weight, double total) {
  std::vector<double> out(demand.size(), 0.0);
  std::vector<bool> active(demand.size(), false);
  for (std::size_t i = 0; i < demand.size(); ++i) active[i] = demand[i] > 0;
  double remaining = total;
  for (;;) {
    double wsum = 0;
    for (std::size_t i = 0; i < demand.size(); ++i) wsum += active[i] ? weight[i] : 0;
    if (wsum <= 0 || remaining <= 1e-12) break;
    const double level = remaining / wsum;
    bool saturated = false;
    for (std::size_t i = 0; i < demand.size(); ++i) {
      if (active[i] && demand[i] <= level * weight[i] + 1e-9) {
        out[i] = demand[i];
        remaining -= demand[i];
        active[i] = false;
        saturated = true;
      }
    }
    if (!saturated) {
      for (std::size_t i = 0; i < demand.size(); ++i)
        if (active[i]) out[i] = level * weight[i];
      break;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("water_fill (the test's own reference) on hand examples") {
  // 30 units, weights 200:100, unbounded demand: 20 / 10
  auto r = water_fill({1000, 1000}, {200, 100}, 30);
  CHECK(r[0] == Approx(20));
  CHECK(r[1] == Approx(10));
  // 12 units, three equal, one wants 2: 2 / 5 / 5
  r = water_fill({2, 100, 100}, {1, 1, 1}, 12);
  CHECK(r[0] == Approx(2));
  CHECK(r[1] == Approx(5));
  CHECK(r[2] == Approx(5));
}

TEST_CASE("properties over random clusters: capacity, bookkeeping, non-preemptable, caps, determinism") {
  int total_checks = 0;
  long total_shares = 0;
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    const auto spec = test::random_spec(seed);
    INFO(describe(spec));
    const auto run = run_scenario(spec, 8, true);
    total_checks += run.checks;
    // Determinism across runs: the same seeded scenario gives identical plans round by round.
    if (seed % 4 == 0) {
      const auto again = run_scenario(spec, 8, false);
      REQUIRE(again.plans.size() == run.plans.size());
      for (std::size_t r = 0; r < run.plans.size(); ++r) {
        INFO("round " << r);
        REQUIRE(again.plans[r] == run.plans[r]);
      }
    }
    for (const auto& jp : run.plans.back().jobs) total_shares += static_cast<long>(jp.shares.size());
  }
  // The scenarios really allocate: otherwise every check above would pass vacuously.
  CHECK(total_checks > 10000);
  CHECK(total_shares > 1000);
}

TEST_CASE("properties under a reclaim grace: capacity, bookkeeping, determinism, and deadlines that end") {
  int total_checks = 0, rounds_with_deadlines = 0, preempted = 0;
  for (std::uint32_t seed = 1; seed <= 60; ++seed) {
    auto spec = test::random_spec(seed);
    INFO(describe(spec));
    // A grace of two orchestrator epochs (10 s each): deadlines are given and pass within the run.
    const std::int64_t grace = 20000;
    const auto run = run_scenario(spec, 12, true, grace);
    total_checks += run.checks;
    for (const auto& plan : run.plans) {
      preempted += plan.counts.preempted;
      bool any = false;
      for (const auto& jp : plan.jobs)
        for (const auto& sh : jp.shares) {
          if (sh.reclaim_at_ms == 0) continue;
          any = true;
          // still ahead (a passed deadline is preempted or dropped in its round), at most one grace ahead
          REQUIRE(sh.reclaim_at_ms > plan.now_ms);
          REQUIRE(sh.reclaim_at_ms <= plan.now_ms + grace);
          REQUIRE(sh.status != share_status::preempt);
        }
      rounds_with_deadlines += any;
    }
    if (seed % 6 == 0) {
      const auto again = run_scenario(spec, 12, false, grace);
      for (std::size_t r = 0; r < run.plans.size(); ++r) REQUIRE(again.plans[r] == run.plans[r]);
    }
  }
  // Not vacuous: deadlines were given, and preemptions still happened once they passed.
  CHECK(total_checks > 1000);
  CHECK(rounds_with_deadlines > 20);
  CHECK(preempted > 0);
}

TEST_CASE("stability: an unchanged work map reaches a fixed point and then never changes, without churn") {
  int converged_after_ramp = 0;
  for (std::uint32_t seed = 1001; seed <= 1100; ++seed) {
    const auto spec = test::random_spec(seed);
    INFO(describe(spec));
    const auto w = bench::generate_workload(spec);
    nodepool_scheduler s("default", w.config, "p");
    for (const auto& m : w.machines) s.update_machine(m);
    bench::orchestrator_model orch(w.arrivals);
    schedule_plan plan;
    const int live_rounds = 1 + static_cast<int>(seed % 6);
    for (int r = 0; r < live_rounds; ++r) {
      s.apply_work(orch.begin_round(r));
      round_input in;
      in.now_ms = orch.now_ms();
      plan = s.schedule(in);
      orch.observe(plan);
    }
    // From here the orchestrator publishes the same map every round.
    const work_map frozen = orch.begin_round(live_rounds);
    round_input in;
    in.now_ms = orch.now_ms();
    std::set<share_id> before;
    for (const auto& jp : plan.jobs)
      for (const auto& sh : jp.shares) before.insert(sh.id);
    std::vector<schedule_plan> plans;
    int fixed_at = -1;
    const int max_repeats = 16;  // ramp of doubling: log2 of the largest cap, plus a round to settle
    for (int k = 0; k < max_repeats; ++k) {
      s.apply_work(frozen);
      plans.push_back(s.schedule(in));
      if (k > 0 && plans[static_cast<std::size_t>(k)].jobs == plans[static_cast<std::size_t>(k) - 1].jobs) {
        fixed_at = k;
        break;
      }
    }
    INFO("live rounds " << live_rounds);
    REQUIRE(fixed_at > 0);
    if (fixed_at > 1) ++converged_after_ramp;
    // Once fixed, it stays fixed.
    for (int k = 0; k < 3; ++k) {
      s.apply_work(frozen);
      REQUIRE(s.schedule(in).jobs == plans.back().jobs);
    }
    // No churn: a share created while the input was unchanged is never preempted while it stays unchanged.
    for (const auto& p : plans) {
      for (const auto& jp : p.jobs) {
        for (const auto& sh : jp.shares) {
          if (before.count(sh.id) == 0) {
            INFO("job " << jp.id << " share " << sh.id);
            REQUIRE(sh.status != share_status::preempt);
          }
        }
      }
    }
  }
  CHECK(converged_after_ramp > 0);  // the ramp really was exercised
}

namespace {

// One order everywhere: every machine and every process of order k, fair-share work only. For each round,
// calls `visit(scheduler, plan, map, fair, nodes, where)` with each job's weighted max-min fair share computed independently by
// water-filling (classes by weight, then users equally, then jobs equally, on the jobs' caps).
template <class Visit>
void one_order_scenarios(std::uint32_t first_seed, std::uint32_t last_seed, Visit visit) {
  for (std::uint32_t seed = first_seed; seed <= last_seed; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    bench::workload_spec spec = test::random_spec(seed);
    const int q_gb = 1 << pick(0, 3);  // 1, 2, 4 or 8 GB
    const int k = pick(1, 4);          // the one order
    spec.quantum_mb = static_cast<std::uint64_t>(q_gb) * 1024;
    spec.node_mix = {{q_gb * k, 1}};
    spec.min_process_gb = spec.max_process_gb = q_gb * k;
    spec.fixed_percent = 0;
    spec.reserve_percent = 0;
    spec.nodes = pick(2, 40);
    INFO(describe(spec) << ", order " << k);

    const auto w = bench::generate_workload(spec);
    std::map<std::string, int> weight_of;
    for (const auto& c : w.config.classes) weight_of[c.name] = c.weight;
    nodepool_scheduler s("default", w.config, "p");
    for (const auto& m : w.machines) s.update_machine(m);
    bench::orchestrator_model orch(w.arrivals);
    for (int r = 0; r < 8; ++r) {
      const work_map& map = orch.begin_round(r);
      s.apply_work(map);
      round_input in;
      in.now_ms = orch.now_ms();
      const auto plan = s.schedule(in);

      // Independent reference: class -> user -> job water-filling on the caps, capacity = one process per
      // machine (order k everywhere).
      std::map<std::string, std::map<std::string, std::map<std::string, double>>> caps;  // class, user, job
      for (const auto& jp : plan.jobs) {
        if (jp.status == job_status::refused) continue;
        const auto& item = map.at(jp.id);
        caps[item.class_name][item.user.str()][jp.id.str()] = static_cast<double>(s.explain(jp.id).cap.cap);
      }
      std::vector<std::string> cls_names;
      std::vector<double> cls_demand, cls_weight;
      for (const auto& [c, users] : caps) {
        double d = 0;
        for (const auto& [u, jobs] : users)
          for (const auto& [j, cap] : jobs) d += cap;
        cls_names.push_back(c);
        cls_demand.push_back(d);
        cls_weight.push_back(weight_of.at(c));
      }
      const auto cls_fair = water_fill(cls_demand, cls_weight, static_cast<double>(spec.nodes));
      std::map<std::string, double> fair;  // job -> fair share in processes
      for (std::size_t ci = 0; ci < cls_names.size(); ++ci) {
        const auto& users = caps.at(cls_names[ci]);
        std::vector<double> ud, uw;
        for (const auto& [u, jobs] : users) {
          double d = 0;
          for (const auto& [j, cap] : jobs) d += cap;
          ud.push_back(d);
          uw.push_back(1);
        }
        const auto ufair = water_fill(ud, uw, cls_fair[ci]);
        std::size_t ui = 0;
        for (const auto& [u, jobs] : users) {
          std::vector<double> jd, jw;
          for (const auto& [j, cap] : jobs) {
            jd.push_back(cap);
            jw.push_back(1);
          }
          const auto jfair = water_fill(jd, jw, ufair[ui++]);
          std::size_t ji = 0;
          for (const auto& [j, cap] : jobs) fair[j] = jfair[ji++];
        }
      }
      INFO("round " << r);
      visit(s, plan, map, fair, spec.nodes, describe(spec) + ", order " + std::to_string(k) + ", round " + std::to_string(r));
      orch.observe(plan);
    }
  }
}

}  // namespace

TEST_CASE("one order everywhere: How Much is work-conserving and never counts past a cap") {
  // The counts use every machine unless the caps together ask for less:
  // sum of given == min(machines, sum of caps).
  int rounds = 0;
  one_order_scenarios(2001, 2150, [&](const nodepool_scheduler& s, const schedule_plan& plan, const work_map&,
                                      const std::map<std::string, double>&, int nodes, const std::string&) {
    std::int64_t given = 0, caps = 0;
    for (const auto& jp : plan.jobs) {
      if (jp.status == job_status::refused) continue;
      const auto cap = s.explain(jp.id).cap.cap;
      REQUIRE(jp.given <= cap);
      given += jp.given;
      caps += cap;
    }
    REQUIRE(given == std::min<std::int64_t>(nodes, caps));
    ++rounds;
  });
  CHECK(rounds == 150 * 8);
}

// This property first failed on the apportionment as implemented from DUCC's documents (three mechanisms,
// minimal cases 1-3 below); the scheduler now water-fills the deserved quanta and rounds half up
// (da5305a, e4c08df; docs/ducc-differences.md), and every seed passes. Kept strict as a regression test.
TEST_CASE("fairness: with one order everywhere, each count is within one nshare of the max-min fair share") {
  int compared = 0;
  std::vector<std::string> violations;
  one_order_scenarios(2001, 2150, [&](const nodepool_scheduler&, const schedule_plan& plan, const work_map& map,
                                      const std::map<std::string, double>& fair, int, const std::string& where) {
    for (const auto& jp : plan.jobs) {
      if (jp.status == job_status::refused) continue;
      const double f = fair.at(jp.id.str());
      if (std::abs(jp.given - f) > 1.0 + 1e-6) {
        std::ostringstream os;
        os << where << ": job " << jp.id << " class " << map.at(jp.id).class_name << " user " << map.at(jp.id).user
           << ": given " << jp.given << ", max-min fair " << f;
        violations.push_back(os.str());
      }
      ++compared;
    }
  });
  CHECK(compared > 1000);
  std::string all;
  for (const auto& v : violations) all += "\n  " + v;
  INFO(violations.size() << " of " << compared << " counts off by more than one nshare:" << all);
  CHECK(violations.empty());
}

namespace {

// A one-pool cluster of `machines` machines of `order` quanta (quantum 1 GB) and one job per class, each
// job's cap fixed at `cap` processes (initialization cap high, no doubling, no prediction, 1 thread, cap
// work items), scheduled once. Returns the How Much count per class name.
std::map<std::string, int> counts_for(int machines, int order, const std::vector<std::pair<std::string, int>>& caps) {
  auto cfg = bench::shipped_config(1024);
  for (auto& c : cfg.classes) {
    c.initialization_cap = 1000;
    c.expand_by_doubling = false;
    c.use_prediction = false;
  }
  nodepool_scheduler s("default", cfg, "p");
  for (int i = 0; i < machines; ++i) {
    s.update_machine({machine_id("m" + std::to_string(i)), "", static_cast<std::uint64_t>(order) * 1024, false});
  }
  work_map map;
  int n = 0;
  for (const auto& [cls, cap] : caps) {
    work_item it;
    it.id = job_id("j" + std::to_string(n));
    it.user = user_id("u");
    it.class_name = cls;
    it.memory_mb = static_cast<std::uint64_t>(order) * 1024;
    it.submitted_ms = n++;
    it.threads = 1;
    it.items_total = cap;
    map.emplace(it.id, it);
  }
  s.apply_work(map);
  const auto plan = s.schedule(round_input{});
  std::map<std::string, int> out;
  for (const auto& [id, it] : map) out[it.class_name] = plan.find(id)->given;
  return out;
}

// The same with every job in one class ("normal"), jobs given as (user, cap): How Much counts by job, in
// input order (which is also the submission order).
std::vector<int> job_counts_for(int machines, int order, const std::vector<std::pair<std::string, int>>& jobs) {
  auto cfg = bench::shipped_config(1024);
  for (auto& c : cfg.classes) {
    c.initialization_cap = 1000;
    c.expand_by_doubling = false;
    c.use_prediction = false;
  }
  nodepool_scheduler s("default", cfg, "p");
  for (int i = 0; i < machines; ++i) {
    s.update_machine({machine_id("m" + std::to_string(i)), "", static_cast<std::uint64_t>(order) * 1024, false});
  }
  work_map map;
  for (std::size_t n = 0; n < jobs.size(); ++n) {
    work_item it;
    it.id = job_id("j" + std::to_string(n));
    it.user = user_id(jobs[n].first);
    it.class_name = "normal";
    it.memory_mb = static_cast<std::uint64_t>(order) * 1024;
    it.submitted_ms = static_cast<std::int64_t>(n);
    it.threads = 1;
    it.items_total = jobs[n].second;
    map.emplace(it.id, it);
  }
  s.apply_work(map);
  const auto plan = s.schedule(round_input{});
  std::vector<int> out;
  for (std::size_t n = 0; n < jobs.size(); ++n) out.push_back(plan.find(job_id("j" + std::to_string(n)))->given);
  return out;
}

}  // namespace

// Minimal cases 1-3 were findings against DUCC's rounding as first implemented (reported to the lead); the
// scheduler's fixes (da5305a, e4c08df) make them pass, and they stay as regression tests.
TEST_CASE("minimal case 1 (order 1): leftover quanta must not go to the heaviest class pass after pass") {
  // 5 machines of order 1; high (weight 200) wants 1, normal (100) wants 13, low (50) wants 14.
  // Max-min fair: level 5/350 per weight unit; high saturates at 1; the other 4 split 100:50
  //   -> high 1, normal 4*100/150 = 2.67, low 4*50/150 = 1.33.
  // DUCC's apportion_qshares as documented (shared/ducc-rm.md section 1.6):
  //   pass 1: 5 qshares, W = 350: deserved floor(2.86)=2, floor(1.43)=1, floor(0.71)=0; the 2 leftover
  //           qshares go one each in sort order (weight desc) -> high 3, normal 2, low 0.
  //           high takes 1 (its cap), normal 2, low min(room 0, ...) = 0; 2 qshares left.
  //   pass 2: 2 qshares, W = 150: normal floor(1.33)=1, low floor(0.67)=0, leftover 1 -> normal 2.
  //           normal takes 2 more; nothing left for low.
  //   -> high 1, normal 4, low 0: low is 1.33 below its fair share (more than one nshare).
  // With the leftover handed out by largest remainder instead (Hamilton): pass 1 high 3, normal 1, low 1
  // -> 1/1/1; pass 2 normal 1, low 1 (largest remainder 0.67) -> 1 / 2 / 2, within one nshare of 1/2.67/1.33.
  const auto c = counts_for(5, 1, {{"high", 1}, {"normal", 13}, {"low", 14}});
  CHECK(c.at("high") == 1);
  CHECK(std::abs(c.at("normal") - 8.0 / 3) <= 1.0);
  CHECK(std::abs(c.at("low") - 4.0 / 3) <= 1.0);
}

TEST_CASE("minimal case 2 (order 4): rounding a small entitlement up to a whole process stays within one") {
  // 5 machines of order 4 (20 qshares); urgent (400) wants 1, high (200) wants 13, low (50) wants 5.
  // Max-min fair: urgent saturates at 1; the other 4 processes split 200:50 -> high 3.2, low 0.8.
  // DUCC (documented rule "if floor(t / o) is 0 but t mod o > 0, give one whole process", UIMA-3664/4275)
  // lets low take a whole order-4 process on a fraction of one in each pass: DUCC's rounding gave high 2,
  // low 2, high 1.2 below its fair share.
  const auto c = counts_for(5, 4, {{"urgent", 1}, {"high", 13}, {"low", 5}});
  CHECK(c.at("urgent") == 1);
  CHECK(std::abs(c.at("high") - 3.2) <= 1.0);
  CHECK(std::abs(c.at("low") - 0.8) <= 1.0);
}

TEST_CASE("minimal case 3 (order 1): remainder ties must not favour the same entity at user and job level") {
  // One class, 9 machines of order 1. User u0 has jobs a (wants 1), b (wants 4), c (wants 2); user u1 has
  // job d (wants 10). Max-min fair: users 4.5 / 4.5; within u0: a saturates at 1, b and c 1.75 each; d 4.5.
  // Seen on seed 2083 of the random property (u000's jobs j000002 / j000006 / j000007 got 1 / 3 / 1).
  // Mechanism (largest-remainder apportionment as committed in da5305a, before e4c08df):
  //   users: 9 qshares, deserved 4 each, the leftover ties and goes in entity order -> u0 5, u1 4;
  //   u0's jobs, pass 1: 5 qshares, deserved floor(5/3) = 1 each, the 2 leftover qshares tie and go in
  //     entity order -> a 2, b 2, c 1; a takes only 1 (its cap), b 2, c 1; one qshare left;
  //   pass 2: b and c deserve 0.5 each -> floor 0, the tie goes in entity order again -> b.
  //   -> a 1, b 3, c 1, d 4: b is 1.25 above its max-min share 1.75 (more than one nshare).
  // Fixed by computing each pass's deserved quanta by water-filling (room an entity cannot use returns to
  // the others within the same pass).
  const auto g = job_counts_for(9, 1, {{"u0", 1}, {"u0", 4}, {"u0", 2}, {"u1", 10}});
  REQUIRE(g.size() == 4);
  CHECK(g[0] == 1);
  CHECK(std::abs(g[1] - 1.75) <= 1.0);
  CHECK(std::abs(g[2] - 1.75) <= 1.0);
  CHECK(std::abs(g[3] - 4.5) <= 1.0);
}
