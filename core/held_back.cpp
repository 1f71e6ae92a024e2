#include "core/held_back.hpp"

#include <algorithm>

namespace rmbus::core {

namespace {

// Processes: its pure fair share, and what it holds now.
std::int64_t fair_processes(const job_rec& j) { return j.order > 0 ? j.pfs_qshares / j.order : 0; }

bool wants_more_than_it_holds(const cluster_model& m, const job_rec& j) {
  const std::int64_t held = m.current(j);
  return held < std::min(fair_processes(j), j.demand);
}

}  // namespace

std::string_view design_cap_of(const cluster_model& m, const job_rec& j) {
  if (j.refused || j.done || j.reason != reason_code::none || j.cls < 0) return {};
  if (m.policy_of(j) != policy::fair_share || !wants_more_than_it_holds(m, j)) return {};
  // The cap is what held the count below the fair share.
  if (j.cap.cap > j.given || j.given >= fair_processes(j)) return {};
  const std::string_view step = j.cap.decided_by == nullptr ? std::string_view{} : j.cap.decided_by;
  if (step == "prediction") return "prediction";
  if (step == "initialization_cap") return "initialization_cap";
  if (step == "doubling" || step == "ramp_restart") return "doubling";
  if (step == "max_processes") return "max_processes";
  if (step == "probe_first") return "probe_first";
  return {};
}

held_back_cause held_back_of(const cluster_model& m, const job_rec& j) {
  if (j.refused || j.done || j.cls < 0 || !wants_more_than_it_holds(m, j)) return {};
  const auto fair = std::to_string(fair_processes(j));
  const auto cap = std::to_string(j.cap.cap);
  const auto step = design_cap_of(m, j);
  if (step == "prediction")
    return {"prediction", "design",
            "capped by DUCC's prediction at " + cap + " of its fair share " + fair +
                " processes: with these its remaining work is projected to end before more would finish "
                "initializing"};
  if (step == "initialization_cap")
    return {"initialization_cap", "design",
            "held at the initialization cap (" + cap + " of its fair share " + fair +
                " processes) until one of its processes has initialized"};
  if (step == "doubling")
    return {
        "doubling", "design",
        "ramping up by doubling: " + cap + " of its fair share " + fair + " processes now, more each round"};
  if (step == "max_processes")
    return {"max_processes", "design",
            "capped by its max_processes at " + cap + " of its fair share " + fair};
  if (step == "probe_first")
    return {"probe_first", "design",
            "probe_first: one process until one has initialized and finished a work item (fair share " +
                fair + ")"};
  if (j.reason == reason_code::waiting_for_preemptions && m.next_reclaim_ms > 0)
    return {"reclaim_grace", "design",
            "waiting while processes of other jobs run out their reclaim grace (the next deadline at " +
                std::to_string(m.next_reclaim_ms) + " ms)"};
  if (j.reason == reason_code::waiting_for_preemptions)
    return {"waiting_for_preemptions", "starvation", "waiting for preemptions: space for it is being freed"};
  if (j.reason == reason_code::waiting_for_defragmentation)
    return {"waiting_for_defragmentation", "starvation",
            "waiting for defragmentation: a machine is being cleared for it"};
  if (j.reason != reason_code::none) return {to_string(j.reason), "blocked", j.reason_text};
  return {};
}

}  // namespace rmbus::core
