#include "core/how_much.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <tuple>

#include "core/apportion.hpp"
#include "core/free_blocks.hpp"
#include "core/job_caps.hpp"
#include "core/quanta.hpp"
#include "core/reason_text.hpp"
#include "core/share_tree.hpp"
#include "core/what_of.hpp"

namespace rmbus::core {

int count_machines_of_order(const cluster_model& m, int pool, int lo, int hi, bool subtree) {
  int n = 0;
  for (const auto& mc : m.machines) {
    if (mc.foreign) continue;
    const bool in_pool = subtree ? m.in_subtree(mc.pool, pool) : mc.pool == pool;
    if (in_pool && mc.order >= lo && mc.order <= hi) ++n;
  }
  return n;
}

namespace {

// Sorts v ascending by key(x), stable, by bytes from the least significant up (a byte all keys share is
// skipped). The fair-share split sorted each class's jobs twice a round by comparison, some 7% of a round's
// instructions; these keys (ranks and slots) have two or three bytes that differ.
template <class T, class Key>
void radix_sort(std::vector<T>& v, std::vector<T>& tmp, Key key) {
  if (v.size() < 2) return;
  std::array<std::array<std::size_t, 256>, 8> count{};
  for (const T& x : v) {
    const std::uint64_t k = key(x);
    for (std::size_t b = 0; b < 8; ++b) ++count[b][(k >> (8 * b)) & 0xff];
  }
  tmp.resize(v.size());
  for (std::size_t b = 0; b < 8; ++b) {
    auto& c = count[b];
    if (c[(key(v.front()) >> (8 * b)) & 0xff] == v.size()) continue;  // every key has this byte
    std::size_t at = 0;
    for (auto& n : c) {
      const std::size_t here = n;
      n = at;
      at += here;
    }
    for (const T& x : v) tmp[c[(key(x) >> (8 * b)) & 0xff]++] = x;
    v.swap(tmp);
  }
}

// Why a job of a class that got something was counted nothing, as its text says it.
enum class nothing_cause : std::uint64_t { none, smaller_than_a_process, went_to_other_jobs };
const char* cause_text(nothing_cause c) {
  switch (c) {
    case nothing_cause::smaller_than_a_process: return " is smaller than one process: ";
    case nothing_cause::went_to_other_jobs: return " went to its other jobs: ";
    case nothing_cause::none: break;
  }
  return ", ";
}

// All that a "counted nothing" text is written from, packed (job_rec::reason_key): the class (its name), the
// user's slot (its name), its share group, the job's order (its size: the quantum is the model's), the
// cause, and whether the class got nothing. 0 when a field does not fit its bits: that text is compared.
std::uint64_t nothing_counted_key(int cls, int user_slot, int group, int order, nothing_cause cause,
                                  bool class_got_nothing) {
  const bool fits = cls >= 0 && cls < (1 << 12) && user_slot >= 0 && user_slot < (1 << 22) && group >= -1 &&
                    group < (1 << 10) - 1 && order >= 0 && order < (1 << 16);
  if (!fits) return 0;
  using u64 = std::uint64_t;
  return u64{1} << 63 | u64{class_got_nothing} << 62 | static_cast<u64>(cause) << 60 |
         static_cast<u64>(cls) << 48 | static_cast<u64>(user_slot) << 26 | static_cast<u64>(group + 1) << 16 |
         static_cast<u64>(order);
}

// What the fair-share split needs of one job, gathered once from the job records, in slot order (the
// records are read front to back), instead of read again at each level in the order of users.
struct class_job {
  std::uint64_t key;  // (user rank, job rank): users by name, each user's jobs oldest first
  int slot;
  int order;
  std::int64_t cap;
  int user_slot;      // the job's user, as the model numbers users
  int group;          // its share group (-1: none)
  int user;           // index into the split's users (written by the split)
  int held;           // processes it holds (cluster_model::current), read before the split; not an input
  std::int64_t given;  // written by the split

  // Equal in all that the split reads of the job.
  bool same_input(const class_job& o) const {
    return key == o.key && slot == o.slot && order == o.order && cap == o.cap && user_slot == o.user_slot &&
           group == o.group;
  }
};

// One user's jobs in a split: positions [begin, end) of the jobs in key order.
struct user_jobs {
  int user_slot;
  std::size_t begin, end;
};

}  // namespace

// One class's split among its users and jobs: what it was computed from, and what the write into the job
// records reads.
struct how_much_cache::class_split {
  std::vector<std::int64_t> class_given;
  std::vector<std::pair<int, std::int64_t>> orders;
  std::int64_t class_pfs = 0;
  int largest = 0;  // the largest machine order of the class's pool tree

  // In slot order, each with its user and what it was given. Also the inputs it was computed from: the
  // split writes only `user` and `given` (same_input compares the rest).
  std::vector<class_job> jobs;
  std::vector<user_jobs> by_user;
  std::vector<std::int64_t> user_qshares;
  std::vector<std::int64_t> tree_user_pfs;  // group path: each user's pure fair share
  std::vector<std::int64_t> group_qshares;  // group path: quanta given to each group of the class's tree
  std::vector<group_load> groups;           // group path: what it added to how_much_result::groups

  // Each user's split among its jobs (only when kept), so that a class split again after one change splits
  // again only the users whose award or jobs changed: the user's award by order, and its jobs' (order, cap)
  // in the order they are served, with what each was given.
  struct user_part {
    int user_slot;
    std::vector<std::pair<int, std::int64_t>> orders;
    std::vector<std::int64_t> given;
    std::size_t first;  // its jobs: job_wants[first, first + count)
    std::size_t count;
  };
  std::vector<user_part> user_parts;
  std::vector<std::pair<int, std::int64_t>> job_wants;
  std::vector<std::int64_t> job_given;

  bool computed_from(const std::vector<class_job>& cj, const std::vector<std::int64_t>& given,
                     const std::vector<std::pair<int, std::int64_t>>& wanted, std::int64_t pfs, int big) const {
    if (pfs != class_pfs || big != largest || given != class_given || wanted != orders || cj.size() != jobs.size())
      return false;
    for (std::size_t k = 0; k < cj.size(); ++k)
      if (!cj[k].same_input(jobs[k])) return false;
    return true;
  }
};

namespace {

struct counter {
  counter(cluster_model& model, const round_input& input) : m(model), in(input) {}

  cluster_model& m;
  const round_input& in;
  std::vector<free_blocks> local;        // per pool: free space not held by non-preemptable work
  std::vector<char> earmarked;           // per machine: earmarked for a reservation this round
  std::map<user_id, std::uint64_t> np_mb;  // per user: non-preemptable MB held or counted
  how_much_result out;
  std::vector<int> max_local, max_subtree;  // per pool: largest machine order (any state)
  std::vector<int> np_free;                 // per machine: quanta not held by non-preemptable work
  std::vector<int> counted_q;               // per machine: quanta of fixed processes counted on it now
  std::vector<std::vector<int>> pool_machines;  // per pool: its schedulable machines
  std::vector<int> rank;                    // per machine: position by name
  std::vector<apportion_entity> job_entities;  // split_class's scratch
  apportion_workspace apportion_ws;            // reused by every apportion_qshares of the round
  how_much_cache* cache = nullptr;             // kept splits of earlier rounds (none: every split computed)
  std::vector<int> part_of_user;               // compute_split's scratch: a kept split's user part by user slot

  void index_orders() {
    max_local.assign(m.pools.size(), 0);
    for (const auto& mc : m.machines)
      if (!mc.foreign)
        max_local[static_cast<std::size_t>(mc.pool)] = std::max(max_local[static_cast<std::size_t>(mc.pool)], mc.order);
    max_subtree = max_local;
    for (int p : m.pool_postorder) {  // children come first
      const int parent = m.pools[static_cast<std::size_t>(p)].parent;
      if (parent >= 0)
        max_subtree[static_cast<std::size_t>(parent)] =
            std::max(max_subtree[static_cast<std::size_t>(parent)], max_subtree[static_cast<std::size_t>(p)]);
    }
  }

  std::optional<std::uint64_t> limit_mb(const user_id& u) const {
    for (const auto& l : m.user_limits)
      if (l.user == u.str() && l.max_allotment_mb) return l.max_allotment_mb;
    return m.settings.global_allotment_mb;
  }

  const std::string& pool_name(int p) const { return m.pools[static_cast<std::size_t>(p)].name; }

  void allotment_reason(job_rec& j, std::uint64_t limit) const {
    const auto it = np_mb.find(j.item.user);
    const std::uint64_t held = it == np_mb.end() ? 0 : it->second;
    set_reason(j, reason_code::allotment_exceeded, "user ", j.item.user.str(), " at allotment ",
               held / m.quantum_mb, " of ", limit / m.quantum_mb, " quanta (a process needs ", j.order, ", ",
               size_of(j.order), ")");
  }

  // An order's memory as a part of a reason text ("48 GB"): orders read in people's units.
  memory_size size_of(int order) const {
    return {static_cast<std::uint64_t>(std::max(0, order)) * m.quantum_mb};
  }

  // Work larger than every machine of its pool says so, with the sizes: it can run only if a larger
  // machine joins. `largest`: the pool's largest machine order (0: it has none).
  void no_machine_reason(job_rec& j, int pool, int largest) const {
    if (largest <= 0)
      set_reason(j, reason_code::no_machine_of_order, "no machine of order ", j.order, " (", size_of(j.order),
                 ") in pool ", pool_name(pool), ": the pool has no machines");
    else
      set_reason(j, reason_code::no_machine_of_order, "no machine of order ", j.order, " (", size_of(j.order),
                 ") in pool ", pool_name(pool), ": larger than every machine there (the largest is order ",
                 largest, ", ", size_of(largest), "); it runs only if a larger machine joins");
  }

  void no_space_reason(job_rec& j, int pool, bool subtree) const {
    const auto& mx = subtree ? max_subtree : max_local;
    if (mx[static_cast<std::size_t>(pool)] < j.order)
      no_machine_reason(j, pool, mx[static_cast<std::size_t>(pool)]);
    else
      set_reason(j, reason_code::resources_exhausted, "no free space of order ", j.order, " in pool ", pool_name(pool),
                 ": held by non-preemptable work");
  }

  // A non-preemptable process is counted on a definite machine: the one What Of will use. Counting it
  // on the abstract tables instead (DUCC) makes the tables of the next round, when the process holds
  // its machine, differ in shape from this round's, and the fair-share counts drift with an unchanged
  // input. Choice: spread first (no share of the same service or job there), then a machine where it
  // fits now without preemption, then the smallest non-preemptable free space (best fit), then name.
  //
  // Found without scanning every machine (that cost processes x machines x shares per round): the
  // candidates of a pool are kept ordered by (non-preemptable free, name rank), once in all and once per
  // amount of free space now; the few machines in conflict (this job's and its service's) are listed
  // from the job's side and skipped. Machine keys only change in designate() and when a reservation
  // earmarks a machine, which re-index it.
  // Sorted vectors, not trees: a round builds the index of every machine for a few dozen picks, and moves
  // fewer than a hundred keys (a tree cost some 20,000 node allocations a round; a key moved in a vector
  // of 10,000 costs a memmove of a few tens of KB).
  using key = std::pair<int, int>;
  using key_list = std::vector<key>;  // ascending, no duplicates
  struct fixed_index {
    bool built = false;
    key_list by_npf;                 // (np free, rank) of candidates
    std::vector<key_list> by_free;   // [free now] -> (np free, rank)
  };
  std::vector<fixed_index> fixed_idx;  // per pool, built on the first pick of the round
  static void erase_key(key_list& l, const key& k) {
    const auto it = std::lower_bound(l.begin(), l.end(), k);
    if (it != l.end() && *it == k) l.erase(it);
  }
  static void insert_key(key_list& l, const key& k) {
    const auto it = std::lower_bound(l.begin(), l.end(), k);
    if (it == l.end() || *it != k) l.insert(it, k);
  }
  std::vector<int> machine_of_rank;
  std::map<std::uint64_t, std::vector<int>> service_jobs;  // service id -> live jobs (built with the index)
  std::vector<int> conflict_scratch;                        // pick_fixed_machine's
  bool service_jobs_built = false;

  int free_now(int mi) const {
    return std::min(m.machines[static_cast<std::size_t>(mi)].free() - counted_q[static_cast<std::size_t>(mi)], m.max_order);
  }
  bool fixed_candidate(int mi) const {
    return np_free[static_cast<std::size_t>(mi)] > 0 && !earmarked[static_cast<std::size_t>(mi)];
  }
  // Call before and after changing a machine's np_free, counted_q or earmark.
  void fixed_unindex(int mi) {
    auto& ix = fixed_idx[static_cast<std::size_t>(m.machines[static_cast<std::size_t>(mi)].pool)];
    if (!ix.built || !fixed_candidate(mi)) return;
    const key k{np_free[static_cast<std::size_t>(mi)], rank[static_cast<std::size_t>(mi)]};
    erase_key(ix.by_npf, k);
    const int f = free_now(mi);
    if (f > 0) erase_key(ix.by_free[static_cast<std::size_t>(f)], k);
  }
  void fixed_index_machine(int mi) {
    auto& ix = fixed_idx[static_cast<std::size_t>(m.machines[static_cast<std::size_t>(mi)].pool)];
    if (!ix.built || !fixed_candidate(mi)) return;
    const key k{np_free[static_cast<std::size_t>(mi)], rank[static_cast<std::size_t>(mi)]};
    insert_key(ix.by_npf, k);
    const int f = free_now(mi);
    if (f > 0) insert_key(ix.by_free[static_cast<std::size_t>(f)], k);
  }
  void build_fixed_index(int pool) {
    auto& ix = fixed_idx[static_cast<std::size_t>(pool)];
    ix.built = true;
    ix.by_free.assign(static_cast<std::size_t>(m.max_order) + 1, {});
    if (machine_of_rank.empty()) {
      machine_of_rank.assign(m.machines.size(), -1);
      for (std::size_t mi = 0; mi < m.machines.size(); ++mi) machine_of_rank[static_cast<std::size_t>(rank[mi])] = static_cast<int>(mi);
    }
    // The candidates by (np free, rank) without a comparison sort: taken in rank order, then placed by np
    // free (a counting sort, stable). Candidates are the pool's schedulable machines (pool_machines).
    std::vector<int> by_rank;
    int top = 0;
    for (int mi : machine_of_rank) {
      if (mi < 0) continue;
      const auto& mc = m.machines[static_cast<std::size_t>(mi)];
      if (mc.pool != pool || !mc.schedulable() || !fixed_candidate(mi)) continue;
      by_rank.push_back(mi);
      top = std::max(top, np_free[static_cast<std::size_t>(mi)]);
    }
    std::vector<std::size_t> start(static_cast<std::size_t>(top) + 2, 0);
    for (int mi : by_rank) ++start[static_cast<std::size_t>(np_free[static_cast<std::size_t>(mi)]) + 1];
    for (std::size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
    std::vector<int> sorted(by_rank.size());
    for (int mi : by_rank) {
      auto& at = start[static_cast<std::size_t>(np_free[static_cast<std::size_t>(mi)])];
      sorted[at++] = mi;
    }
    ix.by_npf.clear();
    ix.by_npf.reserve(sorted.size());
    for (int mi : sorted) {
      const key k{np_free[static_cast<std::size_t>(mi)], rank[static_cast<std::size_t>(mi)]};
      ix.by_npf.push_back(k);
      const int f = free_now(mi);
      if (f > 0) ix.by_free[static_cast<std::size_t>(f)].push_back(k);
    }
    if (!service_jobs_built) {
      service_jobs_built = true;
      for (std::size_t ji = 0; ji < m.jobs.size(); ++ji)
        if (m.jobs[ji].live && m.jobs[ji].item.service_id != 0)
          service_jobs[m.jobs[ji].item.service_id].push_back(static_cast<int>(ji));
    }
  }

  int pick_fixed_machine(const job_rec& j, int pool) {
    if (!fixed_idx[static_cast<std::size_t>(pool)].built) build_fixed_index(pool);
    const auto& ix = fixed_idx[static_cast<std::size_t>(pool)];
    // Machines in conflict: holding a share of this job or of its service, or counted for it already.
    auto& conflicts = conflict_scratch;
    conflicts.assign(j.fixed_machines.begin(), j.fixed_machines.end());
    for (int s : j.shares) conflicts.push_back(m.shares[static_cast<std::size_t>(s)].machine);
    if (j.item.service_id != 0) {
      auto it = service_jobs.find(j.item.service_id);
      if (it != service_jobs.end())
        for (int other : it->second)
          for (int s : m.jobs[static_cast<std::size_t>(other)].shares) conflicts.push_back(m.shares[static_cast<std::size_t>(s)].machine);
    }
    std::sort(conflicts.begin(), conflicts.end());
    conflicts.erase(std::unique(conflicts.begin(), conflicts.end()), conflicts.end());
    const auto usable = [&](int mi) {
      return !std::binary_search(conflicts.begin(), conflicts.end(), mi) &&
             host_allowed(j, m.machines[static_cast<std::size_t>(mi)]);
    };
    const std::pair<int, int> from{j.order, -1};
    // 1. No conflict and fits now: the smallest (np free, rank) over every amount of free space >= order.
    std::pair<int, int> best{-1, -1};
    for (int f = j.order; f <= m.max_order; ++f) {
      const auto& bucket = ix.by_free[static_cast<std::size_t>(f)];
      for (auto it = std::lower_bound(bucket.begin(), bucket.end(), from); it != bucket.end(); ++it) {
        if (best.first >= 0 && *it >= best) break;
        if (usable(machine_of_rank[static_cast<std::size_t>(it->second)])) {
          best = *it;
          break;
        }
      }
    }
    if (best.first >= 0) return machine_of_rank[static_cast<std::size_t>(best.second)];
    // 2. No conflict, does not fit now: the smallest (np free, rank).
    for (auto it = std::lower_bound(ix.by_npf.begin(), ix.by_npf.end(), from); it != ix.by_npf.end(); ++it)
      if (usable(machine_of_rank[static_cast<std::size_t>(it->second)])) return machine_of_rank[static_cast<std::size_t>(it->second)];
    // 3. Only machines in conflict are left: the best of those by (does not fit now, np free, rank).
    int pick = -1;
    std::tuple<bool, int, int> pick_key{};
    for (int mi : conflicts) {
      const auto& mc = m.machines[static_cast<std::size_t>(mi)];
      if (mc.pool != pool || !mc.schedulable()) continue;
      const int npf = np_free[static_cast<std::size_t>(mi)];
      if (npf < j.order || earmarked[static_cast<std::size_t>(mi)] || !host_allowed(j, mc)) continue;
      const bool fits_now = mc.free() - counted_q[static_cast<std::size_t>(mi)] >= j.order;
      const std::tuple<bool, int, int> key{!fits_now, npf, rank[static_cast<std::size_t>(mi)]};
      if (pick < 0 || key < pick_key) {
        pick = mi;
        pick_key = key;
      }
    }
    return pick;
  }

  void designate(job_rec& j, int ji, int mi) {
    (void)ji;
    fixed_unindex(mi);
    auto& tab = local[static_cast<std::size_t>(m.machines[static_cast<std::size_t>(mi)].pool)];
    int& npf = np_free[static_cast<std::size_t>(mi)];
    if (tab.blocks(npf) > 0) {
      tab.remove(npf, 1);
      if (npf - j.order > 0) tab.add(npf - j.order, 1);
    } else if (tab.nshares(j.order) > 0) {
      tab.take_shares(j.order, 1);  // a better fair-share group reshaped the table: count it abstractly
    }
    npf -= j.order;
    counted_q[static_cast<std::size_t>(mi)] += j.order;
    j.fixed_machines.push_back(mi);
    j.earmarks = true;
    fixed_index_machine(mi);
  }

  void count_fixed(job_rec& j, int ji) {
    const int pool = m.class_pool(j);
    const int cur = m.current(j);
    const std::uint64_t proc_mb = static_cast<std::uint64_t>(j.order) * m.quantum_mb;
    const auto limit = limit_mb(j.item.user);
    std::int64_t target = j.item.kind == work_kind::job ? j.cap.cap : (j.cap.cap > 0 ? 1 : 0);
    if (cur >= target) {
      j.given = cur;  // non-preemptable work is never shrunk by its count
      if (cur == 0) set_reason(j, reason_code::completed, "its allocation ended; nothing more is given");
      return;
    }
    bool allot_limited = false;
    if (limit) {
      const std::int64_t allot_q = static_cast<std::int64_t>(*limit / m.quantum_mb);
      const std::int64_t occ_q = static_cast<std::int64_t>(np_mb[j.item.user] / m.quantum_mb);
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
      designate(j, ji, mi);
      np_mb[j.item.user] += proc_mb;
      ++given;
    }
    j.given = given;
    const std::int64_t wanted = j.item.kind == work_kind::job ? j.cap.cap : 1;
    if (given < wanted) {
      if (allot_limited && given == target)
        allotment_reason(j, *limit);
      else
        no_space_reason(j, pool, false);
    }
  }

  // Machines a reservation may take, per pool and order, in three lists by state (0: empty, 1: holding
  // only shares on their way out, 2: holding live fair-share work), each by live use then name: the order
  // in which reservations take them. Built once per round (O(M log M)) instead of a scan and sort of
  // every machine per reservation; a cursor per list skips machines taken meanwhile.
  struct reserve_list {
    std::vector<int> machines;
    std::size_t skip = 0;  // the machines before it are no longer candidates this round
  };
  std::vector<std::vector<std::array<reserve_list, 3>>> reserve_lists;  // [pool][order][state]
  std::vector<std::vector<int>> machines_by_order;                    // [pool][order]: any state

  bool reserve_candidate(int mi) const {
    // No non-preemptable work on it, and not earmarked (both only ever become false within a round).
    return !earmarked[static_cast<std::size_t>(mi)] &&
           np_free[static_cast<std::size_t>(mi)] == m.machines[static_cast<std::size_t>(mi)].order;
  }

  void build_reserve_lists() {
    const auto orders = static_cast<std::size_t>(m.max_order) + 1;
    reserve_lists.assign(m.pools.size(), std::vector<std::array<reserve_list, 3>>(orders));
    std::vector<std::int64_t> sort_key(m.machines.size(), 0);
    for (std::size_t i = 0; i < m.machines.size(); ++i) {
      const auto& mc = m.machines[i];
      if (!mc.schedulable() || !reserve_candidate(static_cast<int>(i))) continue;
      const int live_used = mc.used - mc.removing;
      const int state = mc.used == 0 ? 0 : live_used == 0 ? 1 : 2;
      sort_key[i] = static_cast<std::int64_t>(live_used) * static_cast<std::int64_t>(m.machines.size()) + rank[i];
      reserve_lists[static_cast<std::size_t>(mc.pool)][static_cast<std::size_t>(mc.order)][static_cast<std::size_t>(state)]
          .machines.push_back(static_cast<int>(i));
    }
    for (auto& by_order : reserve_lists)
      for (auto& states : by_order)
        for (auto& l : states)
          std::sort(l.machines.begin(), l.machines.end(), [&](int a, int b) {
            return sort_key[static_cast<std::size_t>(a)] < sort_key[static_cast<std::size_t>(b)];
          });
  }

  // Machines of `pool` alone whose order is within [lo, hi], any state (count_machines_of_order).
  int machines_of_order(int pool, int lo, int hi) {
    if (machines_by_order.empty()) {
      machines_by_order.assign(m.pools.size(), std::vector<int>(static_cast<std::size_t>(m.max_order) + 1, 0));
      for (const auto& mc : m.machines)
        if (!mc.foreign) ++machines_by_order[static_cast<std::size_t>(mc.pool)][static_cast<std::size_t>(mc.order)];
    }
    int n = 0;
    for (int o = std::max(lo, 0); o <= std::min(hi, m.max_order); ++o) n += machines_by_order[static_cast<std::size_t>(pool)][static_cast<std::size_t>(o)];
    return n;
  }

  void count_reserve(job_rec& j) {
    const int pool = m.class_pool(j);
    const int cur = m.current(j);
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
      lo = hi = m.shares[static_cast<std::size_t>(s)].order;  // the first machine fixed the size
      fixed_size = true;
    }
    if (!fixed_size && j.item.kind == work_kind::reservation && m.settings.reserve_overage_mb > 0)
      hi = order_for_request(j.item.memory_mb + m.settings.reserve_overage_mb, m.quantum_mb);
    if (machines_of_order(pool, lo, hi) == 0) {
      const std::string_view never = " (reservations are never promoted to a larger machine)";
      if (hi > lo)
        set_reason(j, reason_code::no_machine_of_order, "no machine of order ", lo, " to ", hi, " (",
                   size_of(lo), " to ", size_of(hi), ") in pool ", pool_name(pool), never);
      else
        set_reason(j, reason_code::no_machine_of_order, "no machine of order ", lo, " (", size_of(lo),
                   ") in pool ", pool_name(pool), never);
      j.given = cur;
      return;
    }
    const auto limit = limit_mb(j.item.user);
    if (reserve_lists.empty()) build_reserve_lists();
    auto& lists = reserve_lists[static_cast<std::size_t>(pool)];
    int given = cur;
    bool stop = false;
    // Free machines first, then machines already being cleared, then the rest; each by order, then
    // less live use, then name (the lists hold that order; see build_reserve_lists).
    for (int state = 0; state < 3 && !stop && given < want; ++state) {
      for (int o = lo; o <= std::min(hi, m.max_order) && !stop && given < want; ++o) {
        auto& list = lists[static_cast<std::size_t>(o)][static_cast<std::size_t>(state)];
        // Machines earmarked or given non-preemptable work since stay out for the rest of the round.
        while (list.skip < list.machines.size() && !reserve_candidate(list.machines[list.skip])) ++list.skip;
        for (std::size_t k = list.skip; k < list.machines.size(); ++k) {
          if (given >= want) break;
          const int c = list.machines[k];
          if (!reserve_candidate(c) || !host_allowed(j, m.machines[static_cast<std::size_t>(c)])) continue;
          auto& mc = m.machines[static_cast<std::size_t>(c)];
          const std::uint64_t mb = static_cast<std::uint64_t>(mc.order) * m.quantum_mb;
          if (limit && np_mb[j.item.user] + mb > *limit) {
            allotment_reason(j, *limit);
            stop = true;
            break;
          }
          fixed_unindex(c);
          earmarked[static_cast<std::size_t>(c)] = 1;
          auto& tab = local[static_cast<std::size_t>(pool)];
          if (tab.blocks(mc.order) > 0) tab.remove(mc.order, 1);
          np_free[static_cast<std::size_t>(c)] = 0;
          np_mb[j.item.user] += mb;
          j.reserve_machines.push_back(c);
          j.earmarks = true;
          ++given;
        }
      }
    }
    j.given = given;
    if (given < want && j.reason == reason_code::none)
      set_reason(j, reason_code::resources_exhausted, "every machine of order ", lo, " in pool ", pool_name(pool),
                 " is reserved or holds non-preemptable work");
  }

  // Take n order-o nshares out of pool p's tables: its own first, then its children's.
  void count_out(int p, int o, std::int64_t n) {
    auto& tab = local[static_cast<std::size_t>(p)];
    const std::int64_t k = std::min(n, tab.nshares(o));
    if (k > 0) tab.take_shares(o, k);
    n -= k;
    for (int c : m.pools[static_cast<std::size_t>(p)].children) {
      if (n <= 0) break;
      const std::int64_t before = n;
      (void)before;
      const std::int64_t have = subtree_nshares(c, o);
      const std::int64_t t = std::min(n, have);
      if (t > 0) count_out(c, o, t);
      n -= t;
    }
  }

  std::int64_t subtree_nshares(int p, int o) const {
    std::int64_t n = local[static_cast<std::size_t>(p)].nshares(o);
    for (int c : m.pools[static_cast<std::size_t>(p)].children) n += subtree_nshares(c, o);
    return n;
  }

  free_blocks subtree_table(int p) const {
    free_blocks t = local[static_cast<std::size_t>(p)];
    for (int c : m.pools[static_cast<std::size_t>(p)].children) t += subtree_table(c);
    return t;
  }

  // `jobs_of_class`: each class's jobs that want something, in slot order; the group's are consumed.
  void count_fair_group(const std::vector<int>& group_classes,
                        std::vector<std::vector<class_job>>& jobs_of_class) {
    for (int p : m.pools.empty() ? std::vector<int>{} : m.pool_postorder) {
      std::vector<int> here;
      for (int c : group_classes)
        if (m.classes[static_cast<std::size_t>(c)].pool == p && !jobs_of_class[static_cast<std::size_t>(c)].empty())
          here.push_back(c);
      if (here.empty()) continue;
      std::sort(here.begin(), here.end(), [&](int a, int b) {
        const auto& x = m.classes[static_cast<std::size_t>(a)].def;
        const auto& y = m.classes[static_cast<std::size_t>(b)].def;
        if (x.weight != y.weight) return x.weight > y.weight;
        return x.name < y.name;
      });
      free_blocks vs = subtree_table(p);
      const std::int64_t total_q = vs.total_qshares();
      std::vector<apportion_entity> ents(here.size());
      std::vector<std::vector<class_job>> gathered(here.size());
      std::int64_t w_sum = 0;
      for (std::size_t i = 0; i < here.size(); ++i) {
        ents[i].weight = std::max(1, m.classes[static_cast<std::size_t>(here[i])].def.weight);
        w_sum += ents[i].weight;
        gathered[i] = std::move(jobs_of_class[static_cast<std::size_t>(here[i])]);
        const auto& jobs = gathered[i];
        const auto job_at = [&](std::size_t k) -> const class_job& { return jobs[k]; };
        ents[i].wanted = wants_by_order(0, jobs.size(), job_at);
      }
      std::vector<std::vector<std::pair<int, std::int64_t>>> class_wanted(here.size());
      for (std::size_t i = 0; i < here.size(); ++i) class_wanted[i] = ents[i].wanted;
      apportion_qshares(ents, vs, apportion_ws);
      for (std::size_t i = 0; i < here.size(); ++i) {
        const int c = here[i];
        const std::int64_t class_pfs = total_q * ents[i].weight / w_sum;
        class_load load;
        load.name = m.classes[static_cast<std::size_t>(c)].def.name;
        load.policy = policy::fair_share;
        load.priority = m.classes[static_cast<std::size_t>(c)].def.priority;
        load.weight = m.classes[static_cast<std::size_t>(c)].def.weight;
        for (std::size_t s = 0; s < ents[i].wanted.size(); ++s) {
          load.demand_by_order[class_wanted[i][s].first] = class_wanted[i][s].second;
          load.awarded_by_order[class_wanted[i][s].first] = ents[i].given[s];
          if (ents[i].given[s] > 0) count_out(p, class_wanted[i][s].first, ents[i].given[s]);
        }
        out.classes.push_back(load);
        split_class(c, ents[i], class_wanted[i], class_pfs, gathered[i]);
      }
    }
  }

  static free_blocks blocks_of(const std::vector<std::pair<int, std::int64_t>>& orders,
                               const std::vector<std::int64_t>& given) {
    free_blocks t;
    fill_blocks(t, orders, given);
    return t;
  }
  // blocks_of into a table kept from user to user (its memory is reused).
  static void fill_blocks(free_blocks& t, const std::vector<std::pair<int, std::int64_t>>& orders,
                          const std::vector<std::int64_t>& given) {
    int mx = 1;
    for (const auto& o : orders) mx = std::max(mx, o.first);
    t.reset(mx);
    for (std::size_t s = 0; s < orders.size(); ++s)
      if (given[s] > 0) t.add(orders[s].first, given[s]);
  }
  free_blocks user_blocks;  // split_class's scratch: what one user was given, as blocks

  std::vector<std::int64_t> cap_by_order;  // wants_by_order's scratch, per order

  // A class's jobs in key order, as positions into its jobs (which stay in slot order): a sort of these
  // 16 bytes moves a third of what a sort of the 48-byte entries did, and nothing is sorted back.
  struct keyed {
    std::uint64_t key;
    std::size_t at;
  };
  std::vector<keyed> by_key, by_key_scratch;

  // What jobs job_at(first) .. job_at(last - 1) want together: per order, ascending, the sum of their caps
  // (orders are small: How Much leaves out the jobs no machine of the pool can hold).
  template <class JobAt>
  std::vector<std::pair<int, std::int64_t>> wants_by_order(std::size_t first, std::size_t last,
                                                          JobAt job_at) {
    int top = 0;
    for (std::size_t k = first; k != last; ++k) top = std::max(top, job_at(k).order);
    cap_by_order.assign(static_cast<std::size_t>(top) + 1, -1);  // -1: no job of that order
    for (std::size_t k = first; k != last; ++k) {
      const class_job& x = job_at(k);
      auto& sum = cap_by_order[static_cast<std::size_t>(std::max(0, x.order))];
      sum = std::max<std::int64_t>(sum, 0) + x.cap;
    }
    std::vector<std::pair<int, std::int64_t>> wanted;
    for (std::size_t o = 0; o < cap_by_order.size(); ++o)
      if (cap_by_order[o] >= 0) wanted.emplace_back(static_cast<int>(o), cap_by_order[o]);
    return wanted;
  }

  // The group path of split_class: the class's award walked down its share tree (share_tree.hpp) instead
  // of split among its users directly. Writes each user's given into `users`, its pure fair share into
  // tree_user_pfs, and each group with work into out.groups.
  std::vector<std::int64_t> tree_user_pfs;        // per user of the class being split (group path only)
  std::vector<share_tree_award> tree_awards;      // per group of that class (group path only)

  static std::int64_t group_qshares(const share_tree_award& a) {
    std::int64_t q = 0;
    for (std::size_t s = 0; s < a.wanted.size() && s < a.given.size(); ++s) q += a.given[s] * a.wanted[s].first;
    return q;
  }

  template <class UserSpan, class JobAt>
  void count_groups(int c, const std::vector<UserSpan>& by_user, JobAt job_at,
                    std::vector<apportion_entity>& users, free_blocks& class_blocks, std::int64_t class_pfs) {
    const auto& rec = m.classes[static_cast<std::size_t>(c)];
    std::vector<int> user_group(by_user.size());
    std::vector<const std::string*> user_names(by_user.size());
    for (std::size_t i = 0; i < by_user.size(); ++i) {
      user_group[i] = m.jobs[static_cast<std::size_t>(job_at(by_user[i].begin).slot)].group;
      user_names[i] = &m.users[static_cast<std::size_t>(by_user[i].user_slot)].str();
    }
    const share_tree& tree = m.tree_of(c);
    apportion_share_tree(tree, user_group, user_names, users, class_blocks, class_pfs, tree_user_pfs, tree_awards,
                         apportion_ws);
    for (std::size_t g = 0; g < tree.groups.size(); ++g) {
      const auto& a = tree_awards[g];
      if (!a.present) continue;
      const auto& def = tree.groups[g];
      group_load load;
      load.class_name = rec.def.name;
      load.name = def.name;
      load.parent = def.parent < 0 ? rec.def.name : tree.groups[static_cast<std::size_t>(def.parent)].name;
      load.depth = def.depth;
      load.weight = def.weight;
      load.priority = def.priority;
      for (std::size_t s = 0; s < a.wanted.size(); ++s) {
        load.demand_by_order[a.wanted[s].first] = a.wanted[s].second;
        load.awarded_by_order[a.wanted[s].first] = a.given[s];
      }
      load.pure_fair_share_qshares = a.pure_fair_share_qshares;
      out.groups.push_back(std::move(load));
    }
  }

  // A class's award split among its users and jobs, written into the job records: taken from the cache when
  // the split kept there was computed from equal inputs, else computed (and kept).
  void split_class(int c, const apportion_entity& cls, const std::vector<std::pair<int, std::int64_t>>& orders,
                   std::int64_t class_pfs, std::vector<class_job>& cj) {
    const auto cs = static_cast<std::size_t>(c);
    const int largest = max_subtree[static_cast<std::size_t>(m.classes[cs].pool)];
    if (cache != nullptr) {
      if (cache->by_class.size() < m.classes.size()) cache->by_class.resize(m.classes.size());
      const auto& kept = cache->by_class[cs];
      if (kept && kept->computed_from(cj, cls.given, orders, class_pfs, largest)) {
        ++cache->splits_reused;
        out.groups.insert(out.groups.end(), kept->groups.begin(), kept->groups.end());
        write_split(c, *kept, cls);
        return;
      }
    }
    auto split = std::make_shared<how_much_cache::class_split>();
    split->class_pfs = class_pfs;
    split->largest = largest;
    if (cache != nullptr) {
      split->class_given = cls.given;
      split->orders = orders;
    }
    compute_split(c, cls, orders, class_pfs, cj, *split, cache != nullptr ? cache->by_class[cs].get() : nullptr);
    write_split(c, *split, cls);
    if (cache != nullptr) cache->by_class[cs] = std::move(split);
  }

  // The split itself: the class's award among its users (or down its share tree), each user's among its
  // jobs. `cj` is consumed. `kept`: the class's split of an earlier round (or null), whose user parts are
  // taken for the users whose award and jobs are what they were; `split` then keeps its own user parts.
  void compute_split(int c, const apportion_entity& cls, const std::vector<std::pair<int, std::int64_t>>& orders,
                     std::int64_t class_pfs, std::vector<class_job>& cj, how_much_cache::class_split& split,
                     const how_much_cache::class_split* kept) {
    // Both ranks are unique, so the keys are a total order.
    by_key.resize(cj.size());
    for (std::size_t k = 0; k < cj.size(); ++k) by_key[k] = {cj[k].key, k};
    radix_sort(by_key, by_key_scratch, [](const keyed& x) { return x.key; });
    const auto job_at = [&](std::size_t k) -> class_job& { return cj[by_key[k].at]; };
    auto& by_user = split.by_user;
    for (std::size_t k = 0; k < cj.size(); ++k) {
      class_job& x = job_at(k);
      const auto rank = static_cast<int>(x.key >> 32);
      if (by_user.empty() || static_cast<int>(job_at(by_user.back().begin).key >> 32) != rank)
        by_user.push_back({x.user_slot, k, k});
      by_user.back().end = k + 1;
      x.user = static_cast<int>(by_user.size()) - 1;
    }
    free_blocks class_blocks = blocks_of(orders, cls.given);
    std::vector<apportion_entity> users(by_user.size());
    for (std::size_t i = 0; i < by_user.size(); ++i)
      users[i].wanted = wants_by_order(by_user[i].begin, by_user[i].end, job_at);
    std::vector<std::vector<std::pair<int, std::int64_t>>> user_orders(users.size());
    for (std::size_t i = 0; i < users.size(); ++i) user_orders[i] = users[i].wanted;
    const share_tree& tree = m.tree_of(c);
    if (tree.empty()) {
      apportion_qshares(users, class_blocks, apportion_ws);
    } else {
      const std::size_t groups_before = out.groups.size();
      count_groups(c, by_user, job_at, users, class_blocks, class_pfs);
      split.groups.assign(out.groups.begin() + static_cast<std::ptrdiff_t>(groups_before), out.groups.end());
      split.tree_user_pfs = tree_user_pfs;
      split.group_qshares.assign(tree.groups.size(), 0);
      for (std::size_t g = 0; g < tree.groups.size() && g < tree_awards.size(); ++g)
        split.group_qshares[g] = group_qshares(tree_awards[g]);
    }
    split.user_qshares.assign(users.size(), 0);
    if (kept != nullptr) {
      part_of_user.assign(m.users.size(), -1);
      for (std::size_t i = 0; i < kept->user_parts.size(); ++i) {
        const auto us = static_cast<std::size_t>(kept->user_parts[i].user_slot);
        if (us < part_of_user.size()) part_of_user[us] = static_cast<int>(i);
      }
    }
    const bool keep_parts = cache != nullptr;
    for (std::size_t ui = 0; ui < by_user.size(); ++ui) {
      const auto& span = by_user[ui];
      const std::size_t n_jobs = span.end - span.begin;
      split.user_qshares[ui] = users[ui].given_qshares();
      if (keep_parts) {
        split.user_parts.push_back({span.user_slot, user_orders[ui], users[ui].given, split.job_wants.size(), n_jobs});
        for (std::size_t k = 0; k < n_jobs; ++k)
          split.job_wants.emplace_back(job_at(span.begin + k).order, job_at(span.begin + k).cap);
      }
      if (const auto* part = kept_part(kept, span.user_slot);
          part != nullptr && part->count == n_jobs && part->orders == user_orders[ui] && part->given == users[ui].given &&
          std::equal(kept->job_wants.begin() + static_cast<std::ptrdiff_t>(part->first),
                     kept->job_wants.begin() + static_cast<std::ptrdiff_t>(part->first + n_jobs),
                     split.job_wants.end() - static_cast<std::ptrdiff_t>(n_jobs))) {
        // The same award over the same jobs in the same order: the same split.
        ++cache->users_reused;
        for (std::size_t k = 0; k < n_jobs; ++k) {
          job_at(span.begin + k).given = kept->job_given[part->first + k];
          split.job_given.push_back(kept->job_given[part->first + k]);
        }
        continue;
      }
      fill_blocks(user_blocks, user_orders[ui], users[ui].given);
      // One entity per job, reused from user to user (their vectors keep their capacity).
      // The array only grows: shrinking it would free the entities' vectors, growing it again allocate them.
      auto& jes = job_entities;
      if (jes.size() < n_jobs) jes.resize(n_jobs);
      for (std::size_t k = 0; k < n_jobs; ++k) {
        jes[k].weight = 1;
        jes[k].wanted.assign(1, {job_at(span.begin + k).order, job_at(span.begin + k).cap});
      }
      apportion_qshares(jes.data(), n_jobs, user_blocks, apportion_ws);
      for (std::size_t k = 0; k < n_jobs; ++k) {
        const std::int64_t given = jes[k].given_total();
        job_at(span.begin + k).given = given;
        if (keep_parts) split.job_given.push_back(given);
      }
    }
    // Still in slot order, so that the records are written front to back.
    split.jobs = std::move(cj);
  }

  // The user part of `kept` for user slot `user_slot` (null: none, or no kept split).
  const how_much_cache::class_split::user_part* kept_part(const how_much_cache::class_split* kept, int user_slot) const {
    if (kept == nullptr || user_slot < 0 || static_cast<std::size_t>(user_slot) >= part_of_user.size()) return nullptr;
    const int i = part_of_user[static_cast<std::size_t>(user_slot)];
    return i < 0 ? nullptr : &kept->user_parts[static_cast<std::size_t>(i)];
  }

  // Each job's count, pure fair share and reason, from a split.
  void write_split(int c, const how_much_cache::class_split& split, const apportion_entity& cls) {
    const auto& by_user = split.by_user;
    const share_tree& tree = m.tree_of(c);
    const bool grouped = !tree.empty();
    const std::int64_t user_pfs =
        by_user.empty() ? 0 : split.class_pfs / static_cast<std::int64_t>(by_user.size());
    const std::string& cname = m.classes[static_cast<std::size_t>(c)].def.name;
    const int pool = m.classes[static_cast<std::size_t>(c)].pool;
    const bool class_got_nothing = cls.given_qshares() == 0;
    // The text for a job that got nothing names no award: awards move with every arrival or departure in
    // the class, and a text that carried them would change the plan entry of every waiting job of the class
    // each time (`rmbus-admin explain` gives the awards of the moment). It names the cause, which changes
    // only with the job's own situation. Each user's part is written once.
    std::vector<std::string> nothing_for(by_user.size());
    for (const auto& x : split.jobs) {
      auto& j = m.jobs[static_cast<std::size_t>(x.slot)];
      const auto& u = by_user[static_cast<std::size_t>(x.user)];
      j.given = static_cast<int>(x.given);
      const std::int64_t pfs_of_user = grouped ? split.tree_user_pfs[static_cast<std::size_t>(x.user)] : user_pfs;
      j.pfs_qshares = pfs_of_user / static_cast<std::int64_t>(u.end - u.begin);
      if (x.given != 0 || x.cap <= 0) continue;
      if (split.largest < x.order) {
        no_machine_reason(j, pool, split.largest);
        continue;
      }
      nothing_cause cause = nothing_cause::none;
      if (!class_got_nothing && split.user_qshares[static_cast<std::size_t>(x.user)] < x.order)
        cause = nothing_cause::smaller_than_a_process;
      else if (!class_got_nothing && u.end - u.begin > 1)
        cause = nothing_cause::went_to_other_jobs;
      const std::uint64_t key =
          nothing_counted_key(c, u.user_slot, grouped ? x.group : -1, x.order, cause, class_got_nothing);
      if (key != 0 && key == j.reason_key) {  // the text standing is this one
        j.reason = reason_code::no_share_counted;
        continue;
      }
      auto& text = nothing_for[static_cast<std::size_t>(x.user)];
      const std::string& uname = m.users[static_cast<std::size_t>(u.user_slot)].str();
      if (text.empty() && class_got_nothing)
        write_text(text, "fair share counted nothing: class ", cname, " got nothing");
      else if (text.empty() && grouped && x.group >= 0)
        write_text(text, "fair share counted nothing: user ", uname, "'s share of group ",
                   tree.groups[static_cast<std::size_t>(x.group)].name, " in class ", cname);
      else if (text.empty())
        write_text(text, "fair share counted nothing: user ", uname, "'s share of class ", cname);
      set_reason(j, reason_code::no_share_counted, text, cause_text(cause), "a process needs ", x.order, " (",
                 size_of(x.order), ")");
      j.reason_key = key;
    }
  }
};

}  // namespace

how_much_result how_much(cluster_model& m, const round_input& in, how_much_cache* cache) {
  counter c{m, in};
  c.cache = cache;
  c.local.assign(m.pools.size(), free_blocks(m.max_order));
  c.earmarked.assign(m.machines.size(), 0);
  c.index_orders();
  c.np_free.assign(m.machines.size(), -1);
  c.counted_q.assign(m.machines.size(), 0);
  c.fixed_idx.assign(m.pools.size(), {});
  c.pool_machines.assign(m.pools.size(), {});
  m.refresh_ranks();
  c.rank = m.machine_rank;
  for (std::size_t i = 0; i < m.machines.size(); ++i) {
    const auto& mc = m.machines[i];
    if (!mc.schedulable()) continue;
    const int size = mc.order - mc.nonpreemptable_used;
    c.np_free[i] = std::max(0, size);
    c.pool_machines[static_cast<std::size_t>(mc.pool)].push_back(static_cast<int>(i));
    if (size > 0) c.local[static_cast<std::size_t>(mc.pool)].add(size);
  }
  for (const auto& [u, mb] : in.other_pools_nonpreemptable_mb) c.np_mb[u] += mb;

  // One sweep over the jobs: each one's cap is computed and its counts of the last round are reset (the
  // reason text is left: it counts only with a reason, and its buffer serves the next one), non-preemptable
  // holdings are summed per user, and the live, schedulable jobs of classes in this tree are grouped by
  // class with all that the split reads of them, so that no later pass reads the job records again.
  std::vector<std::vector<class_job>> jobs_of_class(m.classes.size());
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    auto& j = m.jobs[i];
    if (!j.live) continue;
    // DUCC computes every cap at the start of How Much; a cap whose inputs did not change since is kept.
    if (!j.cap_current) {
      refresh_job_cap(m, j);
      j.cap_current = true;
    }
    j.given = 0;
    j.pfs_qshares = 0;
    j.reason = reason_code::none;
    if (j.earmarks) {
      j.reserve_machines.clear();
      j.fixed_machines.clear();
      j.earmarks = false;
    }
    if (j.cls >= 0 && m.policy_of(j) != policy::fair_share) {
      for (int s : j.shares) {
        const auto& sh = m.shares[static_cast<std::size_t>(s)];
        if (!sh.removing() && !sh.blacklisted)
          c.np_mb[j.item.user] += static_cast<std::uint64_t>(sh.order) * m.quantum_mb;
      }
    }
    if (j.refused || j.cls < 0 || m.classes[static_cast<std::size_t>(j.cls)].pool < 0) continue;
    const auto user =
        j.user_slot < 0 ? 0 : static_cast<std::uint64_t>(m.user_rank[static_cast<std::size_t>(j.user_slot)]);
    jobs_of_class[static_cast<std::size_t>(j.cls)].push_back(
        {user << 32 | static_cast<std::uint32_t>(m.job_rank[i]), static_cast<int>(i), j.order, j.cap.cap,
         j.user_slot, j.group, 0, m.current(j), 0});
  }
  std::map<int, std::vector<int>> groups;  // priority -> classes with jobs
  for (std::size_t c = 0; c < m.classes.size(); ++c)
    if (!jobs_of_class[c].empty()) groups[m.classes[c].def.priority].push_back(static_cast<int>(c));

  for (const auto& [prio, classes] : groups) {
    const policy pol = m.classes[static_cast<std::size_t>(classes.front())].def.policy;
    if (pol == policy::fair_share) {
      // Fair share: jobs with nothing to want take no part (left out where they lie, order kept).
      for (int cl : classes) {
        const int pool = m.classes[static_cast<std::size_t>(cl)].pool;
        const int largest = c.max_subtree[static_cast<std::size_t>(pool)];
        auto& cj = jobs_of_class[static_cast<std::size_t>(cl)];
        std::size_t kept = 0;
        for (const class_job& x : cj) {
          if (x.order > largest)
            c.no_machine_reason(m.jobs[static_cast<std::size_t>(x.slot)], pool, largest);
          else if (x.cap > 0) cj[kept++] = x;
          else if (x.held == 0)
            set_reason(m.jobs[static_cast<std::size_t>(x.slot)], reason_code::completed,
                       "no work left to give processes to");
        }
        cj.resize(kept);
      }
      c.count_fair_group(classes, jobs_of_class);
      continue;
    }
    // Non-preemptable: oldest first, larger order first on equal time, then id.
    std::vector<int> js;
    for (int cl : classes)
      for (const class_job& x : jobs_of_class[static_cast<std::size_t>(cl)]) js.push_back(x.slot);
    std::sort(js.begin(), js.end(), [&](int a, int b) {
      const auto& x = m.jobs[static_cast<std::size_t>(a)];
      const auto& y = m.jobs[static_cast<std::size_t>(b)];
      if (x.item.submitted_ms != y.item.submitted_ms) return x.item.submitted_ms < y.item.submitted_ms;
      if (x.order != y.order) return x.order > y.order;
      return m.job_rank[static_cast<std::size_t>(a)] < m.job_rank[static_cast<std::size_t>(b)];  // then id
    });
    for (int ji : js) {
      auto& j = m.jobs[static_cast<std::size_t>(ji)];
      if (pol == policy::fixed_share) c.count_fixed(j, ji);
      else c.count_reserve(j);
    }
    for (int cl : classes) {
      class_load load;
      const auto& d = m.classes[static_cast<std::size_t>(cl)].def;
      load.name = d.name;
      load.policy = d.policy;
      load.priority = d.priority;
      load.weight = d.weight;
      for (const class_job& x : jobs_of_class[static_cast<std::size_t>(cl)]) {
        const auto& j = m.jobs[static_cast<std::size_t>(x.slot)];
        load.demand_by_order[j.order] += j.cap.cap;
        load.awarded_by_order[j.order] += j.given;
      }
      c.out.classes.push_back(load);
    }
  }
  std::sort(c.out.classes.begin(), c.out.classes.end(), [](const class_load& a, const class_load& b) {
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.weight != b.weight) return a.weight > b.weight;
    return a.name < b.name;
  });
  if (!c.out.groups.empty()) {
    // Groups follow their classes' order; within a class they stay in tree order (parents first).
    std::map<std::string, std::size_t> class_pos;
    for (std::size_t i = 0; i < c.out.classes.size(); ++i) class_pos.emplace(c.out.classes[i].name, i);
    std::stable_sort(c.out.groups.begin(), c.out.groups.end(), [&](const group_load& a, const group_load& b) {
      return class_pos[a.class_name] < class_pos[b.class_name];
    });
  }
  return std::move(c.out);
}

}  // namespace rmbus::core
