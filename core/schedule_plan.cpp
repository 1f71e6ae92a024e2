#include "core/schedule_plan.hpp"

#include <sstream>

namespace rmbus::core {

const char* to_string(share_status s) {
  switch (s) {
    case share_status::running: return "running";
    case share_status::new_share: return "new";
    case share_status::preempt: return "preempt";
    case share_status::evict: return "evict";
  }
  return "?";
}

const char* to_string(job_status s) {
  switch (s) {
    case job_status::scheduled: return "scheduled";
    case job_status::pending: return "pending";
    case job_status::refused: return "refused";
  }
  return "?";
}

const char* to_string(machine_state s) {
  switch (s) {
    case machine_state::up: return "up";
    case machine_state::varied_off: return "varied_off";
    case machine_state::down: return "down";
    case machine_state::blacklisted: return "blacklisted";
  }
  return "?";
}

const char* to_string(reason_code r) {
  switch (r) {
    case reason_code::none: return "none";
    case reason_code::unknown_class: return "unknown_class";
    case reason_code::class_not_in_pool: return "class_not_in_pool";
    case reason_code::user_not_allowed: return "user_not_allowed";
    case reason_code::reservation_in_fair_share: return "reservation_in_fair_share";
    case reason_code::service_in_fair_share: return "service_in_fair_share";
    case reason_code::unknown_node: return "unknown_node";
    case reason_code::allotment_exceeded: return "allotment_exceeded";
    case reason_code::no_machine_of_order: return "no_machine_of_order";
    case reason_code::resources_exhausted: return "resources_exhausted";
    case reason_code::no_machine_matches_hosts: return "no_machine_matches_hosts";
    case reason_code::waiting_for_preemptions: return "waiting_for_preemptions";
    case reason_code::waiting_for_defragmentation: return "waiting_for_defragmentation";
    case reason_code::no_share_counted: return "no_share_counted";
    case reason_code::completed: return "completed";
    case reason_code::settling: return "settling";
  }
  return "?";
}

const std::string& schedule_plan::group_of(const job_plan& j) const {
  static const std::string none;
  return j.group >= 0 && static_cast<std::size_t>(j.group) < group_names.size()
             ? group_names[static_cast<std::size_t>(j.group)]
             : none;
}

const job_plan* schedule_plan::find(const job_id& id) const {
  for (const auto& j : jobs)
    if (j.id == id) return &j;
  return nullptr;
}

std::string job_explanation::text() const {
  std::ostringstream o;
  if (!known) {
    o << "job " << id << ": unknown\n";
    return o.str();
  }
  o << "job " << id << " class " << class_name << " order " << order << "\n"
    << "demand (processes for the remaining work): " << demand << "\n"
    << "cap: by work " << cap.by_work << ", base " << cap.base_cap << ", projected " << cap.projected_cap
    << ", potential " << cap.potential_cap << ", cap " << cap.cap << " (decided by " << cap.decided_by << ")\n"
    << "pure fair share: " << pure_fair_share_qshares << " quanta = " << pure_fair_share << " processes\n"
    << "given (How Much): " << given << "\n"
    << "placed: " << placed << ", being removed: " << preempting << "\n";
  // Only under a class's reclaim grace, so that the text is DUCC's otherwise.
  if (reclaiming > 0) o << "running until a reclaim deadline: " << reclaiming << "\n";
  o << "reason: " << to_string(reason) << (blocked.empty() ? "" : ": " + blocked) << "\n";
  // Below its fair share: by design (a cap of the policy) or starvation, named apart (issue 17).
  if (!held_back.empty())
    o << "below fair share (" << (held_back_kind == "design" ? "by design" : held_back_kind) << ", "
      << held_back << "): " << held_back_text << "\n";
  if (estimated_end)
    o << "estimated end: in " << seconds_text(estimated_end->in_ms) << " (at " << estimated_end->at_ms
      << " ms): " << estimated_end->basis << "\n";
  if (estimated_start) {
    const auto& s = *estimated_start;
    o << "estimated start: next process in " << seconds_text(s.first_in_ms) << " (at " << s.first_at_ms << " ms), ";
    if (s.all_in_ms)
      o << "all " << s.processes << " in " << seconds_text(*s.all_in_ms) << " (at " << *s.all_at_ms << " ms)";
    else
      o << "all " << s.processes << ": nothing known frees enough";
    o << ": " << s.basis << "\n";
  }
  if (!group.empty()) o << "group: " << group << "\n";
  if (!path.empty()) {
    o << "share path (quanta awarded of asked):";
    for (std::size_t i = 0; i < path.size(); ++i) {
      const auto& l = path[i];
      o << (i == 0 ? " " : " > ") << l.level << " " << l.name << " " << l.awarded_qshares << " of " << l.demand_qshares;
      if (l.level == "class" || l.level == "group") o << " (weight " << l.weight << ", priority " << l.priority << ")";
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace rmbus::core
