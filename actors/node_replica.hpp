#pragma once
// A reader's copy of the heartbeat intake's node table, kept up to date from numbered changes (the ZeroMQ
// guide's Clone pattern), without CAF so that it can be tested alone.
//
// The intake numbers its node_changes batches 1, 2, 3... A replica applies a batch only when it is the next
// one from the intake it follows. It asks for a snapshot (the caller sends node_sync_request) when:
//   - it has never been in step and the first batch it sees is not batch 1 (it joined late);
//   - a batch number jumps (a batch was lost between processes);
//   - a batch comes from another intake (the intake restarted: its table starts afresh).
// While it waits, batches are kept (a bounded number) and, once the snapshot arrives, those numbered above
// the snapshot are applied in order; a snapshot always brings the replica into step.
//
// Each apply reports the nodes whose liveness changed (with the state before), which is what eviction acts
// on (a node that went down) and what publication republishes, and the nodes removed from the table
// (`forgotten`: named in a batch's forgotten list, or absent from a snapshot), so that what a reader keeps
// per node goes with them.
//
// Not thread-safe; one owner (an actor).

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "messages/internal/node_changes.hpp"
#include "messages/internal/node_sync.hpp"

namespace rmbus::actors {

struct liveness_change {
  std::string node;
  std::optional<messages::node_liveness> before;  // empty: the node was not in the table
  messages::node_liveness after = messages::node_liveness::up;
  bool forgotten = false;  // removed from the table (`after` is then its last state); `pool` was its pool
  std::string pool{};

  bool operator==(const liveness_change&) const = default;
};

class node_replica {
 public:
  enum class outcome {
    applied,        // in step; the table is up to date
    need_snapshot,  // out of step: ask the intake for a snapshot (once per call that returns this)
    waiting,        // a snapshot was asked for and has not come yet; the batch is kept
  };

  // REQUIRES: max_waiting >= 1 (batches kept while waiting for a snapshot; beyond it the oldest are
  // dropped and the snapshot, when it comes, is asked for again if it does not cover what was dropped).
  explicit node_replica(std::size_t max_waiting = 256) : max_waiting_(max_waiting) {}

  // A batch from the intake whose envelope src is `src`. Appends the liveness changes to `changes`.
  outcome apply(const std::string& src, const messages::node_changes& batch, std::vector<liveness_change>& changes);
  // A snapshot from intake `src`: replaces the table, then applies the kept batches numbered above it.
  // Returns need_snapshot only when kept batches still leave a gap (some were dropped).
  outcome apply(const std::string& src, const messages::node_snapshot& snap, std::vector<liveness_change>& changes);

  bool in_step() const { return in_step_; }
  std::uint64_t seq() const { return seq_; }
  const std::string& source() const { return src_; }
  const std::map<std::string, messages::node_entry>& nodes() const { return nodes_; }
  const messages::node_entry* find(const std::string& node) const;
  // Nodes in the table per top-level pool (node_entry::pool), kept as the table changes: eviction's guard
  // asks at every watchdog tick, and a count would walk 50,000 nodes each time. Pools with none are absent.
  const std::map<std::string, std::size_t>& pool_sizes() const { return pool_sizes_; }

 private:
  void add(const messages::node_entry& e);
  void remove(std::map<std::string, messages::node_entry>::iterator it);
  void take(const messages::node_entry& e, std::vector<liveness_change>& changes);
  void apply_batch(const messages::node_changes& batch, std::vector<liveness_change>& changes);
  outcome keep(const std::string& src, const messages::node_changes& batch);

  std::size_t max_waiting_;
  bool in_step_ = false;
  bool asked_ = false;  // a snapshot was asked for and has not come
  std::string src_;
  std::uint64_t seq_ = 0;
  std::map<std::string, messages::node_entry> nodes_;
  std::map<std::string, std::size_t> pool_sizes_;
  std::vector<std::pair<std::string, messages::node_changes>> waiting_;
};

}  // namespace rmbus::actors
