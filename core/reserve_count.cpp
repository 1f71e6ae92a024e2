// How Much for RESERVE work (nonpreemptable_count.hpp): whole machines of the order asked for, a free one
// first, earmarked for the reservation (What Of places it there once preemption has cleared it).

#include <algorithm>

#include "core/nonpreemptable_count.hpp"
#include "core/quanta.hpp"
#include "core/what_of.hpp"

namespace rmbus::core {

bool nonpreemptable_counter::reserve_candidate(int mi) const {
  // No non-preemptable work on it, and not earmarked (both only ever become false within a round).
  return !t_.earmarked[static_cast<std::size_t>(mi)] &&
         t_.np_free[static_cast<std::size_t>(mi)] == m_.machines[static_cast<std::size_t>(mi)].order;
}

void nonpreemptable_counter::build_reserve_lists() {
  const auto orders = static_cast<std::size_t>(m_.max_order) + 1;
  reserve_lists_.assign(m_.pools.size(), std::vector<std::array<reserve_list, 3>>(orders));
  std::vector<std::int64_t> sort_key(m_.machines.size(), 0);
  for (std::size_t i = 0; i < m_.machines.size(); ++i) {
    const auto& mc = m_.machines[i];
    if (!mc.schedulable() || !reserve_candidate(static_cast<int>(i))) continue;
    const int live_used = mc.used - mc.removing;
    const int state = mc.used == 0 ? 0 : live_used == 0 ? 1 : 2;
    sort_key[i] =
        static_cast<std::int64_t>(live_used) * static_cast<std::int64_t>(m_.machines.size()) + t_.rank[i];
    reserve_lists_[static_cast<std::size_t>(mc.pool)][static_cast<std::size_t>(mc.order)]
                  [static_cast<std::size_t>(state)]
                      .machines.push_back(static_cast<int>(i));
  }
  for (auto& by_order : reserve_lists_)
    for (auto& states : by_order)
      for (auto& l : states)
        std::sort(l.machines.begin(), l.machines.end(), [&](int a, int b) {
          return sort_key[static_cast<std::size_t>(a)] < sort_key[static_cast<std::size_t>(b)];
        });
}

int nonpreemptable_counter::machines_of_order(int pool, int lo, int hi) {
  if (machines_by_order_.empty()) {
    machines_by_order_.assign(m_.pools.size(),
                              std::vector<int>(static_cast<std::size_t>(m_.max_order) + 1, 0));
    for (const auto& mc : m_.machines)
      if (!mc.foreign)
        ++machines_by_order_[static_cast<std::size_t>(mc.pool)][static_cast<std::size_t>(mc.order)];
  }
  int n = 0;
  for (int o = std::max(lo, 0); o <= std::min(hi, m_.max_order); ++o)
    n += machines_by_order_[static_cast<std::size_t>(pool)][static_cast<std::size_t>(o)];
  return n;
}

void nonpreemptable_counter::count_reserve(job_rec& j) {
  const int pool = m_.class_pool(j);
  const int cur = m_.current(j);
  const bool single = j.item.kind != work_kind::job;
  const std::int64_t want = single ? (j.cap.cap > 0 ? 1 : 0) : j.cap.cap;
  if (cur >= want) {
    j.given = cur;
    if (want == 0 && cur == 0) set_reason(j, reason_code::completed, "nothing more is given");
    return;
  }
  int lo = j.order, hi = j.order;
  bool fixed_size = false;
  for (int s : j.shares) {
    lo = hi = m_.shares[static_cast<std::size_t>(s)].order;  // the first machine fixed the size
    fixed_size = true;
  }
  if (!fixed_size && j.item.kind == work_kind::reservation && m_.settings.reserve_overage_mb > 0)
    hi = order_for_request(j.item.memory_mb + m_.settings.reserve_overage_mb, m_.quantum_mb);
  if (machines_of_order(pool, lo, hi) == 0) {
    const std::string_view never = " (reservations are never promoted to a larger machine)";
    if (hi > lo)
      set_reason(j, reason_code::no_machine_of_order, "no machine of order ", lo, " to ", hi, " (",
                 t_.size_of(lo), " to ", t_.size_of(hi), ") in pool ", t_.pool_name(pool), never);
    else
      set_reason(j, reason_code::no_machine_of_order, "no machine of order ", lo, " (", t_.size_of(lo),
                 ") in pool ", t_.pool_name(pool), never);
    j.given = cur;
    return;
  }
  const auto limit = t_.limit_mb(j.item.user);
  if (reserve_lists_.empty()) build_reserve_lists();
  auto& lists = reserve_lists_[static_cast<std::size_t>(pool)];
  int given = cur;
  bool stop = false;
  // Free machines first, then machines already being cleared, then the rest; each by order, then
  // less live use, then name (the lists hold that order; see build_reserve_lists).
  for (int state = 0; state < 3 && !stop && given < want; ++state) {
    for (int o = lo; o <= std::min(hi, m_.max_order) && !stop && given < want; ++o) {
      auto& list = lists[static_cast<std::size_t>(o)][static_cast<std::size_t>(state)];
      // Machines t_.earmarked or given non-preemptable work since stay out for the rest of the round.
      while (list.skip < list.machines.size() && !reserve_candidate(list.machines[list.skip])) ++list.skip;
      for (std::size_t k = list.skip; k < list.machines.size(); ++k) {
        if (given >= want) break;
        const int c = list.machines[k];
        if (!reserve_candidate(c) || !host_allowed(j, m_.machines[static_cast<std::size_t>(c)])) continue;
        auto& mc = m_.machines[static_cast<std::size_t>(c)];
        const std::uint64_t mb = static_cast<std::uint64_t>(mc.order) * m_.quantum_mb;
        if (limit && t_.np_mb[j.item.user] + mb > *limit) {
          t_.allotment_reason(j, *limit);
          stop = true;
          break;
        }
        fixed_unindex(c);
        t_.earmarked[static_cast<std::size_t>(c)] = 1;
        auto& tab = t_.local[static_cast<std::size_t>(pool)];
        if (tab.blocks(mc.order) > 0) tab.remove(mc.order, 1);
        t_.np_free[static_cast<std::size_t>(c)] = 0;
        t_.np_mb[j.item.user] += mb;
        j.reserve_machines.push_back(c);
        j.earmarks = true;
        ++given;
      }
    }
  }
  j.given = given;
  if (given < want && j.reason == reason_code::none)
    set_reason(j, reason_code::resources_exhausted, "every machine of order ", lo, " in pool ",
               t_.pool_name(pool), " is reserved or holds non-preemptable work");
}

}  // namespace rmbus::core
