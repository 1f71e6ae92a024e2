#pragma once
// Why a job holds less than its fair share, told apart as a person needs it: by design (a cap of DUCC's
// policy holds it back on purpose: prediction, the initialization cap, the ramp by doubling, max_processes,
// probe_first; or a reclaim grace makes it wait for other jobs' processes to run out their deadline), by
// starvation (it is counted more and space is being freed: preemptions, defragmentation), or blocked (it
// cannot have more now: no machine large enough, an allotment, nothing counted).
//
// Read by the plan (rm.state's `capped_by`) and by explain (`held_back`), after a round. Pure functions of
// the model.

#include <string>
#include <string_view>

#include "core/cluster_model.hpp"

namespace rmbus::core {

// The cap step that holds a FAIR_SHARE job below its pure fair share while it wants more ("prediction",
// "initialization_cap", "doubling", "max_processes", "probe_first"); empty when none does. A static string.
std::string_view design_cap_of(const cluster_model& m, const job_rec& j);

struct held_back_cause {
  std::string code;  // a cap step, "reclaim_grace", or a reason code; empty: not held back
  std::string kind;  // "design", "starvation" or "blocked"
  std::string text;  // in words, with the numbers
};

// Empty when the job holds its pure fair share (or all its work could use), or is refused or done.
held_back_cause held_back_of(const cluster_model& m, const job_rec& j);

}  // namespace rmbus::core
