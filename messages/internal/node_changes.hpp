#pragma once
// rm.internal.nodestate — heartbeat intake -> eviction, publication, metrics: numbered changes of the node
// table (the ZeroMQ guide's Clone pattern).
//
// The intake owns the node table. It sends what changed, batched (at most one batch per flush interval,
// and one per watchdog tick), never the whole table: a node's entry appears in a batch when its liveness,
// its heartbeats missed in a row, its memory, quanta, quiesce flag or placement changed. Batches are
// numbered 1, 2, 3... per intake (per envelope src). A reader that sees a gap, a new src, or that joins late
// asks for a snapshot (node_sync_request, node_sync.hpp) and gets the whole table as of a batch number
// (node_snapshot); it then applies only batches numbered above it.
//
// `heartbeats` and `late_heartbeats` count what the intake received since the previous batch, so metrics
// need not decode heartbeats a second time. `forgotten` names the nodes removed from the table since the
// previous batch (down longer than [limits] forget_down_ms, their machines holding nothing): a reader drops
// them. Optional on the wire (absent when empty).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

enum class node_liveness { up, missing, down };  // wire: "up" | "missing" | "down"
std::string_view to_string(node_liveness s);

// One node as the intake knows it.
struct node_entry {
  std::string node;
  std::string pool;      // top-level nodepool
  std::string nodepool;  // the nodepool it is in (may be nested)
  node_liveness state = node_liveness::up;
  std::uint64_t missed = 0;  // heartbeats missed in a row (the watchdog's first count is forgiven as jitter)
  std::uint64_t memory_mb = 0;
  std::uint64_t quanta = 0;  // memory_mb in quanta of its top-level pool (less reserved memory), from the
                             // first heartbeat on
  bool quiesced = false;

  friend bool operator==(const node_entry&, const node_entry&) = default;
};

struct node_changes {
  std::uint64_t seq = 0;           // batch number: 1, 2, 3... per intake (wire key "batch")
  std::vector<node_entry> changed;  // the new entry of every node that changed since the previous batch
  std::uint64_t heartbeats = 0;    // heartbeats received since the previous batch
  std::uint64_t late_heartbeats = 0;  // of which arrived more than 1.5 intervals after the node's previous one
  std::vector<std::string> forgotten{};  // nodes removed from the table since the previous batch, by name

  friend bool operator==(const node_changes&, const node_changes&) = default;
};

std::string encode(const envelope& env, const node_changes& msg);
result<node_changes> decode_node_changes(std::string_view topic, std::string_view body,
                                         const decode_limits& limits = {}, envelope* env_out = nullptr);

}  // namespace rmbus::messages
