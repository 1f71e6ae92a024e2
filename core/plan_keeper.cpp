#include "core/plan_keeper.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "containers/vector_edits.hpp"
#include "core/held_back.hpp"
#include "core/prefetch.hpp"

namespace rmbus::core {

namespace {
// Assigns only when the value differs, so that an unchanged string keeps its buffer and costs a compare.
// Returns whether it assigned.
template <class T>
bool assign_if_changed(T& dst, const T& src) {
  if (dst == src) return false;
  dst = src;
  return true;
}
}  // namespace

const schedule_plan& plan_keeper::update(const cluster_model& m, std::int64_t now_ms,
                                         jobs_in_id_order order) {
  removed_.clear();
  changed_.clear();
  const bool rebuilt = rebuild_;
  if (rebuild_ || m.job_set_changes != job_set_seen_ || sources_.size() != m.jobs_by_id.size())
    merge_jobs(m, order);
  const bool with_groups = !m.group_names.empty();
  const bool same_settings = !rebuilt && with_groups == with_groups_ && quantum_mb_ == m.quantum_mb;
  with_groups_ = with_groups;
  quantum_mb_ = m.quantum_mb;
  if (filled_from_.size() < m.jobs.size()) {
    filled_from_.resize(m.jobs.size());
    filled_.resize(m.jobs.size(), 0);
  }
  if (!same_settings || !fill_changed(m)) {
    // Every entry, in id order. After a fill_changed that found the entries and the jobs apart, the
    // entries it filled are filled again and change nothing: its changes stay listed.
    auto& c = plan_.counts;
    c = schedule_counts{};
    for (std::size_t k = 0; k < plan_.jobs.size(); ++k) {
      if (fill(m, k)) changed_.push_back(k);
      const job_plan& j = plan_.jobs[k];
      if (j.status == job_status::refused)
        ++c.refused_jobs;
      else if (j.reason != reason_code::none)
        ++c.pending_jobs;
      const auto slot = static_cast<std::size_t>(sources_[k].slot);
      if (slot < filled_from_.size()) {
        filled_from_[slot] = inputs_of(m.jobs[slot]);
        filled_[slot] = 1;
      }
    }
    std::sort(changed_.begin(), changed_.end());
    changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
  }

  auto& c = plan_.counts;
  plan_.pool = m.top_pool;
  if (plan_.group_names.size() != m.group_names.size())
    plan_.group_names = m.group_names;  // fixed per scheduler
  plan_.now_ms = now_ms;
  plan_.quantum_mb = m.quantum_mb;
  c.jobs = static_cast<int>(plan_.jobs.size());
  // A walk of every machine, taken again only when one changed (the model counts those changes).
  if (rebuilt || nodes_counted_at_ != m.machine_changes || nodes_counted_of_ != m.machines.size()) {
    nodes_ = schedulable_nodes_ = 0;
    for (const auto& mc : m.machines) {
      nodes_ += mc.foreign ? 0 : 1;
      schedulable_nodes_ += mc.schedulable() ? 1 : 0;
    }
    nodes_counted_at_ = m.machine_changes;
    nodes_counted_of_ = m.machines.size();
  }
  c.nodes = nodes_;
  c.schedulable_nodes = schedulable_nodes_;
  c.given = m.round_given;
  c.preempted = m.round_preempted;
  c.evicted = m.round_evicted;
  return plan_;
}

// inputs_of reads these of every record every round, in slot order, and the walk asks for two cache lines a
// record (core/prefetch.hpp): a field past the second costs a miss per job (decided_by once sat in the third).
static_assert(offsetof(job_rec, cap) + offsetof(job_cap_result, decided_by) + sizeof(const char*) <= 128 &&
                  offsetof(job_rec, reason_version) + sizeof(std::uint64_t) <= 128,
              "a field the plan keeper compares left the first two cache lines of job_rec");

plan_keeper::fill_inputs plan_keeper::inputs_of(const job_rec& j) {
  fill_inputs in;
  in.shares_version = j.shares_version;
  in.reason_version = j.reason_version;
  in.demand = j.demand;
  in.pfs_qshares = j.pfs_qshares;
  in.cap = j.cap.cap;
  in.cap_decided_by = j.cap.decided_by;
  in.given = j.given;
  in.held = j.held;
  in.order = j.order;
  in.group = j.group;
  in.user_slot = j.user_slot;
  in.cls = j.cls;
  in.reason = j.reason;
  in.refusal = j.refusal;
  in.refused = j.refused;
  in.done = j.done;
  return in;
}

void plan_keeper::map_slots_to_entries(const cluster_model& m) {
  entry_of_slot_.assign(m.jobs.size(), -1);
  for (std::size_t k = 0; k < sources_.size(); ++k) {
    const auto slot = static_cast<std::size_t>(sources_[k].slot);
    if (slot < entry_of_slot_.size()) entry_of_slot_[slot] = static_cast<int>(k);
  }
  entries_moved_ = false;
}

bool plan_keeper::fill_changed(const cluster_model& m) {
  if (entries_moved_ || entry_of_slot_.size() != m.jobs.size()) map_slots_to_entries(m);
  auto& c = plan_.counts;
  c = schedule_counts{};
  std::size_t visited = 0;
  for (std::size_t slot = 0; slot < m.jobs.size(); ++slot) {
    prefetch_ahead(m.jobs, slot);
    const auto& j = m.jobs[slot];
    if (!j.live) continue;
    const int k = entry_of_slot_[slot];
    if (k < 0) return false;
    ++visited;
    const fill_inputs in = inputs_of(j);
    if (!filled_[slot] || !(filled_from_[slot] == in) || (in.reason_version >> 32) == 0) {
      if (fill(m, static_cast<std::size_t>(k))) changed_.push_back(static_cast<std::size_t>(k));
      filled_from_[slot] = in;
      filled_[slot] = 1;
    }
    // As the entry says it (fill: a refused job's status is refused, another's reason is its own).
    if (in.refused)
      ++c.refused_jobs;
    else if (in.reason != reason_code::none)
      ++c.pending_jobs;
  }
  if (visited != plan_.jobs.size()) return false;
  std::sort(changed_.begin(), changed_.end());
  return true;
}

const schedule_plan& plan_keeper::unchanged(std::int64_t now_ms) {
  plan_.now_ms = now_ms;
  plan_.counts.given = plan_.counts.preempted = plan_.counts.evicted = 0;
  changed_.clear();
  removed_.clear();
  return plan_;
}

// The entries in the model's id order: kept entries are moved over (both lists are sorted by id, so one
// walk pairs them), new jobs get an empty entry that fill() builds. Old entries the walk passes are gone.
void plan_keeper::merge_jobs(const cluster_model& m, jobs_in_id_order order) {
  entries_moved_ = true;
  const bool ordered = order.slots != nullptr && order.ids != nullptr &&
                       order.slots->size() == m.jobs_by_id.size() && order.ids->size() == order.slots->size();
  if (!rebuild_ && merge_logged(m)) {
    job_set_seen_ = m.job_set_changes;
    ++merges_in_place_;
    ++merges_logged_;
    return;
  }
  if (ordered && !rebuild_) {
    merge_in_place(*order.slots, *order.ids);
    job_set_seen_ = m.job_set_changes;
    ++merges_in_place_;
    // After a logged merge that missed a change, both merges' removals are listed: in id order again.
    if (!std::is_sorted(removed_.begin(), removed_.end())) std::sort(removed_.begin(), removed_.end());
    return;
  }
  containers::indirect_vector<job_plan> jobs;
  std::vector<source> sources;
  jobs.reserve(containers::with_room_to_grow(m.jobs_by_id.size()));  // the next arrivals are edited in place
  sources.reserve(containers::with_room_to_grow(m.jobs_by_id.size()));
  std::size_t old = 0;
  if (ordered) {
    for (std::size_t k = 0; k < order.slots->size(); ++k)
      take_entry((*order.ids)[k], (*order.slots)[k], old, jobs, sources);
  } else {
    for (const auto& [id, slot] : m.jobs_by_id) take_entry(id, slot, old, jobs, sources);
  }
  for (; old < plan_.jobs.size(); ++old) removed_.push_back(plan_.jobs[old].id);
  if (!std::is_sorted(removed_.begin(), removed_.end())) std::sort(removed_.begin(), removed_.end());
  plan_.jobs = std::move(jobs);
  sources_ = std::move(sources);
  job_set_seen_ = m.job_set_changes;
  rebuild_ = false;
}

bool plan_keeper::merge_logged(const cluster_model& m) {
  if (job_set_seen_ < m.job_set_log_base || m.job_set_changes - m.job_set_log_base != m.job_set_log.size())
    return false;
  logged_ids_.assign(m.job_set_log.begin() + static_cast<std::ptrdiff_t>(job_set_seen_ - m.job_set_log_base),
                     m.job_set_log.end());
  std::sort(logged_ids_.begin(), logged_ids_.end());
  logged_ids_.erase(std::unique(logged_ids_.begin(), logged_ids_.end()), logged_ids_.end());
  using kind = containers::vector_edit_kind;
  edits_.clear();
  edit_sources_.clear();
  const auto by_id = [](const job_plan& p, const job_id& id) { return p.id < id; };
  // Ids in order, so the entries' places come in order too (two new ids before one entry: smaller first).
  for (const auto& id : logged_ids_) {
    const auto at = static_cast<std::size_t>(
        std::lower_bound(plan_.jobs.begin(), plan_.jobs.end(), id, by_id) - plan_.jobs.begin());
    const bool listed = at < plan_.jobs.size() && plan_.jobs[at].id == id;
    const auto now = m.jobs_by_id.find(id);
    if (now == m.jobs_by_id.end()) {
      if (!listed) continue;  // came and went since the last merge
      removed_.push_back(id);
      edits_.push_back({kind::erase, at});
      edit_sources_.push_back({});
    } else if (!listed) {
      edits_.push_back({kind::insert_before, at});
      edit_sources_.push_back({&id, now->second});
    } else if (sources_[at].slot != now->second) {
      // The same id in another slot is another job (resubmitted): its entry is built anew.
      edits_.push_back({kind::in_place, at});
      edit_sources_.push_back({&id, now->second});
    }
  }
  apply_edits();
  // Every id that came or went is in the log; a plan not of the model's size means the log missed one
  // (a model edited by hand): the caller walks the whole id order.
  return plan_.jobs.size() == m.jobs_by_id.size();
}

void plan_keeper::merge_in_place(const std::vector<int>& slots, const std::vector<job_id>& ids) {
  using kind = containers::vector_edit_kind;
  edits_.clear();
  edit_sources_.clear();
  const std::size_t n = plan_.jobs.size();
  std::size_t old = 0;
  auto erase = [&] {
    removed_.push_back(plan_.jobs[old].id);
    edits_.push_back({kind::erase, old++});
    edit_sources_.push_back({});
  };
  for (std::size_t k = 0; k < ids.size(); ++k) {
    while (old < n && plan_.jobs[old].id < ids[k]) erase();
    if (old < n && plan_.jobs[old].id == ids[k]) {
      // The same id in another slot is another job (resubmitted): its entry is built anew.
      if (sources_[old].slot != slots[k]) {
        edits_.push_back({kind::in_place, old});
        edit_sources_.push_back({&ids[k], slots[k]});
      }
      ++old;
    } else {
      edits_.push_back({kind::insert_before, old});
      edit_sources_.push_back({&ids[k], slots[k]});
    }
  }
  while (old < n) erase();
  apply_edits();
}

void plan_keeper::apply_edits() {
  containers::apply_vector_edits(plan_.jobs, edits_, [&](std::size_t e, job_plan& entry) {
    entry = job_plan{};
    entry.id = *edit_sources_[e].id;
  });
  containers::apply_vector_edits(sources_, edits_,
                                 [&](std::size_t e, source& src) { src = source{edit_sources_[e].slot}; });
  // A new entry is filled whatever its job's inputs were when its slot's last entry was filled.
  for (const auto& e : edit_sources_) {
    const auto slot = static_cast<std::size_t>(e.slot);
    if (e.slot >= 0 && slot < filled_.size()) filled_[slot] = 0;
  }
}

void plan_keeper::take_entry(const job_id& id, int slot, std::size_t& old,
                             containers::indirect_vector<job_plan>& jobs, std::vector<source>& sources) {
  while (old < plan_.jobs.size() && plan_.jobs[old].id < id) removed_.push_back(plan_.jobs[old++].id);
  const bool same_id = old < plan_.jobs.size() && plan_.jobs[old].id == id;
  if (same_id && !rebuild_ && sources_[old].slot == slot) {
    jobs.owners().push_back(std::move(plan_.jobs.owners()[old]));
    sources.push_back(sources_[old]);
  } else {
    jobs.emplace_back().id = id;
    sources.push_back({slot});
    if (slot >= 0 && static_cast<std::size_t>(slot) < filled_.size())
      filled_[static_cast<std::size_t>(slot)] = 0;
  }
  if (same_id) ++old;
}

bool plan_keeper::fill(const cluster_model& m, std::size_t k) {
  auto& src = sources_[k];
  const auto& j = m.jobs[static_cast<std::size_t>(src.slot)];
  job_plan& p = plan_.jobs[k];
  // A new entry (never built) is a change whatever its fields.
  bool changed = src.version == 0 && src.user_slot < 0;
  auto set = [&changed](auto& dst, const auto& v) {
    if (dst == v) return;
    dst = v;
    changed = true;
  };
  set(p.given, j.given);
  // The user changes only with a resubmission under the same id, which re-interns it (user_slot).
  if (src.user_slot != j.user_slot || j.user_slot < 0) {
    changed |= assign_if_changed(p.user, j.item.user);
    src.user_slot = j.user_slot;
  }
  if (src.cls != j.cls) {
    const auto* rc = m.class_of(j);
    changed |= assign_if_changed(p.class_name, rc != nullptr ? rc->name : std::string{});
    src.cls = j.cls;
  }
  // Only a class with share groups sets one (nodepool_scheduler::arrive); the index is the class tree's.
  if (with_groups_)
    set(p.group, j.group >= 0 ? m.tree_of(j.cls).groups[static_cast<std::size_t>(j.group)].plan_index : -1);
  set(p.demand, j.demand);
  set(p.fair_share, j.order > 0 ? j.pfs_qshares / j.order : 0);
  // The share list, rebuilt only when a share of the job changed since it was last built. Versions are
  // unique over the model's life (cluster_model::shares_changed), so a kept entry never matches the
  // version of another job; 0 is a job that never recorded one (a model built by hand).
  if (src.version != j.shares_version || j.shares_version == 0) {
    auto& ss = by_creation_;
    ss.clear();
    for (int s : j.shares) ss.push_back(&m.shares[static_cast<std::size_t>(s)]);
    std::sort(ss.begin(), ss.end(), [](const share_rec* a, const share_rec* b) {
      if (a->seq != b->seq) return a->seq < b->seq;
      return a->id < b->id;
    });
    // Built aside and compared: a version can move while the list comes out the same (a share's bookkeeping
    // changed, not what the plan shows), and then the entry has not changed.
    auto& built = shares_scratch_;
    built.clear();
    built.reserve(ss.size());
    for (const auto* s : ss)
      built.push_back({s->id, m.machines[static_cast<std::size_t>(s->machine)].name, s->order, s->status,
                       s->reclaim_at_ms});
    if (built != p.shares) {
      p.shares.swap(built);
      changed = true;
    }
    src.version = j.shares_version;
    src.last_share_quanta = p.shares.empty() ? 0 : p.shares.back().quanta;
  }
  // A reservation's order is that of its machine.
  set(p.order, p.shares.empty() ? j.order : src.last_share_quanta);
  set(p.memory_mb_per_process, static_cast<std::uint64_t>(p.order) * m.quantum_mb);
  if (j.refused) {
    set(p.status, job_status::refused);
    set(p.reason, j.refusal);
    set(p.capped_by, std::string_view{});
    changed |= assign_if_changed(p.reason_text, j.refusal_text);
    src.reason_version = 0;
    return changed;
  }
  set(p.status, m.current(j) > 0 ? job_status::scheduled : job_status::pending);
  set(p.capped_by, design_cap_of(m, j));
  set(p.reason, j.reason);
  if (j.reason == reason_code::none) {  // the job's text counts only with a reason
    if (!p.reason_text.empty()) {
      p.reason_text.clear();
      changed = true;
    }
    src.reason_version = 0;
  } else if (src.reason_version != j.reason_version || (j.reason_version >> 32) == 0) {
    // A version with no arrival in its high half is a record built by hand: its text is compared.
    changed |= assign_if_changed(p.reason_text, j.reason_text);
    src.reason_version = j.reason_version;
  }
  return changed;
}

}  // namespace rmbus::core
