#pragma once
// When will it end, when will it start: the estimates `explain` and `whatif` give (Maui's showstart, CiGri's
// end-of-campaign predictor), as pure functions over plain values.
//
// A running job's end rests on the numbers DUCC's prediction already uses (ducc-rm.md section 1.5): its work
// items left, the processes running them with their threads, and the mean time per item. Each process works
// `threads` items at once (DUCC's rate = current x threads / time_per_item), so the items still to do take
//     end = now + ceil(items_left / (processes x threads)) x item_ms
// (with one thread, the ceil(items_left / processes) x item_ms of the issue). No estimate without a known
// item count, a known item time or a running process: there is nothing to rest on.
//
// Pending work's start is Maui's showstart without reservations for the work ahead of it: the space on the
// machines it could use is walked forward in time, from what is free now, then the shares already being
// preempted or evicted (their space frees as soon as the orchestrator confirms them gone, so they count at
// `now` and before any projected end), then each running job's projected end (all of its shares free then),
// in time order. The first moment one more process of its order fits is `first`; the moment all the processes
// it is short of fit is `all`. It is an EARLIEST start: it assumes the space that frees goes to this work,
// while fair share may give some of it to other work first. No estimate when nothing in that walk ever makes
// room (no free space, no preemption, no running job with a projected end on the machines it could use).
//
// Every estimate carries its basis: the numbers, and a sentence naming what it rests on. Time is an input;
// nothing here reads a clock. Thread-safety: free functions over values.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.hpp"

namespace rmbus::core {

// What a running job's end rests on.
struct job_progress {
  job_id id;
  std::int64_t items_total = 0;  // 0 = unknown
  std::int64_t items_done = 0;
  std::int64_t item_ms = 0;      // mean ms per work item, 0 = unknown
  int processes = 0;             // processes running its items (confirmed, not being removed)
  int threads = 1;               // items each process works at once
};

struct end_estimate {
  std::int64_t at_ms = 0;      // now + in_ms
  std::int64_t in_ms = 0;
  std::int64_t items_left = 0;
  int processes = 0;
  int threads = 1;
  std::int64_t item_ms = 0;
  std::string basis;           // "job 17 ends in ~120 s: 400 items left, 4 processes, 1.2 s per item"

  bool operator==(const end_estimate&) const = default;
};

// Empty when the item count or item time is unknown (0) or no process runs.
std::optional<end_estimate> estimate_end(const job_progress& p, std::int64_t now_ms);

// A machine the pending work could use.
struct candidate_machine {
  machine_id name;
  int order = 0;        // the machine's order (quanta)
  int free_quanta = 0;  // not held by any share now (negative counts as 0)
};

enum class release_kind {
  preemption,  // a share being preempted or evicted: frees at `now`
  reclaim,     // a share chosen for preemption under its class's reclaim grace: frees at its deadline
  job_end,     // a share of a running job: frees at that job's projected end
};

// Space a share of another job will give back.
struct space_release {
  std::size_t machine = 0;  // index into start_query::machines
  int quanta = 0;           // the share's order
  release_kind kind = release_kind::preemption;
  job_id job;               // the job holding the share (job_end: its entry in start_query::job_ends)
  std::int64_t at_ms = 0;   // reclaim: the deadline
};

struct start_query {
  std::int64_t now_ms = 0;
  int order = 1;               // quanta per process
  int processes = 1;           // processes it is short of
  bool whole_machine = false;  // a reservation: a machine counts only once entirely free (one process)
  std::vector<candidate_machine> machines;
  std::vector<space_release> releases;          // on those machines; a job_end without an entry is ignored
  std::map<job_id, end_estimate> job_ends;      // the projected ends the job_end releases rest on
};

struct start_estimate {
  std::int64_t first_at_ms = 0;  // one more process of its order fits
  std::int64_t first_in_ms = 0;
  std::optional<std::int64_t> all_at_ms;  // all `processes` fit (empty: never, from what is known)
  std::optional<std::int64_t> all_in_ms;
  int processes = 0;         // the processes it is short of
  int free_quanta_now = 0;   // free quanta counted on the machines it could use
  int preemptions = 0;       // preemptions or evictions under way that the estimate counts
  int reclaims = 0;          // processes it counts as freed at the end of their reclaim grace
  std::vector<job_id> jobs_ending;  // running jobs whose projected ends it counts, in time order
  std::string basis;         // "3 preemptions under way; job 17 ends in ~120 s: 400 items left, ..."

  bool operator==(const start_estimate&) const = default;
};

// The walk described above. Counts (and names in `basis`) what it walked up to the last time it reports:
// `all` when there is one, else `first`. Empty when the order or process count is not positive, or when
// nothing known ever makes room for one process.
std::optional<start_estimate> estimate_start(const start_query& q);

// "1.2 s", "30 s", "0.25 s": milliseconds as seconds for the basis texts.
std::string seconds_text(std::int64_t ms);

}  // namespace rmbus::core
