#pragma once
// rm.internal.work.<pool> — work-map differencing -> the scheduler of one top-level nodepool: the pool's
// slice of the orchestrator's latest work map, and the input of one round.
//
// A slice is full (`base_seq` 0: `work` lists every work item whose class belongs to the pool) or a change
// (`base_seq` names the slice it builds on: `work` lists the items added or changed since, `removed` the ids
// gone). Each pool's slices are numbered (`seq`, from 1, per sender); the scheduler keeps the pool's work map
// (actors/slice_chain.hpp) and applies a change only to the slice it names; otherwise it asks for a full one
// (rm.internal.worksync, work_sync_request.hpp). It differences the result against what it holds
// (core::nodepool_scheduler::apply_work). `other_np_mb` is the per-user allotment
// already held or promised in the OTHER top-level pools (actors/allotment_partition.hpp).
// `foreign_processes` counts, per node of this pool, the live processes of work that belongs to another pool.

#include <cstdint>
#include <map>
#include <optional>
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
  // With settling: why, when it is not a restart's settle window (an HA active waiting for the orchestrator to
  // accept its epoch, actors/echo_wait.hpp); the scheduler gives it to every job left waiting (optional key
  // hold; empty: the restart's text).
  std::string hold{};
  // Node -> live processes of OTHER pools' work on this pool's node (the node moved here in a
  // reconfiguration while that work ran on it): the scheduler places nothing there until they end
  // (optional key, empty).
  std::map<std::string, std::uint64_t> foreign_processes;
  // This slice's number among the pool's slices from this sender, from 1 (optional key slice_seq; 0:
  // unnumbered, taken as full). base_seq: the slice a change builds on (optional key base_slice_seq; 0: a full
  // slice). removed: ids gone since base_seq (optional key, only in a change).
  std::uint64_t seq = 0;
  std::uint64_t base_seq = 0;
  std::vector<std::string> removed;
  // The cycle of the last schedule the orchestrator acted on, as the round's work map says (its rm_cycle);
  // empty when the map does not say (optional key acted_cycle).
  std::optional<std::uint64_t> acted_cycle;

  bool full() const { return base_seq == 0; }

  friend bool operator==(const work_slice&, const work_slice&) = default;
};

std::string encode(const envelope& env, const work_slice& msg);
result<work_slice> decode_work_slice(std::string_view topic, std::string_view body, const decode_limits& limits = {},
                                     envelope* env_out = nullptr);

}  // namespace rmbus::messages
