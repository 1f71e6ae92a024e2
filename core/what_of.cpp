#include "core/what_of.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <memory_resource>
#include <set>

#include "core/prefetch.hpp"
#include "core/radix_sort.hpp"
#include "core/reason_text.hpp"

namespace rmbus::core {

bool host_allowed(const job_rec& j, const machine_rec& mc) {
  if (j.no_hosts || j.item.hosts.empty()) return true;
  const std::string& n = mc.name.str();
  const std::string short_name = n.substr(0, n.find('.'));
  for (const auto& h : j.item.hosts) {
    if (h == n || h == mc.ip) return true;
    if (h.substr(0, h.find('.')) == short_name) return true;
  }
  return false;
}

namespace {

class placer {
 public:
  // `earmark`: per machine, the only job that may use it (-1: anyone). REQUIRES: m.refresh_ranks().
  // The buckets' nodes come from an arena freed at once with the placer (every machine is indexed each
  // round: some 10,000 nodes allocated and freed one by one), and machines go in by rank so that each
  // insertion is at a bucket's end.
  placer(cluster_model& m, std::vector<int> earmark) : m_(m), rank_(m.machine_rank), earmark_(std::move(earmark)) {
    const auto widths = static_cast<std::size_t>(m.max_order) + 1;
    buckets_.resize(m.pools.size());
    for (auto& pb : buckets_) {
      pb.reserve(widths);
      for (std::size_t f = 0; f < widths; ++f) pb.emplace_back(&arena_);
    }
    nonempty_.assign(m.pools.size(), std::vector<std::uint64_t>(static_cast<std::size_t>(m.max_order) / 64 + 1, 0));
    std::vector<std::pair<int, int>> by_rank;  // (rank, machine)
    by_rank.reserve(m.machines.size());
    for (std::size_t i = 0; i < m.machines.size(); ++i) {
      prefetch_ahead(m.machines, i);
      if (indexed(static_cast<int>(i))) by_rank.emplace_back(rank_[i], static_cast<int>(i));
    }
    std::sort(by_rank.begin(), by_rank.end());
    for (const auto& [r, mc] : by_rank) {
      const auto& mach = m.machines[static_cast<std::size_t>(mc)];
      const auto b = static_cast<std::size_t>(std::min(mach.free(), m.max_order));
      auto& bucket = buckets_[static_cast<std::size_t>(mach.pool)][b];
      bucket.emplace_hint(bucket.end(), r, mc);
      nonempty_[static_cast<std::size_t>(mach.pool)][b / 64] |= std::uint64_t{1} << (b % 64);
    }
  }

  void place(int ji) {
    auto& j = m_.jobs[static_cast<std::size_t>(ji)];
    const int pool = m_.class_pool(j);
    if (pool < 0 || j.refused) return;
    const policy pol = m_.policy_of(j);
    if (pol == policy::reserve) {
      for (int mc : j.reserve_machines) {
        auto& mach = m_.machines[static_cast<std::size_t>(mc)];
        if (mach.used == 0 && mach.schedulable() && m_.current(j) < j.given) {
          unindex(mc);
          auto [id, seq] = m_.new_share_id();
          m_.add_share(ji, mc, mach.order, std::move(id), seq, share_status::new_share);
          ++m_.round_given;
          index(mc);
        }
      }
      return;
    }
    int needed = j.given - m_.current(j);
    if (needed <= 0) return;
    if (pol == policy::fair_share) {
      // A needy job goes to the machine cleared for it first.
      if (j.needy && j.needy_machine >= 0) needed -= fill(ji, j.needy_machine, needed, false);
      find(ji, pool, needed, true, false);
    } else {
      // Non-preemptable: on the machines How Much counted it on, once there is room (preemption makes it).
      for (int mc : j.fixed_machines) {
        if (needed <= 0) break;
        auto& mach = m_.machines[static_cast<std::size_t>(mc)];
        if (!mach.schedulable() || mach.free() < j.order || !host_allowed(j, mach)) continue;
        unindex(mc);
        auto [id, seq] = m_.new_share_id();
        m_.add_share(ji, mc, j.order, std::move(id), seq, share_status::new_share);
        ++m_.round_given;
        index(mc);
        --needed;
      }
    }
  }

  // Whether some machine of `pool` or of a pool below it has room for a process of `order` outside the
  // earmarked ones: false means that find() for such a process fills nothing.
  bool has_room(int pool, int order) const {
    if (next_bucket(pool, order) <= m_.max_order) return true;
    for (int c : m_.pools[static_cast<std::size_t>(pool)].children)
      if (has_room(c, order)) return true;
    return false;
  }

 private:
  // The buckets hold the machines find() may fill. A machine earmarked for one job is left out: find() can
  // give it to no other job, and its own job (a needy job, or a reservation) is served there directly by
  // place() under the same conditions before find() runs, so that a visit from find() could add nothing.
  bool indexed(int mc) const {
    const auto& mach = m_.machines[static_cast<std::size_t>(mc)];
    return mach.schedulable() && mach.free() > 0 && earmark_[static_cast<std::size_t>(mc)] < 0;
  }
  void index(int mc) {
    if (!indexed(mc)) return;
    const auto& mach = m_.machines[static_cast<std::size_t>(mc)];
    const auto b = static_cast<std::size_t>(std::min(mach.free(), m_.max_order));
    buckets_[static_cast<std::size_t>(mach.pool)][b].insert({rank_[static_cast<std::size_t>(mc)], mc});
    nonempty_[static_cast<std::size_t>(mach.pool)][b / 64] |= std::uint64_t{1} << (b % 64);
  }
  void unindex(int mc) {
    if (!indexed(mc)) return;
    const auto& mach = m_.machines[static_cast<std::size_t>(mc)];
    const auto b = static_cast<std::size_t>(std::min(mach.free(), m_.max_order));
    auto& bucket = buckets_[static_cast<std::size_t>(mach.pool)][b];
    bucket.erase({rank_[static_cast<std::size_t>(mc)], mc});
    if (bucket.empty()) nonempty_[static_cast<std::size_t>(mach.pool)][b / 64] &= ~(std::uint64_t{1} << (b % 64));
  }
  // The smallest non-empty bucket of `pool` at `from` or above; max_order + 1 when there is none. Most
  // buckets are empty at a 1 GB quantum (257 of them), and a job that waits for preemptions scans them all.
  int next_bucket(int pool, int from) const {
    const auto& bits = nonempty_[static_cast<std::size_t>(pool)];
    auto word = static_cast<std::size_t>(from) / 64;
    if (word >= bits.size()) return m_.max_order + 1;
    std::uint64_t w = bits[word] & (~std::uint64_t{0} << (static_cast<std::size_t>(from) % 64));
    while (w == 0) {
      if (++word == bits.size()) return m_.max_order + 1;
      w = bits[word];
    }
    return static_cast<int>(word * 64 + static_cast<std::size_t>(std::countr_zero(w)));
  }

  bool spread_conflict(const job_rec& j, int ji, const machine_rec& mach) const {
    for (int s : mach.shares) {
      const auto& sh = m_.shares[static_cast<std::size_t>(s)];
      if (sh.job == ji) return true;
      if (j.item.service_id != 0 && m_.jobs[static_cast<std::size_t>(sh.job)].item.service_id == j.item.service_id)
        return true;
    }
    return false;
  }

  // Places up to `needed` shares of job ji on machine mc; returns how many.
  int fill(int ji, int mc, int needed, bool spread) {
    auto& j = m_.jobs[static_cast<std::size_t>(ji)];
    auto& mach = m_.machines[static_cast<std::size_t>(mc)];
    if (!mach.schedulable() || mach.free() < j.order || !host_allowed(j, mach)) return 0;
    if (earmark_[static_cast<std::size_t>(mc)] >= 0 && earmark_[static_cast<std::size_t>(mc)] != ji) return 0;
    if (spread && spread_conflict(j, ji, mach)) return 0;
    int k = std::min(needed, mach.free() / j.order);
    if (spread) k = std::min(k, 1);
    if (k <= 0) return 0;
    unindex(mc);
    for (int i = 0; i < k; ++i) {
      auto [id, seq] = m_.new_share_id();
      m_.add_share(ji, mc, j.order, std::move(id), seq, share_status::new_share);
      ++m_.round_given;
    }
    index(mc);
    return k;
  }

  void find(int ji, int pool, int& needed, bool recurse, bool spread) {
    const int order = m_.jobs[static_cast<std::size_t>(ji)].order;
    auto& pb = buckets_[static_cast<std::size_t>(pool)];
    for (int f = next_bucket(pool, order); f <= m_.max_order && needed > 0; f = next_bucket(pool, f + 1)) {
      auto& bucket = pb[static_cast<std::size_t>(f)];
      for (auto it = bucket.begin(); it != bucket.end() && needed > 0;) {
        const int mc = (it++)->second;  // fill() may move mc to a smaller bucket
        needed -= fill(ji, mc, needed, spread);
      }
    }
    if (needed > 0 && recurse)
      for (int c : m_.pools[static_cast<std::size_t>(pool)].children) find(ji, c, needed, true, spread);
  }

  cluster_model& m_;
  std::vector<int> rank_;
  std::vector<int> earmark_;  // per machine: the only job that may use it, -1 = anyone
  std::pmr::monotonic_buffer_resource arena_;  // before buckets_: outlives them
  std::vector<std::vector<std::pmr::set<std::pair<int, int>>>> buckets_;  // [pool][free] -> (rank, machine)
  std::vector<std::vector<std::uint64_t>> nonempty_;                  // [pool]: bit f set = buckets_[pool][f] non-empty
};

// A job short of its count, as the placement takes it: by its key (below; unique, as it ends in the job's
// rank). For fair-share work also its pool and order: when no machine of the pool's subtree has room for
// one of its processes, place() would do nothing, and the job is passed over without reading its record
// again (at 50,000 nodes some 20,000 jobs wait, each record a cache miss). A needy job is no exception:
// the needy pass before filled its cleared machine as far as it could, and placing never frees space.
struct short_job {
  std::uint64_t key;
  int slot;
  int pool;  // -1: placed whatever the room (not fair-share work)
  int order;
};

}  // namespace

void what_of(cluster_model& m) {
  m.refresh_ranks();
  // Position of each pool in the children-first walk.
  std::vector<int> walk_pos(m.pools.size(), 0);
  for (std::size_t k = 0; k < m.pool_postorder.size(); ++k)
    walk_pos[static_cast<std::size_t>(m.pool_postorder[k])] = static_cast<int>(k);
  // One sweep over the jobs, in slot order, gathers everything the placement needs: the machines earmarked
  // for one job (a reservation's; the one cleared for a needy job unless a reservation has it), the needy
  // list, and the jobs of each priority that are short of their count. Placing only ever adds shares, so
  // a job that is not short now will not be short later in this round: placing it would do nothing.
  //
  // A priority's jobs are placed in the order of one integer key: fair-share work by pool in the
  // children-first walk, larger order first, then age; other work by age (age is unique). Every class of
  // a priority has one policy (the configuration refuses a mix); in a model built by hand with both, the
  // other work comes first.
  std::vector<int> earmark(m.machines.size(), -1);
  std::vector<int> needy, short_jobs;
  std::map<int, std::vector<short_job>> groups;  // priority -> its short jobs
  std::vector<std::vector<short_job>*> group_of_class(m.classes.size(), nullptr);
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    prefetch_ahead(m.jobs, i);
    const auto& j = m.jobs[i];
    if (!j.live) continue;
    const int ji = static_cast<int>(i);
    if (j.earmarks)
      for (int mc : j.reserve_machines) earmark[static_cast<std::size_t>(mc)] = ji;
    if (j.needy && j.needy_machine >= 0 && earmark[static_cast<std::size_t>(j.needy_machine)] < 0)
      earmark[static_cast<std::size_t>(j.needy_machine)] = ji;
    if (j.refused || j.cls < 0) continue;
    if (m.current(j) >= j.given) continue;
    short_jobs.push_back(ji);
    const int pool = m.class_pool(j);
    if (pool < 0) continue;
    if (j.needy || j.claim_q > 0) needy.push_back(ji);  // claim_q: sparing preemption's R4
    auto*& group = group_of_class[static_cast<std::size_t>(j.cls)];
    if (group == nullptr) group = &groups[m.priority_of(j)];
    std::uint64_t key = static_cast<std::uint32_t>(m.job_rank[i]);
    const bool fair_share = m.policy_of(j) == policy::fair_share;
    if (fair_share)
      key |= static_cast<std::uint64_t>(walk_pos[static_cast<std::size_t>(pool)] + 1) << 48 |
             static_cast<std::uint64_t>(0x1FFFF - j.order) << 31;
    group->push_back({key, ji, fair_share ? pool : -1, j.order});
  }
  placer p(m, std::move(earmark));
  // Needy jobs first: best priority, then submission time and id.
  std::sort(needy.begin(), needy.end(), [&](int a, int b) {
    const int pa = m.priority_of(m.jobs[static_cast<std::size_t>(a)]);
    const int pb = m.priority_of(m.jobs[static_cast<std::size_t>(b)]);
    if (pa != pb) return pa < pb;
    return m.job_rank[static_cast<std::size_t>(a)] < m.job_rank[static_cast<std::size_t>(b)];
  });
  for (int ji : needy) p.place(ji);

  std::vector<short_job> sort_scratch;
  for (auto& [prio, keyed] : groups) {
    radix_sort(keyed, sort_scratch, [](const short_job& s) { return s.key; });  // the keys are unique
    for (const short_job& s : keyed)
      if (s.pool < 0 || p.has_room(s.pool, s.order)) p.place(s.slot);
  }

  // Jobs still short: the space is being freed (defragmentation may refine the reason).
  for (std::size_t k = 0; k < short_jobs.size(); ++k) {
    prefetch_listed(m.jobs, short_jobs, k, [](int slot) { return slot; });
    auto& j = m.jobs[static_cast<std::size_t>(short_jobs[k])];
    if (m.current(j) < j.given && (j.reason == reason_code::none)) {
      bool any_host = j.no_hosts || j.item.hosts.empty();
      if (!any_host)
        for (const auto& mc : m.machines)
          if (!mc.foreign && m.in_subtree(mc.pool, m.class_pool(j)) && host_allowed(j, mc)) any_host = true;
      if (any_host)
        set_reason_text(j, reason_code::waiting_for_preemptions, "Waiting for preemptions.");
      else
        set_reason_text(j, reason_code::no_machine_matches_hosts, "No machines match user specified list.");
    }
  }
}

}  // namespace rmbus::core
