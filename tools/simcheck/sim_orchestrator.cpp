#include "tools/simcheck/sim_orchestrator.hpp"

#include <set>

namespace rmbus::simcheck {

void sim_orchestrator::complete(const std::string& job) {
  jobs_.at(job).active = false;
  for (auto it = processes_.begin(); it != processes_.end();) it = it->second.job == job ? processes_.erase(it) : ++it;
  for (auto it = pending_.begin(); it != pending_.end();) it = it->second.job == job ? pending_.erase(it) : ++it;
}

bool sim_orchestrator::receive(const core::schedule_plan& plan, std::uint64_t cycle, std::uint64_t epoch,
                               std::int64_t now_ms, const std::function<delays()>& draw, bool start_late,
                               std::string* rogue_note) {
  if (epoch < accepted_epoch_) return false;
  if (epoch == accepted_epoch_ && acted_ && cycle <= *acted_) return false;
  accepted_epoch_ = epoch;
  acted_ = cycle;
  std::set<std::string> granted;  // shares the schedule lists as new
  for (const auto& j : plan.jobs) {
    auto job = jobs_.find(j.id.str());
    const bool active = job != jobs_.end() && job->second.active;
    for (const auto& sh : j.shares) {
      const auto& id = sh.id.str();
      if (sh.status == core::share_status::new_share) {
        granted.insert(id);
        if (!active || processes_.count(id) != 0) continue;
        auto p = pending_.find(id);
        if (p == pending_.end())
          pending_[id] = {j.id.str(), sh.node.str(), sh.quanta, now_ms + draw().start_ms, false};
        else
          p->second.withdrawn = false;
      } else if (sh.status == core::share_status::preempt || sh.status == core::share_status::evict) {
        auto p = processes_.find(id);
        if (p != processes_.end() && !p->second.stop_at_ms) p->second.stop_at_ms = now_ms + draw().stop_ms;
      }
    }
  }
  // A start the schedule no longer grants is cancelled, unless the nemesis makes one go ahead late.
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (granted.count(it->first) != 0 || it->second.withdrawn) {
      ++it;
      continue;
    }
    if (start_late) {
      start_late = false;
      it->second.withdrawn = true;
      if (rogue_note != nullptr) *rogue_note = it->first + " on " + it->second.node;
      ++it;
    } else {
      it = pending_.erase(it);
    }
  }
  return true;
}

void sim_orchestrator::advance(std::int64_t now_ms) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.due_ms > now_ms) {
      ++it;
      continue;
    }
    const auto& s = it->second;
    processes_[it->first] = sim_process{s.job, s.node, s.quanta, now_ms, s.withdrawn, std::nullopt, -1};
    it = pending_.erase(it);
  }
  for (auto it = processes_.begin(); it != processes_.end();)
    it = it->second.stop_at_ms && *it->second.stop_at_ms <= now_ms ? processes_.erase(it) : ++it;
}

published_map sim_orchestrator::publish(std::int64_t now_ms) {
  published_map m;
  m.seq = ++seq_;
  m.acted_cycle = acted_;
  if (accepted_epoch_ > 0) m.rm_epoch = accepted_epoch_;
  for (const auto& [id, job] : jobs_) {
    if (!job.active) continue;
    auto& item = m.work[job.item.id] = job.item;
    for (const auto& [share, p] : processes_) {
      if (p.job != id) continue;
      core::process_report r;
      r.id = core::share_id(share);
      r.node = core::machine_id(p.node);
      // A process initializes for half an interval, then runs.
      r.state = now_ms - p.started_ms >= 500 ? core::process_state::running : core::process_state::starting;
      r.run_ms = now_ms - p.started_ms;
      item.processes.push_back(std::move(r));
    }
  }
  return m;
}

}  // namespace rmbus::simcheck
