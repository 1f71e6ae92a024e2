#include "core/preemption.hpp"

#include <algorithm>

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

void plan_preemptions(cluster_model& m) {
  // One sweep over the jobs (slot order) finds the few the three steps below look at. A fair-share job
  // that holds no more than its count now cannot come to hold more: the steps only take shares away.
  std::vector<int> reserving, fixed, surplus;
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    const auto& j = m.jobs[i];
    if (!j.live) continue;
    if (!j.reserve_machines.empty()) reserving.push_back(static_cast<int>(i));
    if (!j.fixed_machines.empty()) fixed.push_back(static_cast<int>(i));
    if (m.current(j) > j.given && m.policy_of(j) == policy::fair_share) surplus.push_back(static_cast<int>(i));
  }
  // First, machines earmarked for a reservation are cleared of preemptable work (the reservation's class
  // has the better priority; what is cleared there counts toward the owners' surplus below).
  for (int ji : reserving) {
    auto& j = m.jobs[static_cast<std::size_t>(ji)];
    for (int mc : j.reserve_machines) {
      const auto slots = m.machines[static_cast<std::size_t>(mc)].shares;
      for (int s : slots) {
        auto& sh = m.shares[static_cast<std::size_t>(s)];
        if (sh.job == ji || sh.fixed || sh.removing()) continue;
        if (!sh.published) m.remove_share(s);
        else m.mark_removing(s, share_status::preempt);
      }
      if (m.current(j) < j.given && j.reason == reason_code::none) {
        j.reason = reason_code::waiting_for_preemptions;
        j.reason_text = "Waiting for preemptions.";
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
        if (!m.shares[static_cast<std::size_t>(s)].published) m.remove_share(s);
        else m.mark_removing(s, share_status::preempt);
      }
      if (j.reason == reason_code::none) {
        j.reason = reason_code::waiting_for_preemptions;
        j.reason_text = "Waiting for preemptions.";
      }
    }
  }
  // Then every job above its count sheds the surplus, least investment first.
  std::vector<int> cands;
  for (int ji : surplus) {
    const auto& j = m.jobs[static_cast<std::size_t>(ji)];
    const int excess = m.current(j) - j.given;
    if (excess <= 0) continue;
    cands.clear();
    for (int s : j.shares) {
      const auto& sh = m.shares[static_cast<std::size_t>(s)];
      if (!sh.removing() && !sh.fixed && !sh.blacklisted) cands.push_back(s);
    }
    const auto k = static_cast<std::size_t>(std::min<int>(excess, static_cast<int>(cands.size())));
    std::partial_sort(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(k), cands.end(), [&](int a, int b) {
      return investment_less(m, m.shares[static_cast<std::size_t>(a)], m.shares[static_cast<std::size_t>(b)]);
    });
    for (std::size_t i = 0; i < k; ++i) {
      auto& sh = m.shares[static_cast<std::size_t>(cands[i])];
      if (!sh.published) m.remove_share(cands[i]);  // never told anyone: just drop it
      else m.mark_removing(cands[i], share_status::preempt);
    }
  }
}

}  // namespace rmbus::core
