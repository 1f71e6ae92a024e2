#pragma once
// Global per-user allotments across concurrently scheduled top-level pools.
//
// DUCC has one scheduler thread, so a user's non-preemptable allotment (ducc.rm.global_allotment or the
// user's override) is checked against everything the user holds. rmbus runs the pools' cycles at once, so
// two pools could each see the same free allotment and together exceed it. The fix is one owner: before a
// round, the differencing actor (which sees all work and the last answer of every pool) splits each limited
// user's allotment into one budget per pool, and each pool receives
//     other_pools_nonpreemptable_mb[user] = limit - budget(pool)
// as its round input, which the core treats as "already held elsewhere". The budgets never sum to more
// than the limit, so whatever the timing the pools cannot together exceed it:
//     budget(P) = held(P)                      for every pool P
//     free      = max(0, limit - sum of held)
//     budget(R) += free                        for ONE pool R: the pool of the user's oldest waiting
//                                              non-preemptable work (submission time, then id), as DUCC
//                                              serves non-preemptable work oldest first.
// held(P) is what pool P reported holding (or promising) in its last answer. If P now holds less (work
// ended), only P's room grows, by exactly what it freed; nothing can grow in two pools at once.
//
// Pure and deterministic; thread-safe.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ids.hpp"
#include "core/policy.hpp"

namespace rmbus::actors {

struct waiting_np_work {
  std::string user;
  std::string pool;
  std::int64_t submitted_ms = 0;
  std::string job;
};

// Whether any user has a non-preemptable allotment (a global one or a user's own). Without one,
// partition_allotments returns nothing whatever the work, so its caller need not gather the waiting work.
bool any_allotment_limit(const core::scheduler_config& cfg);

// pool -> user -> MB to pass as round_input::other_pools_nonpreemptable_mb. Users without a limit (no
// global allotment and no override) are absent: nothing to partition.
std::map<std::string, std::map<core::user_id, std::uint64_t>> partition_allotments(
    const core::scheduler_config& cfg, const std::vector<std::string>& pools,
    const std::map<std::string, std::map<std::string, std::uint64_t>>& held_by_pool,
    const std::vector<waiting_np_work>& waiting);

}  // namespace rmbus::actors
