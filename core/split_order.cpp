#include "core/split_order.hpp"

#include <algorithm>

#include "core/prefetch.hpp"
#include "core/radix_sort.hpp"

namespace rmbus::core {

void split_order::sort(const std::vector<class_job>& cj, how_much_cache::class_split& split) {
  // Both ranks are unique, so the keys are a total order.
  by_key_.resize(cj.size());
  for (std::size_t k = 0; k < cj.size(); ++k) by_key_[k] = {cj[k].key, k};
  radix_sort(by_key_, by_key_scratch_, [](const keyed_job& x) { return x.key; });
  // What the users' splits read of each job, gathered in key order in one pass: the jobs lie in slot order,
  // and the passes below, reading them in key order, each missed the cache at nearly every job.
  wants_.resize(cj.size());
  split.key_order.resize(cj.size());
  for (std::size_t k = 0; k < cj.size(); ++k) {
    prefetch_listed(cj, by_key_, k, [](const keyed_job& x) { return x.at; });
    const class_job& x = cj[by_key_[k].at];
    wants_[k] = {x.order, x.cap};
    split.key_order[k] = static_cast<int>(by_key_[k].at);
  }
  // The users' spans from the keys alone (the user's rank is the key's high half).
  auto& by_user = split.by_user;
  const auto rank_of = [&](std::size_t k) { return by_key_[k].key >> 32; };
  for (std::size_t k = 0; k < cj.size(); ++k) {
    if (by_user.empty() || rank_of(by_user.back().begin) != rank_of(k))
      by_user.push_back({cj[by_key_[k].at].user_slot, k, k});
    by_user.back().end = k + 1;
  }
}

bool split_order::edit(const cluster_model& m, const std::optional<std::uint64_t>& seen,
                     const std::vector<class_job>& cj, how_much_cache::class_split& split,
                     const how_much_cache::class_split& kept) {
  if (!seen || *seen < m.job_set_log_base || *seen > m.job_set_changes ||
      m.job_set_changes - m.job_set_log_base != m.job_set_log.size() ||
      kept.key_order.size() != kept.jobs.size() || kept.user_parts.size() != kept.by_user.size())
    return false;
  const std::size_t n_users = m.users.size();
  changed_user_.assign(n_users, 0);
  // Sorting is as quick as editing when most users changed: the merge stops as soon as they have.
  std::size_t n_changed = 0;
  const std::size_t most = kept.by_user.size() / 2;
  const auto mark = [&](int user_slot) {
    if (user_slot < 0 || static_cast<std::size_t>(user_slot) >= n_users) return false;
    auto& changed = changed_user_[static_cast<std::size_t>(user_slot)];
    n_changed += changed == 0 ? 1 : 0;
    changed = 1;
    return n_changed <= most;
  };
  // The jobs that came, went or changed their age or user since: a job still here marks its user (one gone
  // is found missing by the merge below).
  for (auto id = m.job_set_log.begin() + static_cast<std::ptrdiff_t>(*seen - m.job_set_log_base);
       id != m.job_set_log.end(); ++id)
    if (const auto found = m.job_index.find(*id);
        found != m.job_index.end() && !mark(m.jobs[static_cast<std::size_t>(found->second)].user_slot))
      return false;
  // The jobs of both rounds lie in slot order: one merge pairs them.
  const auto& old = kept.jobs;
  new_of_old_.assign(old.size(), -1);
  old_of_new_.assign(cj.size(), -1);
  for (std::size_t i = 0, k = 0; i < old.size() || k < cj.size();) {
    const bool old_only = k == cj.size() || (i < old.size() && old[i].slot < cj[k].slot);
    const bool new_only = !old_only && (i == old.size() || cj[k].slot < old[i].slot);
    if (old_only) {
      if (!mark(old[i++].user_slot)) return false;
    } else if (new_only) {
      if (!mark(cj[k++].user_slot)) return false;
    } else {
      const class_job& a = old[i];
      const class_job& b = cj[k];
      if (b.user_slot < 0 || static_cast<std::size_t>(b.user_slot) >= n_users) return false;
      if (a.order == b.order && a.cap == b.cap && a.user_slot == b.user_slot && a.group == b.group) {
        new_of_old_[i] = static_cast<int>(k);
        old_of_new_[k] = static_cast<int>(i);
      } else if (!mark(a.user_slot) || !mark(b.user_slot)) {
        return false;
      }
      ++i;
      ++k;
    }
  }
  // The changed users' jobs, sorted by key: by user (the key's high half), each user's oldest first.
  changed_jobs_.clear();
  for (std::size_t k = 0; k < cj.size(); ++k)
    if (changed_user_[static_cast<std::size_t>(cj[k].user_slot)] != 0)
      changed_jobs_.push_back({cj[k].key, k});
  std::sort(changed_jobs_.begin(), changed_jobs_.end(),
            [](const keyed_job& a, const keyed_job& b) { return a.key < b.key; });
  // Both lists of users in name order, merged: the kept users in kept's order, the changed ones by rank.
  auto& by_user = split.by_user;
  auto& key_order = split.key_order;
  key_order.clear();
  key_order.reserve(cj.size());
  wants_.clear();
  wants_.reserve(cj.size());
  unchanged_from_.clear();
  const auto rank_of_slot = [&](int user_slot) { return m.user_rank[static_cast<std::size_t>(user_slot)]; };
  std::size_t ku = 0, cpos = 0;
  while (true) {
    while (ku < kept.by_user.size() &&
           changed_user_[static_cast<std::size_t>(kept.by_user[ku].user_slot)] != 0)
      ++ku;
    const bool have_kept = ku < kept.by_user.size();
    const bool have_changed = cpos < changed_jobs_.size();
    if (!have_kept && !have_changed) break;
    const std::size_t begin = key_order.size();
    if (have_kept && (!have_changed || rank_of_slot(kept.by_user[ku].user_slot) <
                                           static_cast<int>(changed_jobs_[cpos].key >> 32))) {
      const auto& span = kept.by_user[ku];
      for (std::size_t p = span.begin; p < span.end; ++p)
        key_order.push_back(new_of_old_[static_cast<std::size_t>(kept.key_order[p])]);
      const auto& part = kept.user_parts[ku];
      wants_.insert(
          wants_.end(), kept.job_wants.begin() + static_cast<std::ptrdiff_t>(part.first),
          kept.job_wants.begin() + static_cast<std::ptrdiff_t>(part.first + part.count));
      by_user.push_back({span.user_slot, begin, key_order.size()});
      unchanged_from_.push_back(static_cast<int>(ku++));
      continue;
    }
    const std::uint64_t rank = changed_jobs_[cpos].key >> 32;
    const int user_slot = cj[changed_jobs_[cpos].at].user_slot;
    for (; cpos < changed_jobs_.size() && changed_jobs_[cpos].key >> 32 == rank; ++cpos) {
      const class_job& x = cj[changed_jobs_[cpos].at];
      key_order.push_back(static_cast<int>(changed_jobs_[cpos].at));
      wants_.emplace_back(x.order, x.cap);
    }
    by_user.push_back({user_slot, begin, key_order.size()});
    unchanged_from_.push_back(-1);
  }
  return true;
}

}  // namespace rmbus::core
