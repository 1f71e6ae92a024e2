#pragma once
// The answers of one pool's scheduler to the admin queries (rm.internal.query.<pool>, docs/protocol.md section
// 5): qload, qoccupancy (with its filters), explain, whatif, jobs (with its filters) and status, read from the
// core scheduler and its last round's plan. The shell (pool_scheduler.cpp) decides when to answer; this file
// decides what.
//
// Thread-safety: free functions over the scheduler they are given.

#include <string>

#include "core/nodepool_scheduler.hpp"
#include "core/schedule_plan.hpp"
#include "messages/value.hpp"

namespace rmbus::actors {

// `last_plan`: the plan of the scheduler's last round; nullptr before its first.
messages::value::map answer_pool_query(const core::nodepool_scheduler& s, const core::schedule_plan* last_plan,
                                       const std::string& cmd, const messages::value::map& args);

// The queries a fresh scheduler answers only once it has scheduled a round (before, it does not know the
// running work): every one but status.
bool needs_a_round(const std::string& cmd);

}  // namespace rmbus::actors
