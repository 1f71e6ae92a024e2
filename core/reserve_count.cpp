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

void nonpreemptable_counter::build_reserve_lists(int pool, int order) {
  if (reserve_lists_.empty())
    reserve_lists_.assign(m_.pools.size(), std::vector<std::array<reserve_list, 3>>(
                                               static_cast<std::size_t>(m_.max_order) + 1));
  auto& lists = reserve_lists_[static_cast<std::size_t>(pool)][static_cast<std::size_t>(order)];
  const auto& machines =
      t_.schedulable_by_order[static_cast<std::size_t>(pool)][static_cast<std::size_t>(order)];
  for (int mi : machines) {
    if (!reserve_candidate(mi)) continue;
    const auto& mc = m_.machines[static_cast<std::size_t>(mi)];
    const int live_used = mc.used - mc.removing;
    const int state = mc.used == 0 ? 0 : live_used == 0 ? 1 : 2;
    const auto key = static_cast<std::int64_t>(live_used) << 32 | static_cast<std::uint32_t>(t_.rank[mi]);
    lists[static_cast<std::size_t>(state)].keyed.emplace_back(key, mi);
  }
  for (auto& l : lists) l.built = true;
}

int nonpreemptable_counter::machine_at(reserve_list& list, std::size_t k) {
  if (k >= list.sorted) order_more(list);
  return k < list.keyed.size() ? list.keyed[k].second : -1;
}

// Puts the list's next candidates in walk order: a reservation takes a machine or two, and a round's
// reservations rarely reach far into a list of thousands, so the rest is left unsorted (nth_element).
void nonpreemptable_counter::order_more(reserve_list& list) {
  auto& v = list.keyed;
  if (list.sorted >= v.size()) return;
  const std::size_t chunk = std::max<std::size_t>(32, list.sorted);
  const auto from = v.begin() + static_cast<std::ptrdiff_t>(list.sorted);
  const auto to = list.sorted + chunk >= v.size() ? v.end() : from + static_cast<std::ptrdiff_t>(chunk);
  if (to != v.end()) std::nth_element(from, to, v.end());
  std::sort(from, to);
  list.sorted = static_cast<std::size_t>(to - v.begin());
}

int nonpreemptable_counter::machines_of_order(int pool, int lo, int hi) const {
  int n = 0;
  for (int o = std::max(lo, 0); o <= std::min(hi, m_.max_order); ++o)
    n += t_.machines_by_order[static_cast<std::size_t>(pool)][static_cast<std::size_t>(o)];
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
  int given = cur;
  bool stop = false;
  // Free machines first, then machines already being cleared, then the rest; each by order, then
  // less live use, then name (the lists hold that order; see build_reserve_lists).
  for (int state = 0; state < 3 && !stop && given < want; ++state) {
    for (int o = lo; o <= std::min(hi, m_.max_order) && !stop && given < want; ++o) {
      if (reserve_lists_.empty() ||
          !reserve_lists_[static_cast<std::size_t>(pool)][static_cast<std::size_t>(o)][0].built)
        build_reserve_lists(pool, o);
      auto& list = reserve_lists_[static_cast<std::size_t>(pool)][static_cast<std::size_t>(o)]
                                 [static_cast<std::size_t>(state)];
      // Machines earmarked or given non-preemptable work since stay out for the rest of the round.
      while (machine_at(list, list.skip) >= 0 && !reserve_candidate(machine_at(list, list.skip))) ++list.skip;
      for (std::size_t k = list.skip; given < want; ++k) {
        const int c = machine_at(list, k);
        if (c < 0) break;
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
