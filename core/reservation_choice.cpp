#include "core/reservation_choice.hpp"

#include <algorithm>
#include <tuple>

#include "core/what_of.hpp"

namespace rmbus::core {

namespace {

// What clearing one machine would cost, in the order of reservation_choice.hpp (smaller is better).
using clearing_cost = std::tuple<std::int64_t, std::int64_t, int, int>;  // below count, invested, live, rank

class reservation_chooser {
 public:
  explicit reservation_chooser(cluster_model& m) : m_(m), n_users_(m.users.size()) {
    above_q_.assign(m.classes.size() * std::max<std::size_t>(1, n_users_), 0);
    for (const auto& j : m.jobs) {
      if (!fair(j)) continue;
      above_q_[unit(j)] += (static_cast<std::int64_t>(m.current(j)) - j.given) * j.order;
    }
    held_at_.assign(m.machines.size(), {-1, -1});
    taken_.assign(m.machines.size(), 0);
    for (const auto& j : m.jobs)
      if (j.live && j.earmarks) {
        for (int mc : j.reserve_machines) taken_[static_cast<std::size_t>(mc)] = 1;
        for (int mc : j.fixed_machines) taken_[static_cast<std::size_t>(mc)] = 1;
      }
  }

  void choose_for(int ji) {
    auto& j = m_.jobs[static_cast<std::size_t>(ji)];
    for (int& earmarked : j.reserve_machines) {
      if (!holds_running_work(earmarked, ji)) continue;  // free or being cleared: costs nothing more
      int best = earmarked;
      clearing_cost best_cost = cost_of(earmarked, ji);
      const auto& em = m_.machines[static_cast<std::size_t>(earmarked)];
      for (int mi : clearable(em.order, em.pool)) {
        if (taken_[static_cast<std::size_t>(mi)] || !host_allowed(j, m_.machines[static_cast<std::size_t>(mi)]))
          continue;
        const auto c = cost_of(mi, ji);
        if (c < best_cost) {
          best = mi;
          best_cost = c;
        }
      }
      taken_[static_cast<std::size_t>(earmarked)] = 0;
      taken_[static_cast<std::size_t>(best)] = 1;
      earmarked = best;
      for (int s : m_.machines[static_cast<std::size_t>(best)].shares) {  // its owners are that much less above
        const auto& sh = m_.shares[static_cast<std::size_t>(s)];
        if (victim(sh, ji)) above_q_[unit(m_.jobs[static_cast<std::size_t>(sh.job)])] -= sh.order;
      }
    }
  }

 private:
  // What cost_of reads of one process a clearing would preempt (nothing it reads changes while choosing).
  struct held {
    int job;
    int unit;  // its (class, user) if fair-share work, -1 if not
    int order;
    std::int64_t invested;  // initialization and in-flight work time
  };

  bool fair(const job_rec& j) const {
    return j.live && j.cls >= 0 && j.user_slot >= 0 && m_.policy_of(j) == policy::fair_share;
  }
  std::size_t unit(const job_rec& j) const {
    return static_cast<std::size_t>(j.cls) * n_users_ + static_cast<std::size_t>(j.user_slot);
  }
  // What plan_preemptions clears off a reservation's machine.
  static bool victim(const share_rec& sh, int ji) { return sh.job != ji && !sh.fixed && !sh.removing(); }
  bool holds_running_work(int mi, int ji) const {
    for (int s : m_.machines[static_cast<std::size_t>(mi)].shares)
      if (victim(m_.shares[static_cast<std::size_t>(s)], ji)) return true;
    return false;
  }
  // The machines a reservation of `order` in `pool` may clear instead (free of non-preemptable work and
  // schedulable), by slot; listed once per round and kind, not walked per reservation.
  const std::vector<int>& clearable(int order, int pool) {
    for (const auto& k : clearable_)
      if (k.order == order && k.pool == pool) return k.machines;
    clearable_.push_back({order, pool, {}});
    auto& list = clearable_.back().machines;
    for (std::size_t mi = 0; mi < m_.machines.size(); ++mi) {
      const auto& mc = m_.machines[mi];
      if (mc.order == order && mc.pool == pool && mc.schedulable() && mc.nonpreemptable_used == 0)
        list.push_back(static_cast<int>(mi));
    }
    return list;
  }
  // The processes on machine `mi` a clearing would preempt but for the reservation's own, read once.
  std::pair<const held*, const held*> held_on(int mi) {
    auto& [b, e] = held_at_[static_cast<std::size_t>(mi)];
    if (b < 0) {
      b = static_cast<int>(held_.size());
      for (int s : m_.machines[static_cast<std::size_t>(mi)].shares) {
        const auto& sh = m_.shares[static_cast<std::size_t>(s)];
        if (sh.fixed || sh.removing()) continue;
        const auto& v = m_.jobs[static_cast<std::size_t>(sh.job)];
        held_.push_back({sh.job, fair(v) ? static_cast<int>(unit(v)) : -1, sh.order, sh.init_ms + sh.run_ms});
      }
      e = static_cast<int>(held_.size());
    }
    return {held_.data() + b, held_.data() + e};
  }
  clearing_cost cost_of(int mi, int ji) {
    std::int64_t invested = 0;
    int live = 0;
    touched_.clear();
    const auto [b, e] = held_on(mi);
    for (const held* h = b; h != e; ++h) {
      if (h->job == ji) continue;
      invested += h->invested;
      live += h->order;
      if (h->unit < 0) continue;
      const auto u = static_cast<std::size_t>(h->unit);
      auto it = std::find_if(touched_.begin(), touched_.end(), [&](const auto& t) { return t.first == u; });
      if (it == touched_.end()) touched_.emplace_back(u, h->order);
      else it->second += h->order;
    }
    std::int64_t below = 0;  // what the machine takes from its owners beyond what they hold above their counts
    for (const auto& [u, q] : touched_) below += q - std::clamp<std::int64_t>(above_q_[u], 0, q);
    return {below, invested, live, m_.machine_rank[static_cast<std::size_t>(mi)]};
  }

  struct clearable_kind {
    int order;
    int pool;
    std::vector<int> machines;
  };

  cluster_model& m_;
  std::size_t n_users_;
  std::vector<std::int64_t> above_q_;  // per (class, user): quanta held above its count (negative: below)
  std::vector<char> taken_;            // per machine: earmarked this round
  std::vector<std::pair<std::size_t, std::int64_t>> touched_;  // cost_of's scratch: quanta per unit
  std::vector<clearable_kind> clearable_;
  std::vector<held> held_;                      // per machine read so far, adjacent
  std::vector<std::pair<int, int>> held_at_;    // per machine: its range in held_ (-1: not read yet)
};

}  // namespace

void choose_sparing_reservation_machines(cluster_model& m, std::vector<int> reserving) {
  if (reserving.empty()) return;
  std::sort(reserving.begin(), reserving.end(), [&](int a, int b) {  // oldest first, as How Much counts them
    return m.job_rank[static_cast<std::size_t>(a)] < m.job_rank[static_cast<std::size_t>(b)];
  });
  reservation_chooser chooser(m);
  for (int ji : reserving) chooser.choose_for(ji);
}

}  // namespace rmbus::core
