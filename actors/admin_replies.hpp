#pragma once
// How admin assembles a reply from the answers it gathered (actors/admin.cpp): the pools' answers listed per
// pool, the pools still restarting named, the jobs of every pool with the work refused before any pool, the
// users summed from the jobs, and status's counts. Pure functions over value maps (docs/protocol.md section 5
// gives every key), so that the assembly is tested without actors.
//
// Thread-safety: free functions.

#include <map>
#include <string>
#include <vector>

#include "messages/internal/round_start.hpp"
#include "messages/value.hpp"

namespace rmbus::actors {

using messages::value;

// The answers to one request, by who answered: a pool's name, or "eviction".
using gathered_answers = std::map<std::string, value::map>;
inline constexpr const char* eviction_answer = "eviction";

// The pools whose answer is `restarting` (a fresh scheduler that has not scheduled a round yet), by name.
std::vector<std::string> restarting_pools(const gathered_answers& a);

// One entry per pool that answered (eviction's answer left out), with `pool` added; by pool name.
value::array pool_entries(const gathered_answers& a);

// jobs: every pool's rows, each with its `pool`, and the work refused before reaching any pool (pool "",
// status refused) that passes the same filters (`user`, `class`, `state`); by job id.
value::array job_rows(const gathered_answers& a, const std::map<std::string, messages::refused_work>& refused,
                      const value::map& filters);

// users: per user (by name) the rows summed: jobs, scheduled, pending, refused, processes, quanta, demand.
value::array user_rows(const value::array& jobs);

// status: `nodes` (eviction's counts, with `schedulable` summed over the pools) and `jobs` (summed over the
// pools, with their total), added to `r`.
void add_status_counts(const gathered_answers& a, value::map& r);

// The job states `jobs --state` takes: scheduled, pending, refused (rm.state's job status).
const std::vector<std::string>& job_states();

}  // namespace rmbus::actors
