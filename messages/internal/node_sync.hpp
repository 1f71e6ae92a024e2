#pragma once
// rm.internal.nodesync — a reader of node state -> heartbeat intake and the pool schedulers: "send me the
// whole table" (it joined late, restarted, or saw a gap in the numbered changes).
// rm.internal.nodesnap — heartbeat intake -> every reader: the whole node table as of batch `seq` of its
// node_changes. A reader applies afterwards only batches numbered above `seq`.
//
// A pool scheduler that sees a node_sync_request lists every machine in its next pool_plan (not only
// those that changed), so a restarted publication is whole after one round.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/internal/node_changes.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

struct node_sync_request {
  std::string reader;  // who asks (its src), for logs
  // A pool scheduler that replaces one that failed: the intake announces every live machine of this
  // top-level pool to it again (node_ops updates) instead of sending a snapshot. Optional key; empty: a
  // snapshot for everyone.
  std::string pool;

  friend bool operator==(const node_sync_request&, const node_sync_request&) = default;
};

struct node_snapshot {
  std::uint64_t seq = 0;  // the last node_changes batch this table includes (0: none yet; wire key "batch")
  std::vector<node_entry> nodes;

  friend bool operator==(const node_snapshot&, const node_snapshot&) = default;
};

std::string encode(const envelope& env, const node_sync_request& msg);
result<node_sync_request> decode_node_sync_request(std::string_view topic, std::string_view body,
                                                   const decode_limits& limits = {}, envelope* env_out = nullptr);
std::string encode(const envelope& env, const node_snapshot& msg);
result<node_snapshot> decode_node_snapshot(std::string_view topic, std::string_view body,
                                           const decode_limits& limits = {}, envelope* env_out = nullptr);

}  // namespace rmbus::messages
