#include "core/preemption_policy.hpp"

#include <algorithm>

#include "core/preemption.hpp"
#include "core/prefetch.hpp"
#include "core/what_of.hpp"

namespace rmbus::core {

std::int64_t sparing_hold_ms(const cluster_model& m) {
  return sparing_hold_epochs * std::max<std::int64_t>(1, m.settings.epoch_ms);
}

namespace {

bool is_fair_job(const cluster_model& m, const job_rec& j) {
  return j.live && !j.refused && j.cls >= 0 && m.class_pool(j) >= 0 && m.policy_of(j) == policy::fair_share;
}

struct user_totals {
  std::int64_t given_q = 0;  // quanta counted to its fair-share jobs
  std::int64_t held_q = 0;   // quanta they hold (not being removed)
  std::int64_t fair_q = 0;   // their pure fair share (quanta)
  int min_short_order = 0;   // smallest order among its jobs short of their counts (0: none)
};

struct victim_key {
  bool idle = false;    // less work left than its processes can take
  double over = 0;      // its user's held / given
  double per_proc = 0;  // work left per process
};

struct claim {
  int job;
  int processes;
  double ratio;  // its user's held / given: the most starved are served first
};

}  // namespace

sparing_choice choose_sparing_victims(cluster_model& m, std::int64_t now_ms) {
  const std::int64_t hold = sparing_hold_ms(m);
  sparing_choice out;
  out.shed.assign(m.jobs.size(), 0);
  out.chosen.assign(m.shares.size(), 0);
  // Fair share is apportioned per class, then per user in it: the (class, user) pair is the unit here.
  const std::size_t n_users = m.users.size();
  const auto entity = [&](const job_rec& j) {
    return static_cast<std::size_t>(j.cls) * n_users + static_cast<std::size_t>(j.user_slot);
  };
  std::vector<user_totals> users(m.classes.size() * n_users);
  std::vector<int> short_jobs, surplus_jobs;
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    prefetch_ahead(m.jobs, i);
    auto& j = m.jobs[i];
    j.claim_q = 0;
    if (!is_fair_job(m, j) || j.user_slot < 0) continue;
    auto& u = users[entity(j)];
    u.given_q += static_cast<std::int64_t>(j.given) * j.order;
    u.held_q += static_cast<std::int64_t>(m.current(j)) * j.order;
    u.fair_q += j.pfs_qshares;
    if (m.current(j) < j.given) {
      short_jobs.push_back(static_cast<int>(i));
      u.min_short_order = u.min_short_order == 0 ? j.order : std::min(u.min_short_order, j.order);
    } else if (m.current(j) > j.given) {
      surplus_jobs.push_back(static_cast<int>(i));
    }
  }
  if (short_jobs.empty()) return out;
  const auto ratio_of = [&](std::size_t e) {
    const auto& t = users[e];
    return t.given_q > 0 ? static_cast<double>(t.held_q) / static_cast<double>(t.given_q) : 1e18;
  };

  // R2 (and R5 for claimants): who claims how many processes. Oldest first within a user.
  std::sort(short_jobs.begin(), short_jobs.end(), [&](int a, int b) {
    return m.job_rank[static_cast<std::size_t>(a)] < m.job_rank[static_cast<std::size_t>(b)];
  });
  std::vector<std::int64_t> left_to_claim(users.size(), 0);
  for (std::size_t u = 0; u < users.size(); ++u) {
    const auto& t = users[u];
    const std::int64_t deficit = t.given_q - t.held_q;
    // Starved: short by at least one process of its order, and by more than half of its count or holding
    // less than half of its pure fair share (a ramp by doubling is never short by more than half its count).
    if (t.min_short_order > 0 && deficit >= t.min_short_order && (2 * deficit > t.given_q || 2 * t.held_q < t.fair_q))
      left_to_claim[u] = deficit;
  }
  std::vector<claim> claims;
  for (int ji : short_jobs) {
    auto& j = m.jobs[static_cast<std::size_t>(ji)];
    const auto u = entity(j);
    std::int64_t want = 0;  // processes
    if (left_to_claim[u] >= j.order)
      want = std::min<std::int64_t>(j.given - m.current(j), left_to_claim[u] / j.order);
    else if (m.current(j) == 0 && users[u].held_q < users[u].given_q)
      want = 1;  // new work starts with one process
    if (want <= 0) continue;
    if (now_ms - j.shed_at_ms < hold) {  // R5: it just lost a process; do not take one back yet
      const std::int64_t due = j.shed_at_ms + hold;
      if (m.next_reclaim_ms == 0 || due < m.next_reclaim_ms) m.next_reclaim_ms = due;
      continue;
    }
    if (left_to_claim[u] >= j.order) left_to_claim[u] -= want * j.order;
    j.claim_q = static_cast<int>(want) * j.order;
    j.claimed_at_ms = now_ms;
    claims.push_back({ji, static_cast<int>(want), ratio_of(u)});
  }
  if (claims.empty()) return out;
  std::stable_sort(claims.begin(), claims.end(),
                   [](const claim& a, const claim& b) { return a.ratio < b.ratio; });

  // R3: who may lose what. A user may lose down to its count, a job down to its count.
  std::vector<std::int64_t> budget(users.size(), 0);
  for (std::size_t u = 0; u < users.size(); ++u)
    budget[u] = std::max<std::int64_t>(0, users[u].held_q - users[u].given_q);
  std::vector<int> room(m.jobs.size(), 0);
  std::vector<victim_key> keys(m.jobs.size());
  // Per machine: space free or being freed that no claim took yet, and the victims' shares on it.
  std::vector<int> spare(m.machines.size(), 0);
  std::vector<std::vector<int>> victims_on(m.machines.size());
  std::vector<int> candidates;  // machines with victims or space being freed
  std::int64_t held_back_until = 0;  // the first time a victim R5 holds back becomes takeable
  for (std::size_t mi = 0; mi < m.machines.size(); ++mi) {
    const auto& mc = m.machines[mi];
    spare[mi] = mc.schedulable() ? std::max(0, mc.free()) + mc.removing : 0;
  }
  for (int ji : surplus_jobs) {
    const auto& j = m.jobs[static_cast<std::size_t>(ji)];
    if (budget[entity(j)] < j.order) continue;
    if (now_ms - j.claimed_at_ms < hold) {  // R5: it just gained; do not take it back yet
      const std::int64_t due = j.claimed_at_ms + hold;
      if (held_back_until == 0 || due < held_back_until) held_back_until = due;
      continue;
    }
    room[static_cast<std::size_t>(ji)] = m.current(j) - j.given;
    keys[static_cast<std::size_t>(ji)] = {j.cap.by_work < m.current(j), ratio_of(entity(j)),
                                          static_cast<double>(j.cap.by_work) / std::max(1, m.current(j))};
    for (int s : j.shares) {
      const auto& sh = m.shares[static_cast<std::size_t>(s)];
      if (sh.removing() || sh.fixed || sh.blacklisted) continue;
      if (!m.machines[static_cast<std::size_t>(sh.machine)].schedulable()) continue;
      victims_on[static_cast<std::size_t>(sh.machine)].push_back(s);
    }
  }
  for (std::size_t mi = 0; mi < m.machines.size(); ++mi) {
    if (victims_on[mi].empty() && m.machines[mi].removing == 0) continue;
    candidates.push_back(static_cast<int>(mi));
    std::sort(victims_on[mi].begin(), victims_on[mi].end(), [&](int a, int b) {
      const auto& sa = m.shares[static_cast<std::size_t>(a)];
      const auto& sb = m.shares[static_cast<std::size_t>(b)];
      const auto& ka = keys[static_cast<std::size_t>(sa.job)];
      const auto& kb = keys[static_cast<std::size_t>(sb.job)];
      if (ka.idle != kb.idle) return ka.idle;
      if (ka.over != kb.over) return ka.over > kb.over;
      if (ka.per_proc != kb.per_proc) return ka.per_proc < kb.per_proc;
      return investment_less(m, sa, sb);
    });
  }
  std::sort(candidates.begin(), candidates.end(), [&](int a, int b) {
    return m.machine_rank[static_cast<std::size_t>(a)] < m.machine_rank[static_cast<std::size_t>(b)];
  });

  // R1: each claimed process gets one machine: the one where it fits with the fewest quanta preempted
  // (none where space is being freed already), by name on equal cost. Only victims' shares are taken.
  std::vector<int> picked;
  const auto takeable = [&](int s) {
    const auto& sh = m.shares[static_cast<std::size_t>(s)];
    return !out.chosen[static_cast<std::size_t>(s)] && room[static_cast<std::size_t>(sh.job)] > 0 &&
           budget[entity(m.jobs[static_cast<std::size_t>(sh.job)])] >= sh.order;
  };
  // The victims to preempt on machine `mi` so that `order` quanta are spare there; false if impossible.
  const auto plan_on = [&](int mi, int order, std::vector<int>& into) {
    into.clear();
    int freed = spare[static_cast<std::size_t>(mi)];
    std::vector<std::pair<std::size_t, std::int64_t>> spent;  // budget drawn per user in this attempt
    for (int s : victims_on[static_cast<std::size_t>(mi)]) {
      if (freed >= order) break;
      if (!takeable(s)) continue;
      const auto& sh = m.shares[static_cast<std::size_t>(s)];
      const std::size_t u = entity(m.jobs[static_cast<std::size_t>(sh.job)]);
      std::int64_t drawn = 0;
      int same_job = 0;
      for (const auto& [uu, q] : spent) drawn += uu == u ? q : 0;
      for (int t : into) same_job += m.shares[static_cast<std::size_t>(t)].job == sh.job;
      if (budget[u] - drawn < sh.order || room[static_cast<std::size_t>(sh.job)] <= same_job) continue;
      into.push_back(s);
      spent.emplace_back(u, sh.order);
      freed += sh.order;
    }
    return freed >= order;
  };
  std::vector<int> best_plan;
  for (const auto& c : claims) {
    auto& j = m.jobs[static_cast<std::size_t>(c.job)];
    const int pool = m.class_pool(j);
    for (int p = 0; p < c.processes; ++p) {
      int best = -1, best_cost = 0;
      for (int mi : candidates) {
        const auto& mc = m.machines[static_cast<std::size_t>(mi)];
        if (mc.order < j.order || !m.in_subtree(mc.pool, pool) || !host_allowed(j, mc)) continue;
        const int cost = std::max(0, j.order - spare[static_cast<std::size_t>(mi)]);
        if (best >= 0 && cost >= best_cost) continue;
        if (!plan_on(mi, j.order, picked)) continue;
        best = mi;
        best_cost = cost;
        best_plan = picked;
        if (cost == 0) break;
      }
      if (best < 0) {  // nowhere to make room: the claim waits, and is looked at again when R5 lets go
        if (held_back_until > 0 && (m.next_reclaim_ms == 0 || held_back_until < m.next_reclaim_ms))
          m.next_reclaim_ms = held_back_until;
        break;
      }
      int freed = 0;
      for (int s : best_plan) {
        const auto& sh = m.shares[static_cast<std::size_t>(s)];
        auto& v = m.jobs[static_cast<std::size_t>(sh.job)];
        out.chosen[static_cast<std::size_t>(s)] = 1;
        ++out.shed[static_cast<std::size_t>(sh.job)];
        --room[static_cast<std::size_t>(sh.job)];
        budget[entity(v)] -= sh.order;
        v.shed_at_ms = now_ms;
        freed += sh.order;
      }
      spare[static_cast<std::size_t>(best)] += freed - j.order;  // the claimant's from now on
    }
  }
  return out;
}

}  // namespace rmbus::core
