#pragma once
// A job's cap: how many processes it could use right now on an infinite cluster (DUCC RmJob.initJobCap and
// getProjectedCap, shared/ducc-rm.md section 1.5). How Much never counts a job past its cap.
//
// Steps, in order, each recorded so that explain() can show which one decided:
//   1. refused -> 0; completing -> current (never grow)
//   2. c = ceil(remaining / threads); c = max(c, current)
//   3. base = min(max_processes, c)
//   4. projected = prediction from initialization time and work-item rate (0 -> base)
//   5. potential = base; with prediction and projected < base: potential = max(projected, current)
//   6. init cap until a process has initialized; then expand by doubling (or restart the ramp at 0)
//   7. probe_first (rmbus extension): exactly one process until the job is probed (a process initialized
//      and a work item finished), so a broken job costs one process, not a ramp
// Pure function of its input: no clock, no state.

#include <cstdint>
#include <string>

namespace rmbus::core {

struct job_cap_input {
  bool refused = false;
  bool completing = false;             // the orchestrator says the job is winding down
  std::int64_t remaining_items = 0;    // work items not yet done
  int threads = 1;                     // threads per process (>= 1)
  int max_processes = 0;               // 0 = no limit
  int current = 0;                     // processes held now (assigned + pending - pending removal)
  bool initialized = false;            // some process has finished initializing (job state "running")
  std::int64_t item_ms = 0;            // mean ms per work item, 0 = unknown
  std::int64_t avg_init_ms = 0;        // mean init time of initialized processes with init time > 0
  int initialization_cap = 1;
  bool expand_by_doubling = true;
  bool use_prediction = true;
  std::int64_t prediction_fudge_ms = 120000;
  std::int64_t epoch_ms = 10000;       // the scheduling epoch (orchestrator publish rate x ratio)
  bool probe_first = false;            // the class's probe_first (rmbus extension)
  bool probed = false;                 // a process has initialized and a work item is done
};

struct job_cap_result {
  // First: How Much's sweep reads the answer, and the plan keeper's both, from every job's record each round,
  // in the record's second cache line.
  std::int64_t cap = 0;            // step 6: the answer
  const char* decided_by = "";     // the step that set `cap`, for explain(): "refused", "completing",
                                   // "work", "max_processes", "prediction", "initialization_cap",
                                   // "doubling", "ramp_restart", "probe_first"
  std::int64_t by_work = 0;        // step 2 before max with current: ceil(remaining / threads)
  std::int64_t base_cap = 0;       // step 3
  std::int64_t projected_cap = 0;  // step 4 (0 = no prediction possible yet)
  std::int64_t potential_cap = 0;  // step 5
};

job_cap_result compute_job_cap(const job_cap_input& in);

// getProjectedCap alone (step 4). Returns 0 when no prediction is possible (not initialized, or no item
// time known): the caller then uses the base cap.
std::int64_t projected_cap(const job_cap_input& in);

}  // namespace rmbus::core
