#include "core/how_much.hpp"

#include <algorithm>

#include "core/apportion.hpp"
#include "core/class_split.hpp"
#include "core/count_tables.hpp"
#include "core/free_blocks.hpp"
#include "core/job_caps.hpp"
#include "core/nonpreemptable_count.hpp"
#include "core/prefetch.hpp"
#include "core/reason_text.hpp"
#include "core/share_tree.hpp"
#include "core/split_order.hpp"

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

struct fair_share_counter {
  explicit fair_share_counter(count_tables& t) : tables(t), m(t.m) {}

  count_tables& tables;
  cluster_model& m;
  how_much_result out;
  std::vector<apportion_entity> job_entities;  // split_class's scratch
  apportion_workspace apportion_ws;            // reused by every apportion_qshares of the round
  how_much_cache* cache = nullptr;             // kept splits of earlier rounds (none: every split computed)
  std::vector<int> part_of_user;               // compute_split's scratch: a kept split's user part by user slot

  // Take n order-o nshares out of pool p's tables: its own first, then its children's.
  void count_out(int p, int o, std::int64_t n) {
    auto& tab = tables.local[static_cast<std::size_t>(p)];
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
    std::int64_t n = tables.local[static_cast<std::size_t>(p)].nshares(o);
    for (int c : m.pools[static_cast<std::size_t>(p)].children) n += subtree_nshares(c, o);
    return n;
  }

  free_blocks subtree_table(int p) const {
    free_blocks t = tables.local[static_cast<std::size_t>(p)];
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
        ents[i].wanted =
            wants_by_order(0, jobs.size(), [&](std::size_t k) { return std::pair{jobs[k].order, jobs[k].cap}; });
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

  split_order order;              // compute_split's: the order it serves a class's jobs in
  std::vector<int> user_of_rank;  // compute_split's: a user's place in by_user
  std::vector<char> taken_whole;  // compute_split's: per user, its jobs' counts copied from the kept split
  bool last_split_edited = false;     // compute_split's last call took its order from the kept split
  std::vector<int> taken_from;        // split_class's: per user taken whole, its place in the kept split
  std::vector<char> as_before;        // write_split's: per user, its jobs come out as in the split before
  std::vector<std::size_t> to_write;  // write_split's: the jobs it writes
  std::vector<std::int64_t> pfs_per_job;  // write_split's: per user, each of its jobs' pure fair share
  // The sweep's: the slots of fair-share jobs whose records it could not bring to what How Much last wrote
  // for them (how_much_cache::outcome), ascending.
  std::vector<int> unwritten;

  // What jobs want_of(first) .. want_of(last - 1) want together (want_of(k): a job's (order, cap)): per
  // order, ascending, the sum of their caps (orders are small: How Much leaves out the jobs no machine of
  // the pool can hold).
  template <class WantOf>
  std::vector<std::pair<int, std::int64_t>> wants_by_order(std::size_t first, std::size_t last, WantOf want_of) {
    int top = 0;
    for (std::size_t k = first; k != last; ++k) top = std::max(top, want_of(k).first);
    cap_by_order.assign(static_cast<std::size_t>(top) + 1, -1);  // -1: no job of that order
    for (std::size_t k = first; k != last; ++k) {
      const auto [order, cap] = want_of(k);
      auto& sum = cap_by_order[static_cast<std::size_t>(std::max(0, order))];
      sum = std::max<std::int64_t>(sum, 0) + cap;
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
    const int largest = tables.max_subtree[static_cast<std::size_t>(m.classes[cs].pool)];
    if (cache != nullptr) {
      if (cache->by_class.size() < m.classes.size()) cache->by_class.resize(m.classes.size());
      if (cache->job_set_seen.size() < m.classes.size()) cache->job_set_seen.resize(m.classes.size());
      const auto& kept = cache->by_class[cs];
      if (kept && kept->computed_from(cj, cls.given, orders, class_pfs, largest)) {
        ++cache->splits_reused;
        cache->job_set_seen[cs] = m.job_set_changes;  // the kept split's order is this round's
        out.groups.insert(out.groups.end(), kept->groups.begin(), kept->groups.end());
        write_split(c, *kept, cls, kept.get(), nullptr);
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
    const how_much_cache::class_split* prev = cache != nullptr ? cache->by_class[cs].get() : nullptr;
    compute_split(c, cls, orders, class_pfs, cj, *split, prev);
    // An edited split knows which users' jobs are as they were; those whose award is too were taken whole.
    if (last_split_edited) {
      taken_from = order.unchanged_from();
      for (std::size_t u = 0; u < taken_from.size(); ++u)
        if (taken_whole[u] == 0) taken_from[u] = -1;
    }
    write_split(c, *split, cls, last_split_edited ? prev : nullptr, &taken_from);
    if (cache != nullptr) {
      cache->by_class[cs] = std::move(split);
      cache->job_set_seen[cs] = m.job_set_changes;
    }
  }

  // The split itself: the class's award among its users (or down its share tree), each user's among its
  // jobs. `cj` is consumed. `kept`: the class's split of an earlier round (or null), whose user parts are
  // taken for the users whose award and jobs are what they were; `split` then keeps its own user parts.
  void compute_split(int c, const apportion_entity& cls, const std::vector<std::pair<int, std::int64_t>>& orders,
                     std::int64_t class_pfs, std::vector<class_job>& cj, how_much_cache::class_split& split,
                     const how_much_cache::class_split* kept) {
    const share_tree& tree = m.tree_of(c);
    const bool edited = kept != nullptr && tree.empty() &&
                        order.edit(m, cache->job_set_seen[static_cast<std::size_t>(c)], cj, split, *kept);
    last_split_edited = edited;
    if (edited)
      ++cache->splits_edited;
    else
      order.sort(cj, split);
    const auto& want_in_key_order = order.wants();
    const auto& unchanged_from = order.unchanged_from();
    const auto& key_order = split.key_order;
    const auto job_at = [&](std::size_t k) -> class_job& {
      return cj[static_cast<std::size_t>(key_order[k])];
    };
    const auto want_of = [&](std::size_t k) { return want_in_key_order[k]; };
    auto& by_user = split.by_user;
    // Each job's user, through the ranks (the key's high half), written in slot order.
    const auto rank_of = [&](std::size_t k) { return static_cast<std::size_t>(job_at(k).key >> 32); };
    user_of_rank.assign(cj.empty() ? 0 : std::max(m.users.size(), rank_of(cj.size() - 1) + 1), -1);
    for (std::size_t i = 0; i < by_user.size(); ++i) user_of_rank[rank_of(by_user[i].begin)] = static_cast<int>(i);
    for (auto& x : cj) x.user = user_of_rank[static_cast<std::size_t>(x.key >> 32)];
    free_blocks class_blocks = blocks_of(orders, cls.given);
    std::vector<apportion_entity> users(by_user.size());
    std::vector<std::vector<std::pair<int, std::int64_t>>> user_orders(users.size());
    for (std::size_t i = 0; i < by_user.size(); ++i) {
      const int same = edited ? unchanged_from[i] : -1;
      user_orders[i] = same >= 0 ? kept->user_parts[static_cast<std::size_t>(same)].orders
                                 : wants_by_order(by_user[i].begin, by_user[i].end, want_of);
      users[i].wanted = user_orders[i];
    }
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
    if (keep_parts) {
      split.user_parts.reserve(by_user.size());
      split.job_given.assign(cj.size(), 0);
    }
    // Users whose jobs keep their kept split (edited path): their jobs' counts are copied in slot order
    // below.
    taken_whole.assign(by_user.size(), 0);
    bool any_taken_whole = false;
    for (std::size_t ui = 0; ui < by_user.size(); ++ui) {
      const auto& span = by_user[ui];
      const std::size_t n_jobs = span.end - span.begin;
      split.user_qshares[ui] = users[ui].given_qshares();
      if (keep_parts)
        split.user_parts.push_back({span.user_slot, user_orders[ui], users[ui].given, span.begin, n_jobs});
      const auto* part = kept_part(kept, span.user_slot);
      const bool same_jobs =
          part != nullptr && part->count == n_jobs &&
          ((edited && unchanged_from[ui] >= 0) ||
           (part->orders == user_orders[ui] &&
            std::equal(kept->job_wants.begin() + static_cast<std::ptrdiff_t>(part->first),
                       kept->job_wants.begin() + static_cast<std::ptrdiff_t>(part->first + n_jobs),
                       want_in_key_order.begin() + static_cast<std::ptrdiff_t>(span.begin))));
      if (same_jobs && part->given == users[ui].given) {
        // The same award over the same jobs in the same order: the same split.
        ++cache->users_reused;
        std::copy_n(kept->job_given.begin() + static_cast<std::ptrdiff_t>(part->first), n_jobs,
                    split.job_given.begin() + static_cast<std::ptrdiff_t>(span.begin));
        if (edited && unchanged_from[ui] >= 0) {
          taken_whole[ui] = 1;
          any_taken_whole = true;
        } else {
          for (std::size_t k = 0; k < n_jobs; ++k)
            job_at(span.begin + k).given = kept->job_given[part->first + k];
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
        jes[k].wanted.assign(1, want_of(span.begin + k));
      }
      apportion_qshares(jes.data(), n_jobs, user_blocks, apportion_ws);
      for (std::size_t k = 0; k < n_jobs; ++k) {
        const std::int64_t given = jes[k].given_total();
        job_at(span.begin + k).given = given;
        if (keep_parts) split.job_given[span.begin + k] = given;
      }
    }
    // A user taken whole has every job where it was: its counts are read in slot order, as they lie.
    if (any_taken_whole)
      for (std::size_t k = 0; k < cj.size(); ++k)
        if (taken_whole[static_cast<std::size_t>(cj[k].user)] != 0)
          cj[k].given = kept->jobs[static_cast<std::size_t>(order.old_of_new()[k])].given;
    if (keep_parts) split.job_wants.assign(want_in_key_order.begin(), want_in_key_order.end());
    // Still in slot order, so that the records are written front to back.
    split.jobs = std::move(cj);
  }

  // The user part of `kept` for user slot `user_slot` (null: none, or no kept split).
  const how_much_cache::class_split::user_part* kept_part(const how_much_cache::class_split* kept, int user_slot) const {
    if (kept == nullptr || user_slot < 0 || static_cast<std::size_t>(user_slot) >= part_of_user.size()) return nullptr;
    const int i = part_of_user[static_cast<std::size_t>(user_slot)];
    return i < 0 ? nullptr : &kept->user_parts[static_cast<std::size_t>(i)];
  }

  // Each job's count, pure fair share and reason, from a split. `prev`: the split How Much wrote for the
  // class last (null: none), and `prev_user` the place in it of each user of `split` whose jobs and award are
  // those of `prev` (-1: not; null: `split` is `prev`). Such a user's jobs come out as they did then, which
  // the sweep has already written into their records (how_much_cache::outcome): they are written again only
  // where the sweep could not (listed in `unwritten`).
  void write_split(int c, const how_much_cache::class_split& split, const apportion_entity& cls,
                   const how_much_cache::class_split* prev, const std::vector<int>* prev_user) {
    const auto& by_user = split.by_user;
    const share_tree& tree = m.tree_of(c);
    const bool grouped = !tree.empty();
    const std::string& cname = m.classes[static_cast<std::size_t>(c)].def.name;
    const int pool = m.classes[static_cast<std::size_t>(c)].pool;
    const bool class_got_nothing = cls.given_qshares() == 0;
    // A user's pure fair share, and each of its jobs' (they share it equally).
    const auto pfs_of_user = [&](const how_much_cache::class_split& s, std::size_t u) {
      return grouped ? s.tree_user_pfs[u]
                     : s.class_pfs / static_cast<std::int64_t>(std::max<std::size_t>(1, s.by_user.size()));
    };
    pfs_per_job.resize(by_user.size());
    for (std::size_t u = 0; u < by_user.size(); ++u)
      pfs_per_job[u] = pfs_of_user(split, u) / static_cast<std::int64_t>(by_user[u].end - by_user[u].begin);
    // Users whose jobs come out as they did: the same jobs, award and pure fair share, and a class that got
    // something or nothing as then (the texts say which).
    bool any_as_before = false;
    as_before.assign(by_user.size(), 0);
    if (cache != nullptr && prev != nullptr && prev->largest == split.largest &&
        std::all_of(prev->class_given.begin(), prev->class_given.end(),
                    [](std::int64_t g) { return g == 0; }) == class_got_nothing) {
      for (std::size_t u = 0; u < by_user.size(); ++u) {
        const int pu = prev_user == nullptr ? static_cast<int>(u) : (*prev_user)[u];
        if (pu < 0) continue;
        const auto n = static_cast<std::int64_t>(by_user[u].end - by_user[u].begin);
        if (pfs_per_job[u] == pfs_of_user(*prev, static_cast<std::size_t>(pu)) / n) {
          as_before[u] = 1;
          any_as_before = true;
        }
      }
    }
    // The jobs to write, as positions in split.jobs (slot order), when some are not.
    to_write.clear();
    if (any_as_before) {
      std::size_t next_unwritten = 0;
      for (std::size_t k = 0; k < split.jobs.size(); ++k) {
        const class_job& x = split.jobs[k];
        if (as_before[static_cast<std::size_t>(x.user)] == 0) {
          to_write.push_back(k);
          continue;
        }
        while (next_unwritten < unwritten.size() && unwritten[next_unwritten] < x.slot) ++next_unwritten;
        if (next_unwritten < unwritten.size() && unwritten[next_unwritten] == x.slot) to_write.push_back(k);
      }
    }
    const std::size_t n_write = any_as_before ? to_write.size() : split.jobs.size();
    const auto job_to_write = [&](std::size_t w) -> const class_job& {
      return split.jobs[any_as_before ? to_write[w] : w];
    };
    // The text for a job that got nothing names no award: awards move with every arrival or departure in
    // the class, and a text that carried them would change the plan entry of every waiting job of the class
    // each time (`rmbus-admin explain` gives the awards of the moment). It names the cause, which changes
    // only with the job's own situation. Each user's part is written once.
    std::vector<std::string> nothing_for(by_user.size());
    for (std::size_t w = 0; w < n_write; ++w) {
      // The records are written in slot order, with gaps.
      if (w + records_ahead < n_write)
        prefetch_record(&m.jobs[static_cast<std::size_t>(job_to_write(w + records_ahead).slot)]);
      const class_job& x = job_to_write(w);
      auto& j = m.jobs[static_cast<std::size_t>(x.slot)];
      const auto& u = by_user[static_cast<std::size_t>(x.user)];
      j.reason = reason_code::none;  // the sweep may have written the reason it had
      j.given = static_cast<int>(x.given);
      j.pfs_qshares = pfs_per_job[static_cast<std::size_t>(x.user)];
      // What the sweep of a later round may write into the record before this class is split again.
      how_much_cache::outcome* out_of =
          cache != nullptr ? &cache->outcomes[static_cast<std::size_t>(x.slot)] : nullptr;
      if (out_of != nullptr) *out_of = {j.pfs_qshares, 0, j.given, true};
      if (x.given != 0 || x.cap <= 0) continue;
      if (split.largest < x.order) {
        tables.no_machine_reason(j, pool, split.largest);
        if (out_of != nullptr) out_of->known = false;
        continue;
      }
      nothing_cause cause = nothing_cause::none;
      if (!class_got_nothing && split.user_qshares[static_cast<std::size_t>(x.user)] < x.order)
        cause = nothing_cause::smaller_than_a_process;
      else if (!class_got_nothing && u.end - u.begin > 1)
        cause = nothing_cause::went_to_other_jobs;
      const std::uint64_t key =
          nothing_counted_key(c, u.user_slot, grouped ? x.group : -1, x.order, cause, class_got_nothing);
      if (out_of != nullptr) {
        out_of->nothing_key = key;
        out_of->known = key != 0;
      }
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
                 tables.size_of(x.order), ")");
      j.reason_key = key;
    }
  }
};

}  // namespace

how_much_result how_much(cluster_model& m, const round_input& in, how_much_cache* cache) {
  count_tables tables{m, cache != nullptr ? &cache->machines : nullptr};
  fair_share_counter c{tables};
  c.cache = cache;
  nonpreemptable_counter np{tables};
  for (const auto& [u, mb] : in.other_pools_nonpreemptable_mb) tables.np_mb[u] += mb;

  // One sweep over the jobs: each one's cap is computed and its counts of the last round are reset (the
  // reason text is left: it counts only with a reason, and its buffer serves the next one), non-preemptable
  // holdings are summed per user, and the live, schedulable jobs of classes in this tree are grouped by
  // class with all that the split reads of them, so that no later pass reads the job records again.
  std::vector<std::vector<class_job>> jobs_of_class(m.classes.size());
  // Each class's list at the size it had last round: grown by doubling, the 63,000 jobs of a class at
  // 50,000 nodes were copied some 16 times over.
  if (cache != nullptr && cache->jobs_per_class.size() == jobs_of_class.size())
    for (std::size_t c = 0; c < jobs_of_class.size(); ++c) jobs_of_class[c].reserve(cache->jobs_per_class[c]);
  // Non-preemptable holdings summed per interned user, added to np_mb by name after the sweep: a lookup of
  // the user's name in np_mb (a tree) for each such job was 1.4% of a delta round at 50,000 nodes.
  std::vector<std::uint64_t> np_held_q(m.users.size(), 0);
  if (cache != nullptr) cache->outcomes.resize(m.jobs.size());
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    prefetch_ahead(m.jobs, i);
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
    // Its shares not being removed, as the share bookkeeping keeps them (job_rec::held_q): reading the shares
    // themselves was a third of this sweep.
    if (j.held_q > 0 && j.cls >= 0 && m.policy_of(j) != policy::fair_share) {
      if (j.user_slot >= 0 && static_cast<std::size_t>(j.user_slot) < np_held_q.size())
        np_held_q[static_cast<std::size_t>(j.user_slot)] += static_cast<std::uint64_t>(j.held_q);
      else
        tables.np_mb[j.item.user] += static_cast<std::uint64_t>(j.held_q) * m.quantum_mb;
    }
    if (j.refused || j.cls < 0 || m.classes[static_cast<std::size_t>(j.cls)].pool < 0) continue;
    if (cache != nullptr && m.classes[static_cast<std::size_t>(j.cls)].def.policy == policy::fair_share) {
      // What How Much last wrote for this job, while the record is at hand: the split of its class writes
      // again only the jobs whose outcome may differ, and those this could not bring back.
      const auto& o = cache->outcomes[i];
      if (o.known && (o.nothing_key == 0 || o.nothing_key == j.reason_key)) {
        j.given = o.given;
        j.pfs_qshares = o.pfs_qshares;
        if (o.nothing_key != 0) j.reason = reason_code::no_share_counted;
      } else {
        c.unwritten.push_back(static_cast<int>(i));
      }
    }
    const auto user =
        j.user_slot < 0 ? 0 : static_cast<std::uint64_t>(m.user_rank[static_cast<std::size_t>(j.user_slot)]);
    jobs_of_class[static_cast<std::size_t>(j.cls)].push_back(
        {user << 32 | static_cast<std::uint32_t>(m.job_rank[i]), static_cast<int>(i), j.order, j.cap.cap,
         j.user_slot, j.group, 0, m.current(j), 0});
  }
  for (std::size_t u = 0; u < np_held_q.size(); ++u)
    if (np_held_q[u] > 0) tables.np_mb[m.users[u]] += np_held_q[u] * m.quantum_mb;
  if (cache != nullptr) {
    cache->jobs_per_class.resize(jobs_of_class.size());
    for (std::size_t c = 0; c < jobs_of_class.size(); ++c) cache->jobs_per_class[c] = jobs_of_class[c].size();
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
        const int largest = tables.max_subtree[static_cast<std::size_t>(pool)];
        auto& cj = jobs_of_class[static_cast<std::size_t>(cl)];
        std::size_t kept = 0;
        for (const class_job& x : cj) {
          if (x.order <= largest && x.cap > 0) {
            cj[kept++] = x;
            continue;
          }
          // Left out of the split: counted nothing (the sweep may have written what it was counted last).
          auto& j = m.jobs[static_cast<std::size_t>(x.slot)];
          j.given = 0;
          j.pfs_qshares = 0;
          j.reason = reason_code::none;
          if (x.order > largest)
            tables.no_machine_reason(j, pool, largest);
          else if (x.held == 0)
            set_reason(j, reason_code::completed, "no work left to give processes to");
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
      if (pol == policy::fixed_share) np.count_fixed(j);
      else np.count_reserve(j);
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
