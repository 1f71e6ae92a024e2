#include "core/defragment.hpp"

#include <algorithm>
#include <map>

#include "core/free_blocks.hpp"
#include "core/preemption.hpp"
#include "core/prefetch.hpp"
#include "core/reason_text.hpp"

namespace rmbus::core {

namespace {

// Free space plus the space of shares being removed (kept by the share bookkeeping: machine_rec::removing),
// and of those running out a reclaim grace: preemption frees them when the deadline passes, so taking from
// the rich for the same need would free the space twice.
int hole_of(const machine_rec& mc) { return std::max(0, mc.free() + mc.removing + mc.reclaiming); }

class rich_taker {
 public:
  rich_taker(cluster_model& m, std::vector<int>& earmark) : m_(m), earmark_(earmark) {}

  // Clears machines for job ji until `need` processes fit; returns the need left.
  int take(int ji, int need) {
    auto& j = m_.jobs[static_cast<std::size_t>(ji)];
    const int threshold = m_.settings.fragmentation_threshold;
    const int np = m_.class_pool(j);
    const int prio = m_.priority_of(j);
    // Donors and their users' wealth (quanta held by the user's donor jobs).
    donor_cur_.assign(m_.jobs.size(), -1);
    std::map<user_id, std::int64_t> wealth;
    for (std::size_t d = 0; d < m_.jobs.size(); ++d) {
      const auto& dj = m_.jobs[d];
      if (!dj.live || dj.refused || dj.cls < 0 || static_cast<int>(d) == ji || dj.needy) continue;
      if (m_.policy_of(dj) != policy::fair_share || m_.priority_of(dj) < prio) continue;
      const int dp = m_.class_pool(dj);
      if (dp < 0 || !(m_.in_subtree(dp, np) || m_.in_subtree(np, dp))) continue;
      const int cur = m_.current(dj);
      if (cur < threshold) continue;
      if (dj.initialized == 0) continue;
      donor_cur_[d] = cur;
      wealth[dj.item.user] += static_cast<std::int64_t>(cur) * dj.order;
    }
    for (int guard = 0; need > 0 && guard < 1000; ++guard) {
      int best = -1;
      std::int64_t best_w = -1;
      for (std::size_t i = 0; i < m_.machines.size(); ++i) {
        const auto& mc = m_.machines[i];
        if (!mc.schedulable() || !m_.in_subtree(mc.pool, np) || mc.order < j.order) continue;
        if (earmark_[i] >= 0 && earmark_[i] != ji) continue;
        int avail = hole_of(mc);
        if (avail >= j.order) continue;  // already a hole; counted by detection
        std::int64_t w = -1;
        for (int s : mc.shares) {
          const auto& sh = m_.shares[static_cast<std::size_t>(s)];
          if (sh.removing() || sh.reclaim_at_ms > 0 || sh.fixed || donor_cur_[static_cast<std::size_t>(sh.job)] < threshold)
            continue;
          avail += sh.order;
          w = std::max(w, wealth[m_.jobs[static_cast<std::size_t>(sh.job)].item.user]);
        }
        if (avail < j.order) continue;
        const auto& bm = best >= 0 ? m_.machines[static_cast<std::size_t>(best)] : mc;
        if (best < 0 || w > best_w || (w == best_w && (mc.memory_mb > bm.memory_mb ||
                                                        (mc.memory_mb == bm.memory_mb && mc.name < bm.name)))) {
          best = static_cast<int>(i);
          best_w = w;
        }
      }
      if (best < 0) break;
      need -= clear(ji, best, wealth);
    }
    return std::max(0, need);
  }

 private:
  int clear(int ji, int mi, std::map<user_id, std::int64_t>& wealth) {
    auto& j = m_.jobs[static_cast<std::size_t>(ji)];
    const int threshold = m_.settings.fragmentation_threshold;
    std::vector<int> cands;
    for (int s : m_.machines[static_cast<std::size_t>(mi)].shares) {
      const auto& sh = m_.shares[static_cast<std::size_t>(s)];
      if (!sh.removing() && sh.reclaim_at_ms == 0 && !sh.fixed && donor_cur_[static_cast<std::size_t>(sh.job)] >= threshold)
        cands.push_back(s);
    }
    std::sort(cands.begin(), cands.end(), [&](int a, int b) {
      const auto& x = m_.shares[static_cast<std::size_t>(a)];
      const auto& y = m_.shares[static_cast<std::size_t>(b)];
      if ((x.order == j.order) != (y.order == j.order)) return x.order == j.order;
      const auto wx = wealth[m_.jobs[static_cast<std::size_t>(x.job)].item.user];
      const auto wy = wealth[m_.jobs[static_cast<std::size_t>(y.job)].item.user];
      if (wx != wy) return wx > wy;
      return investment_less(m_, x, y);
    });
    int handed = 0;
    for (int s : cands) {
      if (hole_of(m_.machines[static_cast<std::size_t>(mi)]) >= j.order) break;
      auto& sh = m_.shares[static_cast<std::size_t>(s)];
      const auto d = static_cast<std::size_t>(sh.job);
      if (donor_cur_[d] < threshold) continue;  // re-checked at every take
      --donor_cur_[d];
      wealth[m_.jobs[d].item.user] -= sh.order;
      if (!sh.published && sh.order == j.order) {
        m_.transfer_share(s, ji);  // never published: the allocation simply changes owner
        ++handed;
        continue;
      }
      if (!sh.published) m_.remove_share(s);
      else m_.mark_removing(s, share_status::preempt);
    }
    const int made = hole_of(m_.machines[static_cast<std::size_t>(mi)]) / j.order;
    if (made > 0) {
      if (j.needy_machine != mi) ++m_.round_needy_changes;
      j.needy_machine = mi;
      earmark_[static_cast<std::size_t>(mi)] = ji;
    }
    return made + handed;
  }

  cluster_model& m_;
  std::vector<int>& earmark_;
  std::vector<int> donor_cur_;
};

}  // namespace

void defragment(cluster_model& m) {
  const int threshold = m.settings.fragmentation_threshold;
  // One sweep over the jobs: reservations earmark their machines, and the potentially needy jobs are found
  // (best priority first, then oldest, once sorted below). A needy job's own machine is earmarked for it
  // afterwards, unless a reservation or a needy job before it (in slot order) has it.
  std::vector<int> earmark(m.machines.size(), -1);
  std::vector<int> cands;
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    prefetch_ahead(m.jobs, i);
    auto& j = m.jobs[i];
    if (!j.live) continue;
    if (j.earmarks)
      for (int mc : j.reserve_machines) earmark[static_cast<std::size_t>(mc)] = static_cast<int>(i);
    const int cur = m.current(j);
    const int needed = j.given - cur;
    bool potentially = !j.refused && j.cls >= 0 && m.class_pool(j) >= 0 && needed > 0 &&
                       m.policy_of(j) != policy::reserve && m.settings.defragmentation;
    if (potentially && m.policy_of(j) == policy::fair_share) {
      const std::int64_t pfs_processes = j.order > 0 ? j.pfs_qshares / j.order : 0;
      if (cur >= threshold || cur >= pfs_processes) potentially = false;
      // Under sparing preemption each claimed process already gets room made on one machine (R1).
      if (m.settings.preemption_policy == preemption_policy::sparing) potentially = false;
    }
    if (j.needy_machine >= 0 && !m.machines[static_cast<std::size_t>(j.needy_machine)].schedulable()) {
      j.needy_machine = -1;  // the machine kept for it went away: find another
      ++m.round_needy_changes;
    }
    if (!potentially) {
      if (j.needy || j.needy_machine >= 0) ++m.round_needy_changes;
      j.needy = false;
      j.needy_machine = -1;
      continue;
    }
    cands.push_back(static_cast<int>(i));
  }
  for (int i : cands) {
    const int mc = m.jobs[static_cast<std::size_t>(i)].needy_machine;
    if (mc >= 0 && earmark[static_cast<std::size_t>(mc)] < 0) earmark[static_cast<std::size_t>(mc)] = i;
  }
  if (cands.empty()) return;
  m.refresh_ranks();
  std::sort(cands.begin(), cands.end(), [&](int a, int b) {
    const auto& x = m.jobs[static_cast<std::size_t>(a)];
    const auto& y = m.jobs[static_cast<std::size_t>(b)];
    if (m.priority_of(x) != m.priority_of(y)) return m.priority_of(x) < m.priority_of(y);
    return m.job_rank[static_cast<std::size_t>(a)] < m.job_rank[static_cast<std::size_t>(b)];  // submitted, id
  });

  // Holes per pool, counted into the pool and every ancestor.
  std::vector<free_blocks> holes(m.pools.size(), free_blocks(m.max_order));
  for (std::size_t i = 0; i < m.machines.size(); ++i) {
    prefetch_ahead(m.machines, i);
    const auto& mc = m.machines[i];
    if (!mc.schedulable()) continue;
    if (earmark[i] >= 0) continue;  // earmarked space is spoken for
    const int h = hole_of(mc);
    if (h <= 0) continue;
    for (int p = mc.pool; p >= 0; p = m.pools[static_cast<std::size_t>(p)].parent) holes[static_cast<std::size_t>(p)].add(h);
  }

  rich_taker taker(m, earmark);
  for (int ji : cands) {
    auto& j = m.jobs[static_cast<std::size_t>(ji)];
    if (!j.needy) ++m.round_needy_changes;
    j.needy = true;
    const int need = std::min(j.given - m.current(j), std::max(1, threshold));
    int pool = m.class_pool(j);
    // Its own earmarked machine's hole counts for it first.
    int have = 0;
    if (j.needy_machine >= 0) have = hole_of(m.machines[static_cast<std::size_t>(j.needy_machine)]) / j.order;
    const std::int64_t avail = holes[static_cast<std::size_t>(pool)].nshares(j.order);
    const std::int64_t use = std::min<std::int64_t>(avail, std::max(0, need - have));
    for (int p = pool; p >= 0 && use > 0; p = m.pools[static_cast<std::size_t>(p)].parent) {
      auto& t = holes[static_cast<std::size_t>(p)];
      const std::int64_t k = std::min(use, t.nshares(j.order));
      if (k > 0) t.take_shares(j.order, k);
    }
    const int actual = need - have - static_cast<int>(use);
    if (actual <= 0) continue;
    const int left = m.policy_of(j) == policy::fair_share ? taker.take(ji, actual) : actual;
    (void)left;
    set_reason_text(j, reason_code::waiting_for_defragmentation, "Waiting for defragmentation.");
  }
}

}  // namespace rmbus::core
