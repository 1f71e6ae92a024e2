// How Much for FIXED_SHARE work (nonpreemptable_count.hpp): oldest first, own pool only, each process
// counted on the machine What Of will place it on, up to the user's allotment.

#include <algorithm>
#include <tuple>

#include "core/nonpreemptable_count.hpp"
#include "core/what_of.hpp"

namespace rmbus::core {

namespace {
// The index's sorted key lists (nonpreemptable_counter::key_list).
using sorted_keys = std::vector<std::pair<int, int>>;

void erase_key(sorted_keys& l, const std::pair<int, int>& k) {
  const auto it = std::lower_bound(l.begin(), l.end(), k);
  if (it != l.end() && *it == k) l.erase(it);
}

void insert_key(sorted_keys& l, const std::pair<int, int>& k) {
  const auto it = std::lower_bound(l.begin(), l.end(), k);
  if (it == l.end() || *it != k) l.insert(it, k);
}
}  // namespace

int nonpreemptable_counter::free_now(int mi) const {
  return std::min(
      m_.machines[static_cast<std::size_t>(mi)].free() - t_.counted_q[static_cast<std::size_t>(mi)],
      m_.max_order);
}

bool nonpreemptable_counter::fixed_candidate(int mi) const {
  return t_.np_free[static_cast<std::size_t>(mi)] > 0 && !t_.earmarked[static_cast<std::size_t>(mi)];
}

void nonpreemptable_counter::fixed_unindex(int mi) {
  auto& ix = fixed_idx_[static_cast<std::size_t>(m_.machines[static_cast<std::size_t>(mi)].pool)];
  if (!ix.built || !fixed_candidate(mi)) return;
  const key k{t_.np_free[static_cast<std::size_t>(mi)], t_.rank[static_cast<std::size_t>(mi)]};
  erase_key(ix.by_npf, k);
  const int f = free_now(mi);
  if (f > 0) erase_key(ix.by_free[static_cast<std::size_t>(f)], k);
}

void nonpreemptable_counter::fixed_index_machine(int mi) {
  auto& ix = fixed_idx_[static_cast<std::size_t>(m_.machines[static_cast<std::size_t>(mi)].pool)];
  if (!ix.built || !fixed_candidate(mi)) return;
  const key k{t_.np_free[static_cast<std::size_t>(mi)], t_.rank[static_cast<std::size_t>(mi)]};
  insert_key(ix.by_npf, k);
  const int f = free_now(mi);
  if (f > 0) insert_key(ix.by_free[static_cast<std::size_t>(f)], k);
}

void nonpreemptable_counter::build_fixed_index(int pool) {
  auto& ix = fixed_idx_[static_cast<std::size_t>(pool)];
  ix.built = true;
  ix.by_free.assign(static_cast<std::size_t>(m_.max_order) + 1, {});
  if (machine_of_rank_.empty()) {
    machine_of_rank_.assign(m_.machines.size(), -1);
    for (std::size_t mi = 0; mi < m_.machines.size(); ++mi)
      machine_of_rank_[static_cast<std::size_t>(t_.rank[mi])] = static_cast<int>(mi);
  }
  // The candidates by (np free, rank) without a comparison sort: taken in rank order, then placed by np
  // free (a counting sort, stable). Candidates are the pool's schedulable machines.
  std::vector<int> by_rank;
  int top = 0;
  for (int mi : machine_of_rank_) {
    if (mi < 0) continue;
    const auto& mc = m_.machines[static_cast<std::size_t>(mi)];
    if (mc.pool != pool || !mc.schedulable() || !fixed_candidate(mi)) continue;
    by_rank.push_back(mi);
    top = std::max(top, t_.np_free[static_cast<std::size_t>(mi)]);
  }
  std::vector<std::size_t> start(static_cast<std::size_t>(top) + 2, 0);
  for (int mi : by_rank) ++start[static_cast<std::size_t>(t_.np_free[static_cast<std::size_t>(mi)]) + 1];
  for (std::size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
  std::vector<int> sorted(by_rank.size());
  for (int mi : by_rank) {
    auto& at = start[static_cast<std::size_t>(t_.np_free[static_cast<std::size_t>(mi)])];
    sorted[at++] = mi;
  }
  ix.by_npf.clear();
  ix.by_npf.reserve(sorted.size());
  for (int mi : sorted) {
    const key k{t_.np_free[static_cast<std::size_t>(mi)], t_.rank[static_cast<std::size_t>(mi)]};
    ix.by_npf.push_back(k);
    const int f = free_now(mi);
    if (f > 0) ix.by_free[static_cast<std::size_t>(f)].push_back(k);
  }
  if (!service_jobs_built_) {
    service_jobs_built_ = true;
    for (std::size_t ji = 0; ji < m_.jobs.size(); ++ji)
      if (m_.jobs[ji].live && m_.jobs[ji].item.service_id != 0)
        service_jobs_[m_.jobs[ji].item.service_id].push_back(static_cast<int>(ji));
  }
}

int nonpreemptable_counter::pick_fixed_machine(const job_rec& j, int pool) {
  if (!fixed_idx_[static_cast<std::size_t>(pool)].built) build_fixed_index(pool);
  const auto& ix = fixed_idx_[static_cast<std::size_t>(pool)];
  // Machines in conflict: holding a share of this job or of its service, or counted for it already.
  auto& conflicts = conflict_scratch_;
  conflicts.assign(j.fixed_machines.begin(), j.fixed_machines.end());
  for (int s : j.shares) conflicts.push_back(m_.shares[static_cast<std::size_t>(s)].machine);
  if (j.item.service_id != 0) {
    auto it = service_jobs_.find(j.item.service_id);
    if (it != service_jobs_.end())
      for (int other : it->second)
        for (int s : m_.jobs[static_cast<std::size_t>(other)].shares)
          conflicts.push_back(m_.shares[static_cast<std::size_t>(s)].machine);
  }
  std::sort(conflicts.begin(), conflicts.end());
  conflicts.erase(std::unique(conflicts.begin(), conflicts.end()), conflicts.end());
  const auto usable = [&](int mi) {
    return !std::binary_search(conflicts.begin(), conflicts.end(), mi) &&
           host_allowed(j, m_.machines[static_cast<std::size_t>(mi)]);
  };
  const std::pair<int, int> from{j.order, -1};
  // 1. No conflict and fits now: the smallest (np free, rank) over every amount of free space >= order.
  std::pair<int, int> best{-1, -1};
  for (int f = j.order; f <= m_.max_order; ++f) {
    const auto& bucket = ix.by_free[static_cast<std::size_t>(f)];
    for (auto it = std::lower_bound(bucket.begin(), bucket.end(), from); it != bucket.end(); ++it) {
      if (best.first >= 0 && *it >= best) break;
      if (usable(machine_of_rank_[static_cast<std::size_t>(it->second)])) {
        best = *it;
        break;
      }
    }
  }
  if (best.first >= 0) return machine_of_rank_[static_cast<std::size_t>(best.second)];
  // 2. No conflict, does not fit now: the smallest (np free, rank).
  for (auto it = std::lower_bound(ix.by_npf.begin(), ix.by_npf.end(), from); it != ix.by_npf.end(); ++it)
    if (usable(machine_of_rank_[static_cast<std::size_t>(it->second)]))
      return machine_of_rank_[static_cast<std::size_t>(it->second)];
  // 3. Only machines in conflict are left: the best of those by (does not fit now, np free, rank).
  int pick = -1;
  std::tuple<bool, int, int> pick_key{};
  for (int mi : conflicts) {
    const auto& mc = m_.machines[static_cast<std::size_t>(mi)];
    if (mc.pool != pool || !mc.schedulable()) continue;
    const int npf = t_.np_free[static_cast<std::size_t>(mi)];
    if (npf < j.order || t_.earmarked[static_cast<std::size_t>(mi)] || !host_allowed(j, mc)) continue;
    const bool fits_now = mc.free() - t_.counted_q[static_cast<std::size_t>(mi)] >= j.order;
    const std::tuple<bool, int, int> key{!fits_now, npf, t_.rank[static_cast<std::size_t>(mi)]};
    if (pick < 0 || key < pick_key) {
      pick = mi;
      pick_key = key;
    }
  }
  return pick;
}

void nonpreemptable_counter::designate(job_rec& j, int mi) {
  fixed_unindex(mi);
  auto& tab = t_.local[static_cast<std::size_t>(m_.machines[static_cast<std::size_t>(mi)].pool)];
  int& npf = t_.np_free[static_cast<std::size_t>(mi)];
  if (tab.blocks(npf) > 0) {
    tab.remove(npf, 1);
    if (npf - j.order > 0) tab.add(npf - j.order, 1);
  } else if (tab.nshares(j.order) > 0) {
    tab.take_shares(j.order, 1);  // a better fair-share group reshaped the table: count it abstractly
  }
  npf -= j.order;
  t_.counted_q[static_cast<std::size_t>(mi)] += j.order;
  j.fixed_machines.push_back(mi);
  j.earmarks = true;
  fixed_index_machine(mi);
}

void nonpreemptable_counter::count_fixed(job_rec& j) {
  const int pool = m_.class_pool(j);
  const int cur = m_.current(j);
  const std::uint64_t proc_mb = static_cast<std::uint64_t>(j.order) * m_.quantum_mb;
  const auto limit = t_.limit_mb(j.item.user);
  std::int64_t target = j.item.kind == work_kind::job ? j.cap.cap : (j.cap.cap > 0 ? 1 : 0);
  if (cur >= target) {
    j.given = cur;  // non-preemptable work is never shrunk by its count
    if (cur == 0) set_reason(j, reason_code::completed, "its allocation ended; nothing more is given");
    return;
  }
  bool allot_limited = false;
  if (limit) {
    const std::int64_t allot_q = static_cast<std::int64_t>(*limit / m_.quantum_mb);
    const std::int64_t occ_q = static_cast<std::int64_t>(t_.np_mb[j.item.user] / m_.quantum_mb);
    const std::int64_t procs = std::max<std::int64_t>(0, allot_q - occ_q) / j.order;
    if (cur + procs < target) {
      target = cur + procs;
      allot_limited = true;
    }
  }
  int given = cur;
  while (given < target) {
    const int mi = pick_fixed_machine(j, pool);
    if (mi < 0) break;
    designate(j, mi);
    t_.np_mb[j.item.user] += proc_mb;
    ++given;
  }
  j.given = given;
  const std::int64_t wanted = j.item.kind == work_kind::job ? j.cap.cap : 1;
  if (given < wanted) {
    if (allot_limited && given == target)
      t_.allotment_reason(j, *limit);
    else
      t_.no_space_reason(j, pool, false);
  }
}

}  // namespace rmbus::core
