#include "core/preemption.hpp"

#include <algorithm>

#include "core/preemption_policy.hpp"
#include "core/prefetch.hpp"
#include "core/reason_text.hpp"
#include "core/reservation_choice.hpp"

namespace rmbus::core {

bool investment_less(const cluster_model& m, const share_rec& a, const share_rec& b) {
  const auto& ja = m.jobs[static_cast<std::size_t>(a.job)];
  const auto& jb = m.jobs[static_cast<std::size_t>(b.job)];
  const auto& ma = m.machines[static_cast<std::size_t>(a.machine)];
  const auto& mb = m.machines[static_cast<std::size_t>(b.machine)];
  const bool sq_a = ma.pool != m.class_pool(ja);
  const bool sq_b = mb.pool != m.class_pool(jb);
  if (sq_a != sq_b) return sq_a;
  if (a.initialized != b.initialized) return !a.initialized;
  if (!a.initialized) {
    if (a.init_ms != b.init_ms) return a.init_ms < b.init_ms;
  } else {
    if (a.run_ms != b.run_ms) return a.run_ms < b.run_ms;
  }
  const int da = m.pools[static_cast<std::size_t>(ma.pool)].depth;
  const int db = m.pools[static_cast<std::size_t>(mb.pool)].depth;
  if (da != db) return da > db;
  if (ma.memory_mb != mb.memory_mb) return ma.memory_mb > mb.memory_mb;
  if (a.seq != b.seq) return a.seq > b.seq;
  return b.id < a.id;
}

namespace {

// Per pool: whether a class that may use it (the pool's own or one above it) has a fair-share job short of its
// count, from `short_in` (per pool: its own classes have one). Empty when no job is short: then DUCC's rule
// stands as it is.
std::vector<char> pools_claimants_reach(const cluster_model& m, const std::vector<char>& short_in) {
  if (std::none_of(short_in.begin(), short_in.end(), [](char c) { return c != 0; })) return {};
  std::vector<char> reach(m.pools.size(), 0);
  for (std::size_t p = 0; p < m.pools.size(); ++p)
    for (int a = static_cast<int>(p); a >= 0 && reach[p] == 0; a = m.pools[static_cast<std::size_t>(a)].parent)
      reach[p] = short_in[static_cast<std::size_t>(a)];
  return reach;
}

}  // namespace

void plan_preemptions(cluster_model& m, std::int64_t now_ms) {
  // One sweep over the jobs (slot order) finds the few the three steps below look at. A fair-share job
  // that holds no more than its count now cannot come to hold more: the steps only take shares away.
  std::vector<int> reserving, fixed, surplus, drop_deadlines;
  // Per pool: one of its own classes has a fair-share job short of its count (What Of ran), as of now and
  // after the clearing below.
  std::vector<char> short_in(m.pools.size(), 0);
  const auto note_if_short = [&](int ji) {
    const auto& j = m.jobs[static_cast<std::size_t>(ji)];
    if (m.current(j) >= j.given || !j.live || j.refused || m.policy_of(j) != policy::fair_share) return;
    const int pool = m.class_pool(j);
    if (pool >= 0) short_in[static_cast<std::size_t>(pool)] = 1;
  };
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    prefetch_ahead(m.jobs, i);
    const auto& j = m.jobs[i];
    if (!j.live) continue;
    note_if_short(static_cast<int>(i));
    if (j.earmarks && !j.reserve_machines.empty()) reserving.push_back(static_cast<int>(i));
    if (j.earmarks && !j.fixed_machines.empty()) fixed.push_back(static_cast<int>(i));
    if (m.current(j) > j.given && m.policy_of(j) == policy::fair_share) surplus.push_back(static_cast<int>(i));
    else if (j.reclaiming > 0) drop_deadlines.push_back(static_cast<int>(i));  // the need disappeared
  }
  for (int ji : drop_deadlines)
    for (int s : m.jobs[static_cast<std::size_t>(ji)].shares) m.set_reclaim(s, 0);
  const bool sparing = m.settings.preemption_policy == preemption_policy::sparing;
  // Under the sparing policy a reservation clears the machine that costs least (reservation_choice.hpp).
  if (sparing && !reserving.empty()) choose_sparing_reservation_machines(m, reserving);
  // First, machines earmarked for a reservation are cleared of preemptable work (the reservation's class
  // has the better priority; what is cleared there counts toward the owners' surplus below).
  for (int ji : reserving) {
    auto& j = m.jobs[static_cast<std::size_t>(ji)];
    for (int mc : j.reserve_machines) {
      const auto slots = m.machines[static_cast<std::size_t>(mc)].shares;
      for (int s : slots) {
        auto& sh = m.shares[static_cast<std::size_t>(s)];
        if (sh.job == ji || sh.fixed || sh.removing()) continue;
        const int owner = sh.job;
        if (!sh.published) m.remove_share(s);
        else m.mark_removing(s, share_status::preempt);
        note_if_short(owner);
      }
      if (m.current(j) < j.given && j.reason == reason_code::none) {
        set_reason_text(j, reason_code::waiting_for_preemptions, "Waiting for preemptions.");
      }
    }
  }
  // Machines a non-preemptable process was counted on get just enough fair-share work preempted.
  for (int ji : fixed) {
    auto& j = m.jobs[static_cast<std::size_t>(ji)];
    for (int mc : j.fixed_machines) {
      auto& mach = m.machines[static_cast<std::size_t>(mc)];
      int placed_here = 0;
      for (int s : mach.shares) placed_here += m.shares[static_cast<std::size_t>(s)].job == ji && !m.shares[static_cast<std::size_t>(s)].published;
      if (placed_here > 0) continue;  // placed this round
      int freeing = mach.free() + mach.removing;
      if (freeing >= j.order) continue;
      std::vector<int> cands;
      for (int s : mach.shares) {
        const auto& sh = m.shares[static_cast<std::size_t>(s)];
        if (!sh.fixed && !sh.removing() && !sh.blacklisted) cands.push_back(s);
      }
      std::sort(cands.begin(), cands.end(), [&](int a, int b) {
        return investment_less(m, m.shares[static_cast<std::size_t>(a)], m.shares[static_cast<std::size_t>(b)]);
      });
      for (int s : cands) {
        if (freeing >= j.order) break;
        freeing += m.shares[static_cast<std::size_t>(s)].order;
        const int owner = m.shares[static_cast<std::size_t>(s)].job;
        if (!m.shares[static_cast<std::size_t>(s)].published) m.remove_share(s);
        else m.mark_removing(s, share_status::preempt);
        note_if_short(owner);
      }
      if (j.reason == reason_code::none) {
        set_reason_text(j, reason_code::waiting_for_preemptions, "Waiting for preemptions.");
      }
    }
  }
  // Then every job above its count sheds the surplus, least investment first; under a reclaim grace those
  // already given a deadline come first, so a deadline, once published, holds while the need stands.
  std::vector<int> cands;
  m.next_reclaim_ms = 0;
  // Under the sparing policy a job sheds only what was chosen for starved claimants (preemption_policy.hpp).
  const sparing_choice pick = sparing ? choose_sparing_victims(m, now_ms) : sparing_choice{};
  // Under DUCC's rules, while some job is short, the part of a surplus that fair share took away (not the
  // job's own cap) is shed only in pools a short job may use (sparing's claimants look only there, R1).
  const std::vector<char> reach = sparing || surplus.empty() ? std::vector<char>{} : pools_claimants_reach(m, short_in);
  std::vector<int> chosen, left;  // one job's victims, and the rest of its candidates
  for (int ji : surplus) {
    const auto& j = m.jobs[static_cast<std::size_t>(ji)];
    // Under sparing most jobs above their counts shed nothing this round: with no deadline to drop, nothing
    // below would change for them.
    if (sparing && pick.shed[static_cast<std::size_t>(ji)] == 0 && j.reclaiming == 0) continue;
    const auto* rc = m.class_of(j);
    const std::int64_t grace = rc != nullptr ? rc->reclaim_grace_ms : 0;
    int excess = sparing ? pick.shed[static_cast<std::size_t>(ji)] : m.current(j) - j.given;
    cands.clear();
    for (int s : j.shares) {
      const auto& sh = m.shares[static_cast<std::size_t>(s)];
      if (sh.removing() || sh.fixed || sh.blacklisted) continue;
      // A share on a machine nothing can be placed on yet (not heard since a restart, or reported down with its
      // eviction held back) frees nothing anyone could use, and the machine counts nowhere as capacity: it is
      // no victim, and it is not counted against the job's share either, so the job keeps its live processes.
      const auto& mc = m.machines[static_cast<std::size_t>(sh.machine)];
      if (mc.unheard || mc.down) {
        if (!sparing) excess -= 1;
        continue;
      }
      cands.push_back(s);
    }
    const auto k = static_cast<std::size_t>(std::clamp<int>(excess, 0, static_cast<int>(cands.size())));
    const bool pending_first = j.reclaiming > 0;
    const auto before = [&](int a, int b) {
      const auto& sa = m.shares[static_cast<std::size_t>(a)];
      const auto& sb = m.shares[static_cast<std::size_t>(b)];
      if (sparing && pick.chosen[static_cast<std::size_t>(a)] != pick.chosen[static_cast<std::size_t>(b)])
        return pick.chosen[static_cast<std::size_t>(a)] != 0;
      if (pending_first && (sa.reclaim_at_ms > 0) != (sb.reclaim_at_ms > 0)) return sa.reclaim_at_ms > 0;
      return investment_less(m, sa, sb);
    };
    const auto useless = [&](int s) {  // no short job's class may use the space this process frees
      const auto& mc = m.machines[static_cast<std::size_t>(m.shares[static_cast<std::size_t>(s)].machine)];
      return reach[static_cast<std::size_t>(mc.pool)] == 0;
    };
    chosen.clear();
    left.clear();
    if (reach.empty() || std::none_of(cands.begin(), cands.end(), useless)) {
      std::partial_sort(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(k), cands.end(), before);
      chosen.assign(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(k));
      left.assign(cands.begin() + static_cast<std::ptrdiff_t>(k), cands.end());
    } else {
      // Least investment first as always, but those whose space a short job's class may use go first, and of
      // the others only as many as the job must shed anyway to come down to its own cap (a shrink the job
      // itself asked for, as after its max_processes dropped).
      std::sort(cands.begin(), cands.end(), before);
      const auto usable =
          static_cast<std::size_t>(std::count_if(cands.begin(), cands.end(), [&](int s) { return !useless(s); }));
      const auto over_cap = static_cast<std::size_t>(
          std::clamp<std::int64_t>(m.current(j) - j.cap.cap, 0, static_cast<std::int64_t>(k)));
      const std::size_t take_usable = std::min(k, usable);
      const std::size_t take_useless = over_cap > take_usable ? over_cap - take_usable : 0;
      std::size_t usable_taken = 0, useless_taken = 0;
      for (int s : cands) {
        auto& taken = useless(s) ? useless_taken : usable_taken;
        if (taken < (useless(s) ? take_useless : take_usable)) {
          ++taken;
          chosen.push_back(s);
        } else {
          left.push_back(s);
        }
      }
    }
    // Those not chosen lose any deadline they carried (the surplus shrank).
    if (pending_first)
      for (int s : left) m.set_reclaim(s, 0);
    for (const int s : chosen) {
      auto& sh = m.shares[static_cast<std::size_t>(s)];
      if (!sh.published) {
        m.remove_share(s);  // never told anyone: just drop it
        continue;
      }
      if (grace > 0 && sh.reclaim_at_ms == 0) m.set_reclaim(s, now_ms + grace);
      if (grace > 0 && now_ms < sh.reclaim_at_ms) {
        if (m.next_reclaim_ms == 0 || sh.reclaim_at_ms < m.next_reclaim_ms) m.next_reclaim_ms = sh.reclaim_at_ms;
        continue;  // keeps running until its deadline
      }
      m.mark_removing(s, share_status::preempt);
    }
  }
}

}  // namespace rmbus::core
