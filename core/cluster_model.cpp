#include "core/cluster_model.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace rmbus::core {

const share_tree& cluster_model::tree_of(int cls) const {
  static const share_tree none;
  return cls >= 0 && static_cast<std::size_t>(cls) < trees.size() ? trees[static_cast<std::size_t>(cls)] : none;
}

bool cluster_model::in_subtree(int p, int ancestor) const {
  while (p >= 0) {
    if (p == ancestor) return true;
    p = pools[static_cast<std::size_t>(p)].parent;
  }
  return false;
}

namespace {
int held_by(const share_rec& s) { return !s.removing() && !s.blacklisted ? 1 : 0; }
int running_by(const share_rec& s) { return s.status == share_status::running && !s.blacklisted ? 1 : 0; }

// Adds (sign 1) or takes away (sign -1) share s's part of its job's counts.
void tally(job_rec& j, const share_rec& s, int sign) {
  j.cap_current = false;  // the cap reads these counts
  j.held += sign * held_by(s);
  j.held_q += sign * held_by(s) * s.order;
  j.running += sign * running_by(s);
  if (s.initialized) {
    j.initialized += sign;
    if (s.init_ms > 0) {
      j.timed_init += sign;
      j.init_ms_sum += sign * s.init_ms;
    }
  }
}
}  // namespace

void cluster_model::uncount_share(int slot) {
  const auto& s = shares[static_cast<std::size_t>(slot)];
  tally(jobs[static_cast<std::size_t>(s.job)], s, -1);
}

void cluster_model::count_share(int slot) {
  const auto& s = shares[static_cast<std::size_t>(slot)];
  tally(jobs[static_cast<std::size_t>(s.job)], s, 1);
}

void cluster_model::recount_jobs() {
  for (auto& j : jobs) {
    j.held = j.held_q = j.running = j.initialized = j.timed_init = j.reclaiming = 0;
    j.init_ms_sum = 0;
    j.cap_current = false;
    for (int s : j.shares) {
      tally(j, shares[static_cast<std::size_t>(s)], 1);
      j.reclaiming += shares[static_cast<std::size_t>(s)].reclaim_at_ms > 0 ? 1 : 0;
    }
  }
}

std::pair<share_id, std::uint64_t> cluster_model::new_share_id() {
  const std::uint64_t seq = next_seq++;
  return {share_id(share_prefix + "." + std::to_string(seq)), seq};
}

int cluster_model::add_share(int job, int machine, int order, share_id id, std::uint64_t seq,
                             share_status status) {
  int slot;
  if (!free_share_slots.empty()) {
    slot = free_share_slots.back();
    free_share_slots.pop_back();
  } else {
    slot = static_cast<int>(shares.size());
    shares.emplace_back();
  }
  auto& s = shares[static_cast<std::size_t>(slot)];
  s = share_rec{};
  s.live = true;
  created_shares.push_back(slot);
  s.id = std::move(id);
  s.seq = seq;
  s.job = job;
  s.machine = machine;
  s.order = order;
  s.status = status;
  auto& j = jobs[static_cast<std::size_t>(job)];
  const auto* rc = class_of(j);
  s.fixed = rc != nullptr && rc->policy != policy::fair_share;
  j.shares.push_back(slot);
  count_share(slot);
  shares_changed(job);
  auto& m = machines[static_cast<std::size_t>(machine)];
  m.shares.push_back(slot);
  m.used += order;
  if (s.removing()) m.removing += order;
  if (s.fixed) {
    m.nonpreemptable_used += order;
    machines_changed();
  }
  share_index[s.id] = slot;
  return slot;
}

namespace {
void erase_value(std::vector<int>& v, int x) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == x) {
      v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
}
}  // namespace

void cluster_model::remove_share(int slot) {
  auto& s = shares[static_cast<std::size_t>(slot)];
  if (!s.live) return;
  // A grant What Of made this round and a later stage dropped before any plan listed it was never given:
  // counting it would report a change every round of a schedule at rest, and keep its rounds from being
  // skipped (rmbus-sim-check seed 65791: one such grant a round for ever).
  if (!s.published && s.status == share_status::new_share && round_given > 0) --round_given;
  set_reclaim(slot, 0);
  uncount_share(slot);
  auto& m = machines[static_cast<std::size_t>(s.machine)];
  m.used -= s.order;
  if (s.removing()) m.removing -= s.order;
  if (s.fixed) m.nonpreemptable_used -= s.order;
  if (s.blacklisted) --m.blacklisted_shares;
  if (s.fixed || s.blacklisted) machines_changed();
  erase_value(m.shares, slot);
  erase_value(jobs[static_cast<std::size_t>(s.job)].shares, slot);
  shares_changed(s.job);
  share_index.erase(s.id);
  s = share_rec{};
  free_share_slots.push_back(slot);
}

void cluster_model::index_job(int slot) {
  auto& j = jobs[static_cast<std::size_t>(slot)];
  auto [it, fresh] = user_index.try_emplace(j.item.user, static_cast<int>(users.size()));
  if (fresh) users.push_back(j.item.user);
  j.user_slot = it->second;
  age_added.emplace_back(j.item.submitted_ms, j.item.id, slot);
  jobs_by_id[j.item.id] = slot;
  ranks_stale = true;
  log_job_set_change(j.item.id);
}

void cluster_model::unindex_job(int slot) {
  const auto& j = jobs[static_cast<std::size_t>(slot)];
  age_removed.emplace_back(j.item.submitted_ms, j.item.id, slot);
  jobs_by_id.erase(j.item.id);
  ranks_stale = true;
  log_job_set_change(j.item.id);
}

void cluster_model::log_job_set_change(const job_id& id) {
  if (job_set_log.size() >= max_job_set_log) {
    job_set_log.clear();
    job_set_log_base = job_set_changes;
  }
  job_set_log.push_back(id);
  ++job_set_changes;
}

void cluster_model::refresh_ranks() {
  if (machine_rank.size() != machines.size()) {
    // Machines are appended, or removed by forget_machines (which clears these), so a size change is the
    // only way these go stale.
    std::vector<int> by_name(machines.size());
    for (std::size_t i = 0; i < by_name.size(); ++i) by_name[i] = static_cast<int>(i);
    std::sort(by_name.begin(), by_name.end(), [&](int a, int b) {
      return machines[static_cast<std::size_t>(a)].name < machines[static_cast<std::size_t>(b)].name;
    });
    machine_rank.assign(machines.size(), 0);
    for (std::size_t r = 0; r < by_name.size(); ++r) machine_rank[static_cast<std::size_t>(by_name[r])] = static_cast<int>(r);
  }
  // The scheduler keeps job_index and jobs_by_id in step; a model built by hand (or after drop_indexes)
  // has not indexed its jobs: count them, and index every live job now if they are not all there.
  if (jobs_by_id.empty() || jobs_by_id.size() != job_index.size()) {
    std::size_t live = 0;
    for (const auto& j : jobs) live += j.live ? 1 : 0;
    if (live != jobs_by_id.size()) {
      jobs_by_age.clear();
      age_added.clear();
      age_removed.clear();
      jobs_by_id.clear();
      job_rank.clear();  // ranked anew below, never edited in place from an order rebuilt from scratch
      for (std::size_t i = 0; i < jobs.size(); ++i)
        if (jobs[i].live) index_job(static_cast<int>(i));
      // Ids left the index without unindex_job: the log does not name them, so no reader may rely on it.
      job_set_log.clear();
      job_set_log_base = ++job_set_changes;
    }
  }
  if (!ranks_stale && job_rank.size() == jobs.size()) return;
  if (!job_rank.empty() && age_added.size() + age_removed.size() <= max_age_edits_in_place) {
    // A round after one arrival or completion: the ranks before the first edit stand.
    job_rank.resize(jobs.size(), -1);
    const std::size_t from = edit_age_in_place();
    for (std::size_t k = from; k < jobs_by_age.size(); ++k)
      job_rank[static_cast<std::size_t>(std::get<2>(jobs_by_age[k]))] = static_cast<int>(k);
  } else {
    merge_age_changes();
    job_rank.assign(jobs.size(), -1);
    int r = 0;
    for (const auto& [submitted, id, slot] : jobs_by_age) job_rank[static_cast<std::size_t>(slot)] = r++;
  }
  std::vector<int> by_name(users.size());
  for (std::size_t i = 0; i < by_name.size(); ++i) by_name[i] = static_cast<int>(i);
  std::sort(by_name.begin(), by_name.end(),
            [&](int a, int b) { return users[static_cast<std::size_t>(a)] < users[static_cast<std::size_t>(b)]; });
  user_rank.assign(users.size(), 0);
  for (std::size_t k = 0; k < by_name.size(); ++k) user_rank[static_cast<std::size_t>(by_name[k])] = static_cast<int>(k);
  ranks_stale = false;
}

// The age order as a sorted vector, brought up to date once per round with the arrivals and departures
// since the last call (a tree of 20,000 nodes cost a cache miss per node to walk every round). A key may
// come and go within one batch (work that arrived and left, or changed its user): additions and removals
// are matched as multisets.
void cluster_model::merge_age_changes() {
  if (age_added.empty() && age_removed.empty()) return;
  std::sort(age_added.begin(), age_added.end());
  std::sort(age_removed.begin(), age_removed.end());
  // One walk: the merge of the kept order and the additions (std::merge's order: an addition goes first only
  // when it is strictly smaller), less the removals, each cancelling one occurrence. Written into a vector
  // kept from round to round, so that each of the 20,000 keys is moved once.
  auto& next = age_scratch;
  next.clear();
  next.reserve(jobs_by_age.size() + age_added.size());
  auto old = jobs_by_age.begin();
  auto add = age_added.begin();
  auto gone = age_removed.begin();
  while (old != jobs_by_age.end() || add != age_added.end()) {
    auto& key = (add != age_added.end() && (old == jobs_by_age.end() || *add < *old)) ? *add++ : *old++;
    while (gone != age_removed.end() && *gone < key) ++gone;
    if (gone != age_removed.end() && *gone == key) {
      ++gone;
      continue;
    }
    next.push_back(std::move(key));
  }
  jobs_by_age.swap(next);
  next.clear();
  age_added.clear();
  age_removed.clear();
}

// A few arrivals and departures inserted and erased where they lie (merge_age_changes moves every key):
// additions first, then each removal cancels one equal key, as the merge matches them. The removed jobs'
// slots lose their rank. Returns the first position whose key moved; the keys before it did not.
std::size_t cluster_model::edit_age_in_place() {
  std::size_t from = jobs_by_age.size();
  for (auto& key : age_added) {
    const auto at = std::upper_bound(jobs_by_age.begin(), jobs_by_age.end(), key);
    from = std::min(from, static_cast<std::size_t>(at - jobs_by_age.begin()));
    jobs_by_age.insert(at, std::move(key));
  }
  for (const auto& key : age_removed) {
    const auto at = std::lower_bound(jobs_by_age.begin(), jobs_by_age.end(), key);
    if (at == jobs_by_age.end() || *at != key) continue;
    from = std::min(from, static_cast<std::size_t>(at - jobs_by_age.begin()));
    job_rank[static_cast<std::size_t>(std::get<2>(key))] = -1;
    jobs_by_age.erase(at);
  }
  age_added.clear();
  age_removed.clear();
  return from;
}

void cluster_model::drop_indexes() {
  machines_changed();  // nothing kept from an earlier walk of the machines is trusted either
  machine_rank.clear();
  job_rank.clear();
  user_rank.clear();
  users.clear();
  user_index.clear();
  jobs_by_age.clear();
  age_added.clear();
  age_removed.clear();
  jobs_by_id.clear();
  for (auto& j : jobs) {
    j.user_slot = -1;
    j.reason_key = 0;  // it names a user slot
  }
  ranks_stale = true;
  recount_jobs();
}

void cluster_model::transfer_share(int slot, int new_job) {
  auto& s = shares[static_cast<std::size_t>(slot)];
  set_reclaim(slot, 0);
  uncount_share(slot);
  erase_value(jobs[static_cast<std::size_t>(s.job)].shares, slot);
  shares_changed(s.job);
  s.job = new_job;
  jobs[static_cast<std::size_t>(new_job)].shares.push_back(slot);
  count_share(slot);
  shares_changed(new_job);
}

void cluster_model::mark_removing(int slot, share_status status) {
  auto& s = shares[static_cast<std::size_t>(slot)];
  if (!s.live || s.removing()) return;
  set_reclaim(slot, 0);  // preempted or evicted now: the deadline is moot
  uncount_share(slot);
  s.status = status;
  count_share(slot);
  shares_changed(s.job);
  machines[static_cast<std::size_t>(s.machine)].removing += s.order;
  removals.push_back(slot);
  if (status == share_status::preempt) ++round_preempted;
  if (status == share_status::evict) ++round_evicted;
}

void cluster_model::set_reclaim(int slot, std::int64_t at_ms) {
  auto& s = shares[static_cast<std::size_t>(slot)];
  if (!s.live || s.reclaim_at_ms == at_ms) return;
  const int delta = (at_ms > 0 ? 1 : 0) - (s.reclaim_at_ms > 0 ? 1 : 0);
  s.reclaim_at_ms = at_ms;
  jobs[static_cast<std::size_t>(s.job)].reclaiming += delta;
  machines[static_cast<std::size_t>(s.machine)].reclaiming += delta * s.order;
  shares_changed(s.job);  // the plan lists the deadline
}

}  // namespace rmbus::core
