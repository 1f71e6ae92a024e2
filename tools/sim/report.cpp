#include "tools/sim/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>

namespace rmbus::sim {

namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Each sample stands for the time until the next; the last for nothing, unless it is alone.
std::vector<double> weights_of(const std::vector<sample>& s) {
  std::vector<double> w(s.size(), 0.0);
  for (std::size_t i = 0; i + 1 < s.size(); ++i)
    w[i] = static_cast<double>(std::max<std::int64_t>(0, s[i + 1].t_ms - s[i].t_ms));
  if (s.size() == 1) w[0] = 1;
  return w;
}

// Weighted mean of value(i) over the samples where take(i); a plain mean if their weights sum to 0.
template <class Take, class Value>
std::optional<double> weighted_mean(const std::vector<double>& w, std::size_t n, Take take, Value value) {
  double sum = 0, wsum = 0, plain = 0;
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!take(i)) continue;
    sum += w[i] * value(i);
    wsum += w[i];
    plain += value(i);
    ++count;
  }
  if (count == 0) return std::nullopt;
  if (wsum > 0) return sum / wsum;
  return plain / static_cast<double>(count);
}

std::size_t users_with_demand(const sample& s) {
  return static_cast<std::size_t>(std::count_if(s.users.begin(), s.users.end(),
                                                [](const user_sample& u) { return u.demand_quanta > 0; }));
}

}  // namespace

double nearest_rank(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = std::ceil(std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size()));
  const auto index = static_cast<std::size_t>(std::max(1.0, rank)) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

report_figures compute_report(const recorder& rec, const std::vector<job_view>& jobs, const run_info& run) {
  report_figures r;
  r.run = run;
  const auto& s = rec.samples();
  const auto w = weights_of(s);
  r.samples = s.size();
  r.states_received = rec.states_received();
  r.quantum_mb = rec.quantum_mb();
  r.preempted_shares = rec.preempted_shares();
  r.evicted_shares = rec.evicted_shares();
  r.preempt_events = rec.preempt_events();
  r.evict_events = rec.evict_events();
  r.utilization_mean =
      weighted_mean(
          w, s.size(), [&](std::size_t i) { return s[i].total_quanta > 0; },
          [&](std::size_t i) {
            return static_cast<double>(s[i].used_quanta) / static_cast<double>(s[i].total_quanta);
          })
          .value_or(0.0);
  std::set<std::string> pool_names;
  for (const auto& x : s)
    for (const auto& [name, _] : x.pools) pool_names.insert(name);
  for (const auto& name : pool_names) {
    const auto of = [&](std::size_t i) -> const pool_sample* {
      auto it = s[i].pools.find(name);
      return it == s[i].pools.end() ? nullptr : &it->second;
    };
    r.utilization_by_pool[name] =
        weighted_mean(
            w, s.size(), [&](std::size_t i) { return of(i) != nullptr && of(i)->total_quanta > 0; },
            [&](std::size_t i) {
              return static_cast<double>(of(i)->used_quanta) / static_cast<double>(of(i)->total_quanta);
            })
            .value_or(0.0);
  }
  r.fairness_error_mean =
      weighted_mean(
          w, s.size(), [&](std::size_t i) { return s[i].total_quanta > 0; },
          [&](std::size_t i) {
            double e = 0;
            for (const auto& u : s[i].users)
              e += std::abs(static_cast<double>(u.fair_held_quanta) - u.fair_quanta);
            return e / static_cast<double>(s[i].total_quanta);
          })
          .value_or(0.0);
  for (const auto& name : pool_names) {
    const auto of = [&](std::size_t i) -> const pool_sample* {
      auto it = s[i].pools.find(name);
      return it == s[i].pools.end() ? nullptr : &it->second;
    };
    auto& pf = r.pools[name];
    for (std::size_t i = 0; i < s.size(); ++i)
      if (of(i) != nullptr && of(i)->quantum_mb > 0) pf.quantum_mb = of(i)->quantum_mb;
    pf.mean_total_quanta = weighted_mean(
                               w, s.size(), [&](std::size_t i) { return of(i) != nullptr; },
                               [&](std::size_t i) { return static_cast<double>(of(i)->total_quanta); })
                               .value_or(0.0);
    for (std::size_t u = 0; u < rec.users().size(); ++u) {
      const auto wants = [&](std::size_t i) {
        const pool_sample* p = of(i);
        return p != nullptr && p->total_quanta > 0 && u < p->users.size() && p->users[u].demand_quanta > 0;
      };
      const auto held = weighted_mean(w, s.size(), wants, [&](std::size_t i) {
        return static_cast<double>(of(i)->users[u].fair_held_quanta);
      });
      if (!held) continue;  // no demand in this pool
      const auto fair =
          weighted_mean(w, s.size(), wants, [&](std::size_t i) { return of(i)->users[u].fair_quanta; });
      pf.users.push_back({rec.users()[u], *held, fair.value_or(0.0)});
    }
  }
  for (const auto& x : s) r.most_unplaced_jobs = std::max(r.most_unplaced_jobs, x.unplaced_jobs);
  r.double_booked_samples = static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](const sample& x) { return x.double_booked; }));

  for (std::size_t u = 0; u < rec.users().size(); ++u) {
    user_figures f;
    f.user = rec.users()[u];
    // Only samples in which the RM had reported its capacity: before that every fair share is 0.
    auto wants = [&](std::size_t i) { return s[i].users[u].demand_quanta > 0 && s[i].total_quanta > 0; };
    f.mean_held_quanta = weighted_mean(w, s.size(), wants, [&](std::size_t i) {
                           return static_cast<double>(s[i].users[u].fair_held_quanta);
                         }).value_or(0);
    f.mean_fair_quanta = weighted_mean(w, s.size(), wants, [&](std::size_t i) {
                           return s[i].users[u].fair_quanta;
                         }).value_or(0);
    f.mean_rm_fair_quanta = weighted_mean(w, s.size(), wants, [&](std::size_t i) {
                              return static_cast<double>(s[i].users[u].rm_fair_quanta);
                            }).value_or(0);
    auto wants_any = [&](std::size_t i) {
      return s[i].users[u].demand_processes > 0 && s[i].total_quanta > 0;
    };
    f.mean_held_processes = weighted_mean(w, s.size(), wants_any, [&](std::size_t i) {
                              return static_cast<double>(s[i].users[u].held_processes);
                            }).value_or(0);
    // Where the user ended up under contention: the last sample in which it and at least one other user
    // wanted fair-share quanta (else simply its last sample with demand).
    std::optional<std::size_t> at, last_wanting;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (!wants(i)) continue;
      last_wanting = i;
      if (users_with_demand(s[i]) >= 2) at = i;
    }
    if (!at) at = last_wanting;
    if (at) {
      f.final_processes = s[*at].users[u].held_processes;
      f.final_held_quanta = s[*at].users[u].fair_held_quanta;
      f.final_fair_quanta = s[*at].users[u].fair_quanta;
    }
    for (const auto& x : s) f.max_processes = std::max(f.max_processes, x.users[u].held_processes);
    double first_sum = 0;
    std::size_t first_n = 0;
    for (const auto& j : jobs) {
      if (j.user != f.user) continue;
      ++f.jobs;
      if (j.completed_ms && !j.refused) ++f.jobs_completed;
      if (j.first_process_ms) {
        first_sum += static_cast<double>(*j.first_process_ms - j.at_ms) / 1000.0;
        ++first_n;
      }
    }
    if (first_n > 0) f.first_process_mean_s = first_sum / static_cast<double>(first_n);
    r.users.push_back(std::move(f));
  }

  // Jobs: completion and makespan (kind "job" only: other work has no natural end).
  std::int64_t first_at = std::numeric_limits<std::int64_t>::max(), last_done = 0;
  std::size_t unfinished = 0;
  std::vector<double> first_process;
  for (const auto& j : jobs) {
    r.launch_failures += j.launch_failures;
    r.drained_early += j.drained;
    r.work_lost_items += j.lost_items;
    r.work_lost_batch_s += static_cast<double>(j.lost_batch_ms) / 1000.0;
    r.work_lost_init_s += static_cast<double>(j.lost_init_ms) / 1000.0;
    if (j.first_process_ms)
      first_process.push_back(static_cast<double>(*j.first_process_ms - j.at_ms) / 1000.0);
    else if (j.arrived && !j.refused)
      ++r.never_started;
    if (j.refused) r.refused.push_back({j.id, j.user, j.refused_reason});
    if (j.kind != messages::work_kind::job) {
      ++r.other_work;
      continue;
    }
    ++r.jobs_total;
    if (j.refused) {
      ++r.jobs_refused;
      continue;
    }
    first_at = std::min(first_at, j.at_ms);
    if (j.completed_ms) {
      ++r.jobs_completed;
      last_done = std::max(last_done, *j.completed_ms);
    } else {
      ++unfinished;
    }
  }
  if (r.jobs_completed > 0 && unfinished == 0)
    r.makespan_s = static_cast<double>(last_done - first_at) / 1000.0;
  std::sort(first_process.begin(), first_process.end());
  r.first_process_count = first_process.size();
  if (!first_process.empty()) {
    double sum = 0;
    for (double v : first_process) sum += v;
    r.first_process_mean_s = sum / static_cast<double>(first_process.size());
    r.first_process_p50_s = nearest_rank(first_process, 50);
    r.first_process_p90_s = nearest_rank(first_process, 90);
    r.first_process_max_s = first_process.back();
  }

  // Time to fair share: episodes in which a user with fair-share demand holds less than 90% of its fair
  // share (quanta are continuous here and processes whole, so exactly 100% is often out of reach).
  std::vector<double> to_fair;
  for (std::size_t u = 0; u < rec.users().size(); ++u) {
    std::optional<std::int64_t> since;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const auto& us = s[i].users[u];
      if (us.demand_quanta <= 0 || s[i].total_quanta == 0) {
        if (since) ++r.fair_share_unreached;  // its demand ended first
        since.reset();
        continue;
      }
      const bool below = static_cast<double>(us.fair_held_quanta) < 0.9 * us.fair_quanta;
      if (below && !since) since = s[i].t_ms;
      if (!below && since) {
        to_fair.push_back(static_cast<double>(s[i].t_ms - *since) / 1000.0);
        since.reset();
      }
    }
    if (since) ++r.fair_share_unreached;
  }
  std::sort(to_fair.begin(), to_fair.end());
  r.fair_share_reached = to_fair.size();
  if (!to_fair.empty()) {
    double sum = 0;
    for (double v : to_fair) sum += v;
    r.fair_share_mean_s = sum / static_cast<double>(to_fair.size());
    r.fair_share_p90_s = nearest_rank(to_fair, 90);
    r.fair_share_max_s = to_fair.back();
  }

  // Timeline: the run cut into (at most) twelve equal slices.
  if (!s.empty()) {
    const double end_s = static_cast<double>(s.back().t_ms) / 1000.0;
    const std::size_t rows = std::min<std::size_t>(12, s.size());
    const double step = rows > 0 && end_s > 0 ? end_s / static_cast<double>(rows) : 1.0;
    for (std::size_t k = 0; k < rows; ++k) {
      timeline_row row;
      row.from_s = step * static_cast<double>(k);
      row.to_s = step * static_cast<double>(k + 1);
      auto in_row = [&](std::size_t i) {
        const double t = static_cast<double>(s[i].t_ms) / 1000.0;
        return (t >= row.from_s && t < row.to_s) || (k + 1 == rows && t >= row.from_s);
      };
      bool any = false;
      row.nodes_up = std::numeric_limits<std::size_t>::max();
      for (std::size_t i = 0; i < s.size(); ++i) {
        if (!in_row(i)) continue;
        any = true;
        row.nodes_up = std::min(row.nodes_up, s[i].nodes_up);
        row.pending = std::max(row.pending, s[i].pending_jobs);
      }
      if (!any) continue;
      row.utilization =
          weighted_mean(
              w, s.size(), [&](std::size_t i) { return in_row(i) && s[i].total_quanta > 0; },
              [&](std::size_t i) {
                return static_cast<double>(s[i].used_quanta) / static_cast<double>(s[i].total_quanta);
              })
              .value_or(0);
      for (std::size_t u = 0; u < rec.users().size(); ++u)
        row.user_processes.push_back(weighted_mean(w, s.size(), in_row, [&](std::size_t i) {
                                       return static_cast<double>(s[i].users[u].held_processes);
                                     }).value_or(0));
      r.timeline.push_back(std::move(row));
    }
  }
  return r;
}

std::string render_report(const report_figures& r) {
  std::ostringstream o;
  o << "rmbus-sim report: " << r.run.scenario << "\n";
  o << "  simulated " << fixed(static_cast<double>(r.run.simulated_ms) / 1000.0, 1) << " s in "
    << fixed(r.run.wall_s, 1) << " s of wall time (speed " << fixed(r.run.speed, 2)
    << "); ended: " << r.run.end_reason << "\n";
  o << "  " << r.states_received << " schedules (rm.state) received, " << r.samples << " samples, ";
  if (r.pools.size() > 1) {  // each pool has its own quantum
    o << "quantum per nodepool:";
    for (const auto& [pool, pf] : r.pools) o << " " << pool << " " << pf.quantum_mb << " MB";
    o << "\n\n";
  } else {
    o << "quantum " << r.quantum_mb << " MB\n\n";
  }

  o << "Utilization (quanta held / quanta of the nodes up): " << fixed(100.0 * r.utilization_mean, 1)
    << "% on average\n";
  // Nodepools of different quanta are told apart (issue 17): each pool's own figure.
  if (r.utilization_by_pool.size() > 1) {
    o << "  per nodepool:";
    for (const auto& [pool, u] : r.utilization_by_pool) o << " " << pool << " " << fixed(100.0 * u, 1) << "%";
    o << "\n";
  }
  if (!r.timeline.empty()) {
    o << "  time (s)         util  nodes pending";
    for (const auto& u : r.users) o << "  " << u.user;
    o << "   (mean processes held)\n";
    for (const auto& row : r.timeline) {
      char head[96];
      std::snprintf(head, sizeof head, "  %6.1f - %6.1f %5.1f%% %6zu %7zu", row.from_s, row.to_s,
                    100.0 * row.utilization, row.nodes_up, row.pending);
      o << head;
      for (std::size_t u = 0; u < row.user_processes.size(); ++u) {
        const std::string v = fixed(row.user_processes[u], 1);
        const std::size_t width = std::max<std::size_t>(r.users[u].user.size(), 4);
        o << "  " << std::string(width > v.size() ? width - v.size() : 0, ' ') << v;
      }
      o << "\n";
    }
  }

  o << "\nUsers (quanta of fair-share work while the user had demand; fair share: weighted max-min, "
       "docs/sim.md)\n";
  o << "  user            jobs done  mean held  mean fair  held/fair    RM fair  mean procs  final procs  "
       "final fair  max procs  first proc (s)\n";
  for (const auto& u : r.users) {
    char line[256];
    const std::string ratio =
        u.mean_fair_quanta > 0 ? fixed(u.mean_held_quanta / u.mean_fair_quanta, 2) : "-";
    const std::string first = u.first_process_mean_s ? fixed(*u.first_process_mean_s, 1) : "-";
    std::snprintf(
        line, sizeof line, "  %-15s %4zu %4zu %10.1f %10.1f %10s %10.1f %11.1f %12llu %11.1f %10llu %15s\n",
        u.user.c_str(), u.jobs, u.jobs_completed, u.mean_held_quanta, u.mean_fair_quanta, ratio.c_str(),
        u.mean_rm_fair_quanta, u.mean_held_processes, static_cast<unsigned long long>(u.final_processes),
        u.final_fair_quanta, static_cast<unsigned long long>(u.max_processes), first.c_str());
    o << line;
  }

  // Several pools: a pool's quanta are not another's (their quantum and size differ, and a class runs in one
  // pool), so each user's share is judged against the pool it runs in.
  if (r.pools.size() > 1) {
    o << "  (with several nodepools a user's figures above are sums over its pools: per nodepool below)\n";
    o << "\nPer nodepool (fair share against the pool's own quanta)\n";
    o << "  pool             quanta up   util  user            mean held  mean fair  held/fair\n";
    for (const auto& [pool, pf] : r.pools) {
      const auto util = r.utilization_by_pool.find(pool);
      const double u = util == r.utilization_by_pool.end() ? 0.0 : util->second;
      char head[128];
      std::snprintf(head, sizeof head, "  %-16s %9.1f %5.1f%%", pool.c_str(), pf.mean_total_quanta,
                    100.0 * u);
      if (pf.users.empty()) o << head << "  (no fair-share demand)\n";
      for (std::size_t k = 0; k < pf.users.size(); ++k) {
        const auto& pu = pf.users[k];
        const std::string ratio =
            pu.mean_fair_quanta > 0 ? fixed(pu.mean_held_quanta / pu.mean_fair_quanta, 2) : "-";
        char line[256];
        std::snprintf(line, sizeof line, "%s  %-15s %9.1f %10.1f %10s\n",
                      k == 0 ? head : std::string(std::strlen(head), ' ').c_str(), pu.user.c_str(),
                      pu.mean_held_quanta, pu.mean_fair_quanta, ratio.c_str());
        o << line;
      }
    }
    if (r.most_unplaced_jobs > 0)
      o << "  up to " << r.most_unplaced_jobs
        << " job(s) at a time were in no known pool yet (no share, and their class has no nodepool in the "
           "scenario): left out of fair shares\n";
  }

  o << "\nPreemptions: " << r.preempted_shares << " shares (" << r.preempt_events
    << " preempt events); evictions: " << r.evicted_shares << " shares (" << r.evict_events
    << " evict events)\n";
  if (r.drained_early > 0)
    o << "Drained early: " << r.drained_early
      << " processes ended after their items in flight, before their reclaim deadline\n";
  o << "Fairness error (time-weighted mean of sum over users |held - fair| / quanta): "
    << fixed(r.fairness_error_mean, 4) << "; work lost to preemption: " << r.work_lost_items
    << " items in flight (" << fixed(r.work_lost_batch_s, 1) << " process-s of batches), "
    << fixed(r.work_lost_init_s, 1) << " s of initialization to redo\n";
  o << "Jobs: " << r.jobs_completed << " of " << r.jobs_total << " completed";
  if (r.jobs_refused > 0) o << ", " << r.jobs_refused << " refused";
  if (r.other_work > 0) o << "; " << r.other_work << " services / APs / reservations";
  o << "\n";
  // Refused work never runs: named with the RM's reason, and left out of every fair-share figure above.
  if (!r.refused.empty()) {
    o << "Refused (not counted in fair shares):\n";
    for (const auto& x : r.refused) o << "  " << x.id << " (user " << x.user << "): " << x.reason << "\n";
  }
  o << "Time from submission to first process: ";
  if (r.first_process_count == 0)
    o << "no process started";
  else
    o << "mean " << fixed(r.first_process_mean_s, 1) << " s, median " << fixed(r.first_process_p50_s, 1)
      << " s, p90 " << fixed(r.first_process_p90_s, 1) << " s, max " << fixed(r.first_process_max_s, 1)
      << " s (" << r.first_process_count << " jobs)";
  if (r.never_started > 0) o << "; " << r.never_started << " never started";
  o << "\n";
  o << "Time to fair share (a user below 90% of it until at or above): ";
  if (r.fair_share_reached == 0)
    o << "never below it, or never reached";
  else
    o << "mean " << fixed(r.fair_share_mean_s, 1) << " s, p90 " << fixed(r.fair_share_p90_s, 1) << " s, max "
      << fixed(r.fair_share_max_s, 1) << " s (" << r.fair_share_reached << " times)";
  if (r.fair_share_unreached > 0) o << "; " << r.fair_share_unreached << " times demand ended or the run did first";
  o << "\n";
  if (r.launch_failures > 0)
    o << "Launch failures: " << r.launch_failures
      << " shares on nodes that are not the scenario's (the RM still counted nodes of an earlier run)\n";
  o << "Makespan (first submission to last completion): "
    << (r.makespan_s ? fixed(*r.makespan_s, 1) + " s"
                     : std::string("not reached (work left when the run ended)"))
    << "\n";
  o << "Double booking: "
    << (r.double_booked_samples == 0 ? std::string("none seen")
                                     : std::to_string(r.double_booked_samples) + " samples")
    << "\n";

  o << "\nFigures\n";
  auto fig = [&](const std::string& k, const std::string& v) { o << k << " = " << v << "\n"; };
  fig("scenario", r.run.scenario);
  fig("end_reason", r.run.end_reason);
  fig("simulated_s", fixed(static_cast<double>(r.run.simulated_ms) / 1000.0, 3));
  fig("wall_s", fixed(r.run.wall_s, 3));
  fig("states_received", std::to_string(r.states_received));
  fig("samples", std::to_string(r.samples));
  fig("quantum_mb", std::to_string(r.quantum_mb));
  fig("utilization_mean", fixed(r.utilization_mean, 4));
  for (const auto& [pool, u] : r.utilization_by_pool) fig("utilization_mean." + pool, fixed(u, 4));
  if (r.pools.size() > 1) {
    for (const auto& [pool, pf] : r.pools) {
      fig("pool." + pool + ".mean_total_quanta", fixed(pf.mean_total_quanta, 3));
      fig("pool." + pool + ".quantum_mb", std::to_string(pf.quantum_mb));
      for (const auto& pu : pf.users) {
        fig("pool." + pool + ".user." + pu.user + ".mean_held_quanta", fixed(pu.mean_held_quanta, 3));
        fig("pool." + pool + ".user." + pu.user + ".mean_fair_quanta", fixed(pu.mean_fair_quanta, 3));
      }
    }
    fig("most_unplaced_jobs", std::to_string(r.most_unplaced_jobs));
  }
  fig("preempted_shares", std::to_string(r.preempted_shares));
  fig("evicted_shares", std::to_string(r.evicted_shares));
  fig("preempt_events", std::to_string(r.preempt_events));
  fig("evict_events", std::to_string(r.evict_events));
  fig("drained_early", std::to_string(r.drained_early));
  fig("fairness_error_mean", fixed(r.fairness_error_mean, 4));
  fig("work_lost_items", std::to_string(r.work_lost_items));
  fig("work_lost_batch_s", fixed(r.work_lost_batch_s, 3));
  fig("work_lost_init_s", fixed(r.work_lost_init_s, 3));
  fig("work_lost_s", fixed(r.work_lost_batch_s + r.work_lost_init_s, 3));
  fig("jobs_total", std::to_string(r.jobs_total));
  fig("jobs_completed", std::to_string(r.jobs_completed));
  fig("jobs_refused", std::to_string(r.jobs_refused));
  fig("makespan_s", r.makespan_s ? fixed(*r.makespan_s, 3) : "none");
  fig("first_process_mean_s", fixed(r.first_process_mean_s, 3));
  fig("first_process_max_s", fixed(r.first_process_max_s, 3));
  fig("never_started", std::to_string(r.never_started));
  fig("fair_share_reached", std::to_string(r.fair_share_reached));
  fig("fair_share_unreached", std::to_string(r.fair_share_unreached));
  fig("time_to_fair_share_mean_s", fixed(r.fair_share_mean_s, 3));
  fig("time_to_fair_share_p90_s", fixed(r.fair_share_p90_s, 3));
  fig("time_to_fair_share_max_s", fixed(r.fair_share_max_s, 3));
  fig("launch_failures", std::to_string(r.launch_failures));
  fig("double_booked_samples", std::to_string(r.double_booked_samples));
  for (const auto& u : r.users) {
    const std::string k = "user." + u.user + ".";
    fig(k + "jobs_completed", std::to_string(u.jobs_completed));
    fig(k + "mean_held_quanta", fixed(u.mean_held_quanta, 3));
    fig(k + "mean_fair_quanta", fixed(u.mean_fair_quanta, 3));
    fig(k + "mean_rm_fair_quanta", fixed(u.mean_rm_fair_quanta, 3));
    fig(k + "mean_processes", fixed(u.mean_held_processes, 3));
    fig(k + "final_processes", std::to_string(u.final_processes));
    fig(k + "final_fair_quanta", fixed(u.final_fair_quanta, 3));
    fig(k + "max_processes", std::to_string(u.max_processes));
  }
  return o.str();
}

std::string render_csv(const recorder& rec) {
  std::ostringstream o;
  o << "t_s,nodes_up,total_quanta,used_quanta,utilization,fixed_quanta,pending_jobs,preemptions,evictions,"
       "double_booked";
  for (const auto& u : rec.users())
    o << "," << u << "_quanta," << u << "_processes," << u << "_fair_quanta," << u << "_rm_fair_quanta";
  o << "\n";
  for (const auto& s : rec.samples()) {
    const double util =
        s.total_quanta > 0 ? static_cast<double>(s.used_quanta) / static_cast<double>(s.total_quanta) : 0.0;
    o << fixed(static_cast<double>(s.t_ms) / 1000.0, 3) << "," << s.nodes_up << "," << s.total_quanta << ","
      << s.used_quanta << "," << fixed(util, 4) << "," << s.fixed_quanta << "," << s.pending_jobs << ","
      << s.preemptions << "," << s.evictions << "," << (s.double_booked ? 1 : 0);
    for (const auto& u : s.users)
      o << "," << u.held_quanta << "," << u.held_processes << "," << fixed(u.fair_quanta, 2) << ","
        << u.rm_fair_quanta;
    o << "\n";
  }
  return o.str();
}

std::string progress_line(const sample& s, const std::vector<std::string>& users, std::size_t total_nodes,
                          std::size_t jobs_done, std::size_t jobs_total, std::size_t jobs_refused) {
  std::ostringstream o;
  char head[64];
  std::snprintf(head, sizeof head, "[%8.1f s] ", static_cast<double>(s.t_ms) / 1000.0);
  o << head << "nodes " << s.nodes_up << "/" << total_nodes << " up | quanta " << s.used_quanta << "/"
    << s.total_quanta;
  if (s.total_quanta > 0)
    o << " (" << fixed(100.0 * static_cast<double>(s.used_quanta) / static_cast<double>(s.total_quanta), 0)
      << "%)";
  if (s.pools.size() > 1) {  // pools of different quanta: each apart, the sum above is only a count
    o << " [";
    bool first = true;
    for (const auto& [pool, p] : s.pools) {
      o << (first ? "" : ", ") << pool << " " << p.used_quanta << "/" << p.total_quanta;
      first = false;
    }
    o << "]";
  }
  o << " | procs";
  const std::size_t shown = std::min<std::size_t>(users.size(), 8);
  for (std::size_t u = 0; u < shown && u < s.users.size(); ++u)
    o << " " << users[u] << "=" << s.users[u].held_processes;
  if (users.size() > shown) o << " +" << users.size() - shown << " users";
  o << " | pending " << s.pending_jobs << " | done " << jobs_done << "/" << jobs_total;
  if (jobs_refused > 0) o << " (" << jobs_refused << " refused)";
  o << " | preempted " << s.preemptions << " evicted " << s.evictions;
  return o.str();
}

}  // namespace rmbus::sim
