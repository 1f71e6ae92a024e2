#include "core/preemption_policy.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "core/preemption.hpp"
#include "core/prefetch.hpp"
#include "core/sparing_room_index.hpp"
#include "core/what_of.hpp"

namespace rmbus::core {

std::int64_t sparing_hold_ms(const cluster_model& m) {
  return sparing_hold_epochs * std::max<std::int64_t>(1, m.settings.epoch_ms);
}

std::int64_t sparing_patience_ms(const cluster_model& m) {
  return sparing_patience_epochs * std::max<std::int64_t>(1, m.settings.epoch_ms);
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
  std::int64_t short_since = 0;  // when short by a process or more: since when, without a break
};

struct victim_key {
  bool idle = false;    // less work left than its processes can take
  double over = 0;      // its user's held / given
  double per_proc = 0;  // work left per process
};

struct victim {  // a share R3 lets go, with what the choice reads of it
  int share;
  int machine;
  int job;
  int order;
  std::size_t unit;  // its job's (class, user)
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
    if (j.claim_q != 0) j.claim_q = 0;  // a write to every record would cost each its write-back
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
  // How long each unit has been short without a break: the units short now keep their time or start it.
  {
    std::map<std::pair<int, user_id>, std::int64_t> since;
    for (std::size_t e = 0; e < users.size(); ++e) {
      auto& t = users[e];
      if (t.min_short_order == 0 || t.given_q - t.held_q < t.min_short_order) continue;
      const std::pair<int, user_id> key{static_cast<int>(e / n_users), m.users[e % n_users]};
      const auto it = m.sparing_short_since.find(key);
      t.short_since = it == m.sparing_short_since.end() ? now_ms : it->second;
      since.emplace(key, t.short_since);
    }
    m.sparing_short_since = std::move(since);
  }
  if (short_jobs.empty()) return out;
  const auto ratio_of = [&](std::size_t e) {
    const auto& t = users[e];
    return t.given_q > 0 ? static_cast<double>(t.held_q) / static_cast<double>(t.given_q) : 1e18;
  };

  // R2 (and R5 for claimants): who claims how many processes. Oldest first within a user.
  const std::int64_t patience = sparing_patience_ms(m);
  std::vector<std::int64_t> left_to_claim(users.size(), 0);
  for (std::size_t u = 0; u < users.size(); ++u) {
    const auto& t = users[u];
    const std::int64_t deficit = t.given_q - t.held_q;
    if (t.min_short_order == 0 || deficit < t.min_short_order) continue;
    // Starved: short by more than half of its count or holding less than half of its pure fair share (a ramp
    // by doubling is never short by more than half its count); or short, by less, for `patience` without a
    // break, which churn seldom allows but a standing gap always reaches.
    if (2 * deficit > t.given_q || 2 * t.held_q < t.fair_q || now_ms - t.short_since >= patience) {
      left_to_claim[u] = deficit;
    } else {
      // The round must run when the patience runs out, even if nothing else changes by then.
      const std::int64_t due = t.short_since + patience;
      if (m.next_reclaim_ms == 0 || due < m.next_reclaim_ms) m.next_reclaim_ms = due;
    }
  }
  // Only these may claim (left_to_claim only falls): of some 5,000 short jobs a few hundred, so sort only them.
  std::erase_if(short_jobs, [&](int ji) {
    const auto& j = m.jobs[static_cast<std::size_t>(ji)];
    const auto u = entity(j);
    return left_to_claim[u] < j.order && !(m.current(j) == 0 && users[u].held_q < users[u].given_q);
  });
  std::sort(short_jobs.begin(), short_jobs.end(), [&](int a, int b) {
    return m.job_rank[static_cast<std::size_t>(a)] < m.job_rank[static_cast<std::size_t>(b)];
  });
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
  // Per machine: space free or being freed that no claim took yet.
  std::vector<int> spare(m.machines.size(), 0);
  std::vector<char> usable(m.machines.size(), 0);  // schedulable: a victim there frees space someone may use
  // Where a claimed process may go: machines with victims or space being freed (others were full or had no
  // room for what What Of placed).
  std::vector<char> candidate(m.machines.size(), 0);
  for (std::size_t mi = 0; mi < m.machines.size(); ++mi) {
    prefetch_ahead(m.machines, mi);
    const auto& mc = m.machines[mi];
    usable[mi] = mc.schedulable() ? 1 : 0;
    spare[mi] = usable[mi] != 0 ? std::max(0, mc.free()) + mc.removing : 0;
    candidate[mi] = usable[mi] != 0 && mc.removing > 0 ? 1 : 0;
  }
  // The victims, job by job (a job's are adjacent), with what the choice reads of them.
  std::vector<victim> victims;
  std::vector<int> victims_begin(m.jobs.size(), 0);  // per job slot: its first victim
  std::int64_t held_back_until = 0;  // the first time a victim R5 holds back becomes takeable
  for (std::size_t k = 0; k < surplus_jobs.size(); ++k) {
    // Reads of scattered records, each asked for ahead: the lines of a job record this loop reads, its share
    // list, and its shares.
    if (k + records_ahead < surplus_jobs.size()) {
      const auto& ahead = m.jobs[static_cast<std::size_t>(surplus_jobs[k + records_ahead])];
      prefetch_record(&ahead);
      __builtin_prefetch(&ahead.shares);
      __builtin_prefetch(&ahead.claimed_at_ms);
    }
    if (k + 4 < surplus_jobs.size())
      __builtin_prefetch(m.jobs[static_cast<std::size_t>(surplus_jobs[k + 4])].shares.data());
    if (k + 2 < surplus_jobs.size())
      for (int s : m.jobs[static_cast<std::size_t>(surplus_jobs[k + 2])].shares)
        __builtin_prefetch(&m.shares[static_cast<std::size_t>(s)]);
    const int ji = surplus_jobs[k];
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
    victims_begin[static_cast<std::size_t>(ji)] = static_cast<int>(victims.size());
    for (int s : j.shares) {
      const auto& sh = m.shares[static_cast<std::size_t>(s)];
      if (sh.removing() || sh.fixed || sh.blacklisted) continue;
      if (usable[static_cast<std::size_t>(sh.machine)] == 0) continue;
      victims.push_back({s, sh.machine, ji, sh.order, entity(j)});
      candidate[static_cast<std::size_t>(sh.machine)] = 1;
    }
  }
  // Per machine, its victims in R3's order: by machine here, sorted when a plan first reads them (the order
  // depends on nothing the choice changes).
  std::vector<int> on_begin(m.machines.size() + 1, 0);
  for (const auto& v : victims) ++on_begin[static_cast<std::size_t>(v.machine) + 1];
  for (std::size_t mi = 0; mi < m.machines.size(); ++mi) on_begin[mi + 1] += on_begin[mi];
  std::vector<int> on(victims.size());
  {
    std::vector<int> fill(on_begin.begin(), on_begin.end() - 1);
    for (std::size_t v = 0; v < victims.size(); ++v)
      on[static_cast<std::size_t>(fill[static_cast<std::size_t>(victims[v].machine)]++)] = static_cast<int>(v);
  }
  std::vector<char> in_order(m.machines.size(), 0);
  const auto victims_on = [&](int mi) {
    const auto b = on.begin() + on_begin[static_cast<std::size_t>(mi)];
    const auto e = on.begin() + on_begin[static_cast<std::size_t>(mi) + 1];
    if (in_order[static_cast<std::size_t>(mi)] == 0) {
      in_order[static_cast<std::size_t>(mi)] = 1;
      std::sort(b, e, [&](int x, int y) {
        const auto& va = victims[static_cast<std::size_t>(x)];
        const auto& vb = victims[static_cast<std::size_t>(y)];
        const auto& ka = keys[static_cast<std::size_t>(va.job)];
        const auto& kb = keys[static_cast<std::size_t>(vb.job)];
        if (ka.idle != kb.idle) return ka.idle;
        if (ka.over != kb.over) return ka.over > kb.over;
        if (ka.per_proc != kb.per_proc) return ka.per_proc < kb.per_proc;
        return investment_less(m, m.shares[static_cast<std::size_t>(va.share)],
                               m.shares[static_cast<std::size_t>(vb.share)]);
      });
    }
    return std::pair{b, e};
  };

  // R1: each claimed process gets one machine: the one where it fits with the fewest quanta preempted
  // (none where space is being freed already), by name on equal cost. Only victims' shares are taken.
  std::vector<int> picked;  // victims
  std::vector<std::pair<std::size_t, std::int64_t>> spent;  // plan_on's: budget drawn per unit in one attempt
  const auto takeable = [&](const victim& v) {
    return !out.chosen[static_cast<std::size_t>(v.share)] && room[static_cast<std::size_t>(v.job)] > 0 &&
           budget[v.unit] >= v.order;
  };
  // The victims to preempt on machine `mi` so that `order` quanta are spare there; false if impossible.
  const auto plan_on = [&](int mi, int order, std::vector<int>& into) {
    into.clear();
    spent.clear();
    int freed = spare[static_cast<std::size_t>(mi)];
    const auto [b, e] = victims_on(mi);
    for (auto it = b; it != e && freed < order; ++it) {
      const auto& v = victims[static_cast<std::size_t>(*it)];
      if (!takeable(v)) continue;
      std::int64_t drawn = 0;
      int same_job = 0;
      for (const auto& [u, q] : spent) drawn += u == v.unit ? q : 0;
      for (int t : into) same_job += victims[static_cast<std::size_t>(t)].job == v.job;
      if (budget[v.unit] - drawn < v.order || room[static_cast<std::size_t>(v.job)] <= same_job) continue;
      into.push_back(*it);
      spent.emplace_back(v.unit, v.order);
      freed += v.order;
    }
    return freed >= order;
  };

  // What each machine could offer a claimant: its spare quanta and its takeable victims' (offer), kept as
  // victims go out of reach (chosen, their job down to its count, their unit's budget below their order; none
  // comes back, as budgets and rooms only fall), so that the room index (sparing_room_index.hpp) offers
  // plan_on only machines where it may succeed, in R1's order. Per unit its victims, so that a budget falling
  // below some of their orders finds them.
  std::vector<char> counted(victims.size(), 0);  // per victim: its quanta are in its machine's offer
  std::vector<int> offer(m.machines.size(), 0);
  std::vector<int> unit_begin(users.size() + 1, 0), unit_end(users.size(), 0);
  std::vector<int> unit_top(users.size(), 0);  // at least the largest order among the unit's counted victims
  for (const auto& v : victims) ++unit_begin[v.unit + 1];
  for (std::size_t u = 0; u < users.size(); ++u) unit_begin[u + 1] += unit_begin[u];
  std::copy(unit_begin.begin(), unit_begin.end() - 1, unit_end.begin());
  std::vector<int> unit_victims(victims.size());
  for (std::size_t k = 0; k < victims.size(); ++k) {
    const auto& v = victims[k];
    unit_victims[static_cast<std::size_t>(unit_end[v.unit]++)] = static_cast<int>(k);
    if (!takeable(v)) continue;
    counted[k] = 1;
    offer[static_cast<std::size_t>(v.machine)] += v.order;
    unit_top[v.unit] = std::max(unit_top[v.unit], v.order);
  }
  std::vector<int> reach(m.machines.size());
  for (std::size_t mi = 0; mi < m.machines.size(); ++mi) reach[mi] = spare[mi] + offer[mi];
  sparing_room_index rooms(m, candidate, spare, reach);
  const auto refresh = [&](int mi) {
    rooms.set(mi, spare[static_cast<std::size_t>(mi)],
              spare[static_cast<std::size_t>(mi)] + offer[static_cast<std::size_t>(mi)]);
  };
  const auto uncount = [&](int k) {
    if (counted[static_cast<std::size_t>(k)] == 0) return;
    counted[static_cast<std::size_t>(k)] = 0;
    const auto& v = victims[static_cast<std::size_t>(k)];
    offer[static_cast<std::size_t>(v.machine)] -= v.order;
    refresh(v.machine);
  };
  const auto drop_above_budget = [&](std::size_t u) {  // and forget the unit's victims no longer counted
    if (unit_top[u] <= budget[u]) return;
    int kept = unit_begin[u], top = 0;
    for (int i = unit_begin[u]; i < unit_end[u]; ++i) {
      const int k = unit_victims[static_cast<std::size_t>(i)];
      const int order = victims[static_cast<std::size_t>(k)].order;
      if (order > budget[u]) uncount(k);
      if (counted[static_cast<std::size_t>(k)] == 0) continue;
      unit_victims[static_cast<std::size_t>(kept++)] = k;
      top = std::max(top, order);
    }
    unit_end[u] = kept;
    unit_top[u] = top;
  };

  // A claim that may run anywhere and found no room finds none for the same order and pool until something
  // is chosen: nothing plan_on or the index read has changed.
  std::vector<std::pair<int, int>> no_room;  // (order, pool)
  for (const auto& c : claims) {
    auto& j = m.jobs[static_cast<std::size_t>(c.job)];
    const int pool = m.class_pool(j);
    const bool anywhere = j.no_hosts || j.item.hosts.empty();
    const std::pair<int, int> kind{j.order, pool};
    for (int p = 0; p < c.processes; ++p) {
      int best = -1;
      if (!anywhere || std::find(no_room.begin(), no_room.end(), kind) == no_room.end()) {
        for (int mi = rooms.best(j.order, pool); mi >= 0; mi = rooms.best(j.order, pool)) {
          if (host_allowed(j, m.machines[static_cast<std::size_t>(mi)]) && plan_on(mi, j.order, picked)) {
            best = mi;
            break;
          }
          rooms.pass_over(mi);
        }
        rooms.restore();
      }
      if (best < 0) {  // nowhere to make room: the claim waits, and is looked at again when R5 lets go
        if (anywhere) no_room.push_back(kind);
        if (held_back_until > 0 && (m.next_reclaim_ms == 0 || held_back_until < m.next_reclaim_ms))
          m.next_reclaim_ms = held_back_until;
        break;
      }
      no_room.clear();
      int freed = 0;
      for (int k : picked) {
        const auto& v = victims[static_cast<std::size_t>(k)];
        out.chosen[static_cast<std::size_t>(v.share)] = 1;
        ++out.shed[static_cast<std::size_t>(v.job)];
        --room[static_cast<std::size_t>(v.job)];
        budget[v.unit] -= v.order;
        m.jobs[static_cast<std::size_t>(v.job)].shed_at_ms = now_ms;
        freed += v.order;
        uncount(k);
        if (room[static_cast<std::size_t>(v.job)] == 0)
          for (auto t = static_cast<std::size_t>(victims_begin[static_cast<std::size_t>(v.job)]);
               t < victims.size() && victims[t].job == v.job; ++t)
            uncount(static_cast<int>(t));
        drop_above_budget(v.unit);
      }
      spare[static_cast<std::size_t>(best)] += freed - j.order;  // the claimant's from now on
      refresh(best);
    }
  }
  return out;
}

}  // namespace rmbus::core
