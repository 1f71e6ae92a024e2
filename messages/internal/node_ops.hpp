#pragma once
// rm.internal.node.<pool> — heartbeat intake and eviction -> the scheduler of one top-level nodepool.
//
// Machine operations, in order. Intake sends an `update` only when a heartbeat changes what a scheduler
// uses (memory, quiesce, nodepool) or the node comes (back) up; a heartbeat that changes nothing refreshes
// liveness in the intake and goes no further. Eviction sends `unreachable` the moment the intake reports a
// node down (nothing new goes there from then on) and `down` when its work is to be evicted (at once, or
// later when the mass-loss brake paces evictions), and `vary_off` / `vary_on` / `drain` / `undrain` for the
// admin's requests, also for a node the configuration expects that has not reported yet: its scheduler
// applies the mark when the node's first `update` comes. Intake sends `forget` for a node down longer than [limits]
// forget_down_ms; the scheduler removes the machine unless it still holds shares, and answers with
// machines_forgotten (machines_forgotten.hpp).
//
// A scheduler that knows no machine yet (replaced, or in a process joining a running bus) asks the intake to
// announce its pool's live machines again (node_sync_request with its pool). The intake's last batch of that
// answer names the asker in `announced_to`, so the scheduler knows its machines are complete and may grant.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

// Added: drain / undrain (the admin's drain mark: no new work, nothing evicted); unreachable (reported down,
// its eviction not yet due: out of placement, its work kept).
enum class node_op_kind { update, down, vary_off, vary_on, forget, drain, undrain, unreachable };  // wire: "update" | ...
std::string_view to_string(node_op_kind k);

struct node_op {
  node_op_kind op = node_op_kind::update;
  std::string node;
  // `update` only (encoded for every op, empty / 0 for the others):
  std::string ip;
  std::uint64_t memory_mb = 0;
  bool quiesced = false;
  std::string nodepool;  // the (possibly nested) nodepool the configuration places the node in

  friend bool operator==(const node_op&, const node_op&) = default;
};

struct node_ops {
  std::vector<node_op> ops;
  // Optional on the wire ("announced_to", sent only when set): the src of the scheduler whose request for its
  // pool's machines this batch completes.
  std::string announced_to;

  friend bool operator==(const node_ops&, const node_ops&) = default;
};

std::string encode(const envelope& env, const node_ops& msg);
result<node_ops> decode_node_ops(std::string_view topic, std::string_view body, const decode_limits& limits = {},
                                 envelope* env_out = nullptr);

}  // namespace rmbus::messages
