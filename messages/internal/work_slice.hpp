#pragma once
// rm.internal.work.<pool> — work-map differencing -> the scheduler of one top-level nodepool: the pool's
// slice of the orchestrator's latest work map, and the input of one round.
//
// The slice is complete (every work item whose class belongs to the pool): the scheduler differences it
// against what it holds (core::nodepool_scheduler::apply_work). `other_np_mb` is the per-user allotment
// already held or promised in the OTHER top-level pools (actors/allotment_partition.hpp).
// `foreign_processes` counts, per node of this pool, the live processes of work that belongs to another pool.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"
#include "messages/workmap.hpp"

namespace rmbus::messages {

struct work_slice {
  std::uint64_t cycle = 0;   // the round
  std::uint64_t now_ms = 0;  // the round's wall clock, the same for every pool
  std::map<std::string, std::uint64_t> other_np_mb;  // user -> MB
  std::vector<work_item> work;
  bool settling = false;  // a restarted RM's settle window: the round only reports (optional key, false)
  // Node -> live processes of OTHER pools' work on this pool's node (the node moved here in a
  // reconfiguration while that work ran on it): the scheduler places nothing there until they end
  // (optional key, empty).
  std::map<std::string, std::uint64_t> foreign_processes;

  friend bool operator==(const work_slice&, const work_slice&) = default;
};

std::string encode(const envelope& env, const work_slice& msg);
result<work_slice> decode_work_slice(std::string_view topic, std::string_view body, const decode_limits& limits = {},
                                     envelope* env_out = nullptr);

}  // namespace rmbus::messages
