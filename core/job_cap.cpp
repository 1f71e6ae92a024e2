#include "core/job_cap.hpp"

#include <algorithm>

namespace rmbus::core {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

int threads_of(const job_cap_input& in) { return std::max(1, in.threads); }

}  // namespace

std::int64_t projected_cap(const job_cap_input& in) {
  // DUCC widens init_wait here: without a measured item time (0, or NaN in DUCC) the job is treated as
  // still initializing, so prediction never cuts a job that has produced no timing data.
  if (!in.initialized || in.item_ms <= 0) return 0;
  const std::int64_t threads = threads_of(in);
  const std::int64_t current = std::max(0, in.current);

  // target: how far ahead a new process would have to see before it could help (ms).
  const __int128 target = static_cast<__int128>(std::max<std::int64_t>(0, in.avg_init_ms)) +
                          std::max<std::int64_t>(0, in.epoch_ms) + std::max<std::int64_t>(0, in.prediction_fudge_ms);
  // rate = current * threads / item_ms items per ms; projected = round(target * rate), rounding half up as
  // Java's Math.round does; exact in integers: round(x / d) = floor((2x + d) / 2d).
  const __int128 numerator = target * current * threads;
  const __int128 projected_items = (2 * numerator + in.item_ms) / (2 * static_cast<__int128>(in.item_ms));
  const __int128 future = std::max<__int128>(static_cast<__int128>(in.remaining_items) - projected_items, 0);
  const auto answer = static_cast<std::int64_t>((future + threads - 1) / threads);
  return answer == 0 ? current : answer;
}

job_cap_result compute_job_cap(const job_cap_input& in) {
  job_cap_result r;
  const std::int64_t current = std::max(0, in.current);

  // 1. Refused work gets nothing; work that is winding down keeps what it has and never grows.
  if (in.refused) {
    r.decided_by = "refused";
    return r;
  }
  if (in.completing) {
    r.by_work = r.base_cap = r.potential_cap = r.cap = current;
    r.decided_by = "completing";
    return r;
  }

  // 2. What the remaining work could keep busy; a job winding down is never shrunk by its own cap.
  r.by_work = ceil_div(in.remaining_items, threads_of(in));
  const std::int64_t c = std::max(r.by_work, current);

  // 3. The user's limit on processes (0 = none; negative, as DUCC's "use current", caps at current).
  r.base_cap = c;
  r.decided_by = "work";
  const std::int64_t max_processes = in.max_processes < 0 ? current : in.max_processes;
  if ((in.max_processes != 0) && max_processes < c) {
    r.base_cap = max_processes;
    r.decided_by = "max_processes";
  }

  // 4-5. Prediction only ever lowers the cap, and never below what the job holds.
  r.projected_cap = projected_cap(in);
  r.potential_cap = r.base_cap;
  if (in.use_prediction && r.projected_cap > 0 && r.projected_cap < r.base_cap) {
    r.potential_cap = std::max(r.projected_cap, current);
    r.decided_by = "prediction";
  }

  // 6. Until a process has initialized, at most the initialization cap; after that, double per cycle.
  r.cap = r.potential_cap;
  if (!in.initialized) {
    if (in.initialization_cap > 0 && in.initialization_cap < r.potential_cap) {
      r.cap = in.initialization_cap;
      r.decided_by = "initialization_cap";
    }
  } else if (in.expand_by_doubling) {
    if (current == 0) {
      // The job lost every process after initializing: restart the ramp from the initialization cap.
      r.cap = std::min<std::int64_t>(r.base_cap, std::max(1, in.initialization_cap));
      r.decided_by = "ramp_restart";
    } else if (2 * current < r.potential_cap) {
      r.cap = 2 * current;
      r.decided_by = "doubling";
    }
  }

  // 7. A probe first: one process until one has initialized and finished a work item, whatever the
  // initialization cap or doubling would allow (a job with nothing to do stays at 0).
  if (in.probe_first && !in.probed && r.cap > 1) {
    r.cap = 1;
    r.decided_by = "probe_first";
  }
  return r;
}

}  // namespace rmbus::core
