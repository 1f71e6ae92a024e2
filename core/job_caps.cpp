#include "core/job_caps.hpp"

#include <algorithm>

namespace rmbus::core {

int effective_max_processes(const cluster_model& m, const job_rec& j) {
  int a = std::max(0, j.item.max_processes);
  const auto* rc = m.class_of(j);
  const int b = rc != nullptr ? std::max(0, rc->max_processes) : 0;
  if (a == 0) return b;
  if (b == 0) return a;
  return std::min(a, b);
}

void refresh_job_cap(const cluster_model& m, job_rec& j) {
  j.cap = job_cap_result{};
  j.demand = 0;
  const auto* rc = m.class_of(j);
  if (j.refused || rc == nullptr) {
    j.cap.decided_by = "refused";
    return;
  }
  if (j.item.kind != work_kind::job) {
    // One allocation per request.
    const std::int64_t one = j.done ? 0 : 1;
    j.cap.by_work = j.cap.base_cap = j.cap.potential_cap = j.cap.cap = one;
    j.cap.decided_by = j.done ? "completing" : "work";
    j.demand = one;
    return;
  }
  job_cap_input in;
  in.refused = false;
  in.completing = j.item.state == work_state::completing || j.done;
  const std::int64_t total = j.item.items_total > 0 ? j.item.items_total : m.settings.default_tasks;
  in.remaining_items = std::max<std::int64_t>(0, total - j.item.items_done);
  in.threads = j.item.threads > 0 ? j.item.threads : std::max(1, m.settings.default_threads);
  in.max_processes = effective_max_processes(m, j);
  in.current = m.confirmed(j);
  // The initialization counts are kept by the share bookkeeping (cluster_model::count_share).
  in.initialized = j.item.state == work_state::running || j.initialized > 0;
  in.item_ms = j.item.item_ms;
  in.avg_init_ms = j.timed_init > 0 ? j.init_ms_sum / j.timed_init : 0;
  in.initialization_cap = rc->initialization_cap;
  in.expand_by_doubling = rc->expand_by_doubling;
  in.use_prediction = rc->use_prediction;
  in.prediction_fudge_ms = rc->prediction_fudge_ms;
  in.epoch_ms = m.settings.epoch_ms;
  in.probe_first = rc->probe_first;
  // Probed: a process has initialized (the job is running, or one of its processes reported it) and the
  // work map counts a finished work item.
  in.probed = in.initialized && j.item.items_done > 0;
  j.cap = compute_job_cap(in);
  j.demand = (in.remaining_items + in.threads - 1) / in.threads;
}

}  // namespace rmbus::core
