#pragma once
// The inputs of a job's end and start estimates (core/start_estimate.hpp) read from the scheduler's model:
// which machines the job could use, what is free on them, which shares on them are being preempted, and
// when the running jobs holding the rest are projected to end. explain() calls it after a round.
//
// Which machines: schedulable ones its host list allows, of at least its order; fair-share work may use its
// class's pool and the pools nested below it (as What Of does), non-preemptable work its class's pool only,
// and a reservation only whole machines of its order (up to the reserve overage). Space on them counts as
// it frees, whoever it is earmarked for: the start estimate is an earliest start.
//
// Pure: reads the model, never a clock. Thread-safety: none needed (a const read of one scheduler's model).

#include <cstdint>
#include <optional>

#include "core/cluster_model.hpp"
#include "core/start_estimate.hpp"

namespace rmbus::core {

struct job_estimates {
  std::optional<end_estimate> end;      // a running job with a known item count and item time
  std::optional<start_estimate> start;  // work short of its count that can wait for space
};

// The numbers a job's projected end rests on (processes: those the work map confirms running).
job_progress progress_of(const cluster_model& m, const job_rec& j);

// Both estimates for job slot `job` at time `now_ms`. Nothing for refused or completed work; no start for
// work held back by the allotment (space would not help) or holding all it was counted.
// REQUIRES: `job` is a live job slot; the model is as the last round left it.
job_estimates estimate_job(const cluster_model& m, int job, std::int64_t now_ms);

}  // namespace rmbus::core
