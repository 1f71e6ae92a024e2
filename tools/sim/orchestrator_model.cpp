#include "tools/sim/orchestrator_model.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

namespace rmbus::sim {

namespace {

constexpr std::int64_t never = std::numeric_limits<std::int64_t>::max();

bool is_job(const job_spec& s) { return s.kind == messages::work_kind::job; }

}  // namespace

orchestrator_model::orchestrator_model(std::vector<job_spec> jobs, orchestrator_spec timing,
                                       std::int64_t submit_epoch_ms,
                                       std::map<std::string, std::uint64_t> node_memory_mb,
                                       bool drain_on_reclaim)
    : timing_(timing),
      epoch_ms_(submit_epoch_ms),
      node_memory_mb_(std::move(node_memory_mb)),
      drain_on_reclaim_(drain_on_reclaim) {
  jobs_.reserve(jobs.size());
  for (auto& s : jobs) {
    if (index_.count(s.id) != 0) continue;  // ids are unique in a parsed scenario; a duplicate is ignored
    job_run j;
    j.undispatched = is_job(s) ? s.items : 0;
    j.spec = std::move(s);
    index_[j.spec.id] = jobs_.size();
    jobs_.push_back(std::move(j));
  }
}

messages::process_state orchestrator_model::phase(const process_run& p, std::int64_t now) const {
  if (p.ended) return messages::process_state::ended;
  const std::int64_t t = p.stopped_ms ? std::min(now, *p.stopped_ms) : now;
  if (t < p.created_ms + timing_.start_ms) return messages::process_state::starting;
  if (t < p.running_at_ms) return messages::process_state::initializing;
  return messages::process_state::running;
}

messages::work_state orchestrator_model::state_of(const job_run& j) const {
  if (j.completed) return messages::work_state::completed;
  if (!j.initialized) return messages::work_state::waiting;
  // Every item left is in flight: nothing more to hand out, the job is winding down.
  if (is_job(j.spec) && j.undispatched == 0 && j.items_done < j.spec.items)
    return messages::work_state::completing;
  return messages::work_state::running;
}

void orchestrator_model::take_batch(job_run& j, process_run& p, std::int64_t t) {
  const std::uint64_t n = std::min<std::uint64_t>(j.spec.threads, j.undispatched);
  p.in_flight = n;
  j.undispatched -= n;
  p.batch_start_ms = t;
}

void orchestrator_model::stop_process(job_run& j, process_run& p, std::int64_t t) {
  if (p.stopped_ms) return;
  p.stopped_ms = t;
  // Its items in flight are lost work: back to the queue, for another process to pick up now.
  j.undispatched += p.in_flight;
  p.in_flight = 0;
  for (auto& other : j.procs) {
    if (&other == &p || other.stopped_ms || other.ended || !other.reached_running || other.in_flight > 0)
      continue;
    if (j.undispatched == 0) break;
    take_batch(j, other, t);
  }
}

// A drained process leaves having lost nothing: its last batch is already counted done, and the items it did
// not take are still in the job's queue for the other processes (or new ones).
void orchestrator_model::end_drained(job_run& j, process_run& p, std::int64_t t) {
  p.draining = false;
  p.stopped_ms = t;
  p.ended = true;
  ++j.drained;
}

// A running share of a job, as this rm.state lists it: with a reclaim deadline the process starts draining
// (ending at once when it holds no items); without one a drain under way is called off (the RM dropped the
// deadline: the need is gone, and the process may go on working).
void orchestrator_model::on_reclaim_deadline(job_run& j, process_run& p, bool has_deadline) {
  if (p.ended || p.stopped_ms) return;
  if (!has_deadline) {
    p.draining = false;
    return;
  }
  if (p.draining) return;
  p.draining = true;
  if (p.in_flight == 0) end_drained(j, p, now_);
}

void orchestrator_model::complete(job_run& j, std::int64_t t) {
  j.completed = true;
  j.completed_ms = t;
  for (auto& p : j.procs) {
    if (!p.stopped_ms) p.stopped_ms = t;
    p.in_flight = 0;
    p.ended = true;
  }
}

// Replays what happened to one job between the last call and `now`, event by event in time order: processes
// that become running take a batch of items; a finished batch counts its items and the process takes the
// next (a draining one ends instead). Ties go to the process started first. Events wait in a min-heap keyed
// (time, process position), so a job with many processes costs O(events log processes). Every event either
// promotes a process or finishes at least one item, so the loop ends; only the event's own process changes,
// so queued events stay valid.
void orchestrator_model::progress(job_run& j, std::int64_t now) {
  for (auto& p : j.procs)
    if (!p.ended && p.exit_at_ms && *p.exit_at_ms <= now) p.ended = true;

  const auto next_event = [&](const process_run& p) {
    if (p.ended || p.stopped_ms) return never;
    if (!p.reached_running) return p.running_at_ms;
    if (p.in_flight > 0) return p.batch_start_ms + j.spec.item_ms;
    return never;
  };
  using event = std::pair<std::int64_t, std::size_t>;
  std::priority_queue<event, std::vector<event>, std::greater<event>> events;
  for (std::size_t i = 0; i < j.procs.size(); ++i)
    if (const auto t = next_event(j.procs[i]); t <= now) events.emplace(t, i);

  while (!j.completed && !events.empty()) {
    const auto [t, i] = events.top();
    events.pop();
    process_run& p = j.procs[i];
    if (!p.reached_running) {
      p.reached_running = true;
      j.initialized = true;
      if (is_job(j.spec)) take_batch(j, p, t);
    } else {
      j.items_done += p.in_flight;
      p.in_flight = 0;
      if (j.items_done >= j.spec.items) {
        complete(j, t);
        break;
      }
      if (p.draining)
        end_drained(j, p, t);
      else
        take_batch(j, p, t);
    }
    if (const auto next = next_event(p); next <= now) events.emplace(next, i);
  }

  if (!j.completed && j.spec.end_ms && *j.spec.end_ms <= now) complete(j, *j.spec.end_ms);
}

void orchestrator_model::advance(std::int64_t now_ms) {
  now_ = std::max(now_, now_ms);
  for (auto& j : jobs_) {
    if (!j.arrived && j.spec.at_ms <= now_) j.arrived = true;
    if (j.arrived && !j.gone) progress(j, now_);
  }
}

void orchestrator_model::on_state(const messages::rm_state& state, std::int64_t now_ms) {
  advance(now_ms);
  for (const auto& js : state.jobs) {
    auto it = index_.find(js.id);
    if (it == index_.end()) continue;
    job_run& j = jobs_[it->second];
    if (!j.arrived || j.gone || j.completed) continue;
    if (js.status == messages::job_status::refused) {
      j.refused = true;
      j.refused_reason = js.reason.substr(0, 512);
      complete(j, now_);
      continue;
    }
    std::map<std::string, std::size_t> by_id;  // process position by share id, for this schedule
    for (std::size_t i = 0; i < j.procs.size(); ++i) by_id.emplace(j.procs[i].id, i);
    for (const auto& sh : js.shares) {
      const auto found = by_id.find(sh.id);
      process_run* p = found == by_id.end() ? nullptr : &j.procs[found->second];
      if (sh.status == messages::share_status::new_) {
        // A share for work that has nothing left to hand out would idle: DUCC's orchestrator gives it back.
        if (p != nullptr || j.used_share_ids.count(sh.id) != 0) continue;
        if (state_of(j) == messages::work_state::completing) continue;
        if (j.used_share_ids.size() >= 1000000) continue;  // bound on what a hostile RM could make us hold
        process_run np;
        np.id = sh.id;
        np.node = sh.node;
        np.created_ms = now_;
        np.init_ms = j.spec.init_ms;
        np.running_at_ms = now_ + timing_.start_ms + j.spec.init_ms;
        j.used_share_ids.insert(sh.id);
        if (!node_memory_mb_.empty() && node_memory_mb_.count(sh.node) == 0) {
          // No agent of ours runs there (a node the RM still remembers from elsewhere): the launch fails
          // and the process is reported ended at once, as DUCC reports LaunchFailed.
          np.stopped_ms = now_;
          np.ended = true;
          ++j.launch_failures;
          by_id.emplace(sh.id, j.procs.size());
          j.procs.push_back(std::move(np));
          continue;
        }
        by_id.emplace(sh.id, j.procs.size());
        j.procs.push_back(std::move(np));
        if (!j.first_process_ms) j.first_process_ms = now_;
      } else if (sh.status == messages::share_status::preempt || sh.status == messages::share_status::evict) {
        if (p == nullptr || p->ended || p->exit_at_ms) continue;
        const bool evict = sh.status == messages::share_status::evict;
        if (!evict && !p->stopped_ms) {  // the work this preemption throws away
          const std::int64_t init_from = p->running_at_ms - p->init_ms;
          if (now_ >= p->running_at_ms) {
            j.lost_init_ms += p->init_ms;
            if (p->in_flight > 0) j.lost_batch_ms += now_ - p->batch_start_ms;
          } else {
            j.lost_init_ms += std::max<std::int64_t>(0, now_ - init_from);
          }
          j.lost_items += p->in_flight;
        }
        stop_process(j, *p, now_);
        p->exit_at_ms = now_ + (evict ? timing_.evict_exit_ms : timing_.preempt_exit_ms);
        if (evict)
          ++j.evicted;
        else
          ++j.preempted;
      } else if (sh.status == messages::share_status::running && drain_on_reclaim_ && is_job(j.spec)) {
        if (p != nullptr) on_reclaim_deadline(j, *p, sh.reclaim_at_ms.has_value());
      }
    }
    progress(j, now_);  // a zero exit delay ends the process now; returned items may already be taken
  }
}

void orchestrator_model::node_down(const std::string& node, std::int64_t now_ms) {
  advance(now_ms);
  for (auto& j : jobs_) {
    if (!j.arrived || j.gone || j.completed) continue;
    for (auto& p : j.procs) {
      if (p.node != node || p.ended || p.stopped_ms) continue;
      p.lost = true;
      stop_process(j, p, now_);
    }
  }
}

void orchestrator_model::node_up(const std::string& node, std::int64_t now_ms) {
  advance(now_ms);
  // The agent is back and reports that the processes it had are gone.
  for (auto& j : jobs_)
    for (auto& p : j.procs)
      if (p.node == node && p.lost && !p.ended) p.ended = true;
}

messages::workmap orchestrator_model::workmap(std::int64_t now_ms) {
  // What was published in its final state last time goes now.
  for (auto& j : jobs_) {
    if (j.completed_published) j.gone = true;
    j.procs.erase(std::remove_if(j.procs.begin(), j.procs.end(),
                                 [](const process_run& p) { return p.ended_published; }),
                  j.procs.end());
  }
  advance(now_ms);
  messages::workmap wm;
  for (auto& j : jobs_) {
    if (!j.arrived || j.gone) continue;
    messages::work_item w;
    w.id = j.spec.id;
    w.kind = j.spec.kind;
    w.user = j.spec.user;
    w.class_name = j.spec.class_name;
    w.memory_mb = j.spec.memory_mb;
    w.submitted_ms = static_cast<std::uint64_t>(std::max<std::int64_t>(0, epoch_ms_ + j.spec.at_ms));
    w.state = state_of(j);
    w.max_processes = j.spec.max_processes;
    w.threads = j.spec.threads;
    w.items_total = j.spec.items;
    w.items_done = j.items_done;
    w.item_ms = j.items_done > 0 ? static_cast<std::uint64_t>(j.spec.item_ms) : 0;
    for (auto& p : j.procs) {
      messages::work_process wp;
      wp.id = p.id;
      wp.node = p.node;
      wp.state = phase(p, now_);
      const std::int64_t t = p.stopped_ms ? std::min(now_, *p.stopped_ms) : now_;
      const std::int64_t init_start = p.created_ms + timing_.start_ms;
      wp.init_ms = static_cast<std::uint64_t>(std::clamp<std::int64_t>(t - init_start, 0, p.init_ms));
      wp.run_ms =
          p.in_flight * static_cast<std::uint64_t>(std::max<std::int64_t>(0, now_ - p.batch_start_ms));
      if (auto m = node_memory_mb_.find(p.node); m != node_memory_mb_.end()) wp.node_memory_mb = m->second;
      if (p.ended) p.ended_published = true;
      w.processes.push_back(std::move(wp));
    }
    if (j.completed) j.completed_published = true;
    wm.work.push_back(std::move(w));
  }
  return wm;
}

job_view orchestrator_model::view(const job_run& j) const {
  job_view v;
  v.id = j.spec.id;
  v.user = j.spec.user;
  v.class_name = j.spec.class_name;
  v.kind = j.spec.kind;
  v.memory_mb = j.spec.memory_mb;
  v.at_ms = j.spec.at_ms;
  v.arrived = j.arrived;
  v.gone = j.gone;
  v.refused = j.refused;
  v.refused_reason = j.refused_reason;
  v.state = state_of(j);
  v.items_total = j.spec.items;
  v.items_done = j.items_done;
  for (const auto& p : j.procs) {
    if (p.ended || p.stopped_ms) continue;
    ++v.processes;
    if (p.reached_running) ++v.running_processes;
  }
  if (j.arrived && !j.completed) {
    if (is_job(j.spec)) {
      const std::uint64_t left = j.spec.items - j.items_done;
      v.demand = (left + j.spec.threads - 1) / j.spec.threads;
      if (j.spec.max_processes > 0) v.demand = std::min(v.demand, j.spec.max_processes);
    } else {
      v.demand = 1;
    }
  }
  v.first_process_ms = j.first_process_ms;
  v.completed_ms = j.completed_ms;
  v.preempted = j.preempted;
  v.lost_items = j.lost_items;
  v.lost_batch_ms = j.lost_batch_ms;
  v.lost_init_ms = j.lost_init_ms;
  v.evicted = j.evicted;
  v.launch_failures = j.launch_failures;
  v.drained = j.drained;
  return v;
}

std::vector<job_view> orchestrator_model::jobs() const {
  std::vector<job_view> out;
  out.reserve(jobs_.size());
  for (const auto& j : jobs_) out.push_back(view(j));
  return out;
}

std::optional<job_view> orchestrator_model::job(const std::string& id) const {
  auto it = index_.find(id);
  if (it == index_.end()) return std::nullopt;
  return view(jobs_[it->second]);
}

bool orchestrator_model::finished() const {
  return std::all_of(jobs_.begin(), jobs_.end(), [](const job_run& j) { return j.arrived && j.gone; });
}

}  // namespace rmbus::sim
