#pragma once
// Node liveness from heartbeats: DUCC's watchdog (ANodeStability, shared/ducc-rm.md section 2.3) as pure logic.
//
// The owner calls heartbeat(node, now) for every agent heartbeat and tick(now) once per heartbeat interval.
// As in DUCC, each tick adds one to a node's counter and a heartbeat resets it to 0. A healthy node's
// heartbeat arrives once between two ticks, so its counter reads 1 at a tick; the counter first reads 2
// when a whole interval passed without a heartbeat. Hence (the first count is forgiven as timing jitter,
// exactly as DUCC does):
//   counter 0..1          -> up
//   counter 2..stability-1 -> missing   (one or more heartbeats missed)
//   counter >= stability   -> down      (DUCC: the node is dead; 6 ticks x 30 s = 3 minutes by default)
// A down node is no longer counted until it sends a heartbeat again; any heartbeat brings a node back up.
// One departure from DUCC: a tick less than half an interval after the node's last heartbeat does not count
// (that heartbeat belongs to the interval the tick closes), so a healthy agent whose heartbeats drift around
// the watchdog's ticks is never called missing.
// Every change of status is returned as a transition; tick() reports them in node-name order.
//
// Each known node has a slot (its place in the table, kept until it is forgotten): the owner may keep it and
// pass it back (heartbeat_at, status_at, missed_at), so that a heartbeat of a known node costs no lookup by
// name. At 50,000 nodes, 5,000 heartbeats a second, a lookup by name was most of the watchdog's cost.
//
// Time comes in as arguments (no clock here): `now_ms` only stamps transitions and last-heard times.
// Not thread-safe; one owner (the heartbeat intake actor).

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ids.hpp"

namespace rmbus::core {

enum class node_status { up, missing, down };
const char* to_string(node_status s);

// A heartbeat is late when it arrives more than 1.5 intervals after the node's previous one. Agents send
// once per interval, so a strict "more than one interval" would call half of a healthy cluster's heartbeats
// late through jitter alone. Integers: 2 x gap > 3 x interval.
constexpr bool heartbeat_late(std::int64_t gap_ms, std::int64_t interval_ms) { return 2 * gap_ms > 3 * interval_ms; }

struct liveness_config {
  std::int64_t heartbeat_interval_ms = 30000;  // ducc.agent.node.metrics.publish.rate: the tick period
  int node_stability = 6;                      // ducc.rm.node.stability: ticks without heartbeat -> down
  // How the index hashes names (empty: std::hash). The RM passes a keyed hash: names come off the bus, and a
  // sender must not be able to choose names that share a bucket.
  std::function<std::uint64_t(std::string_view)> name_hash;
};

struct liveness_transition {
  machine_id node;
  node_status from = node_status::up;
  node_status to = node_status::up;
  bool first_heard = false;  // the node was unknown before this heartbeat (from is then meaningless)
  int missed = 0;            // the node's counter when the transition happened
  std::int64_t at_ms = 0;

  bool operator==(const liveness_transition&) const = default;
};

class node_liveness {
 public:
  using slot = std::uint32_t;

  // REQUIRES: heartbeat_interval_ms > 0 and node_stability >= 2 (validated by config; otherwise throws
  // std::invalid_argument naming the value).
  explicit node_liveness(liveness_config cfg = {});

  // A heartbeat from `node`. Returns the transition when the node was unknown, missing or down.
  // `heard_before`, when given, receives the node's previous last_heard_ms (0 for an unknown node), which
  // saves the caller a second lookup per heartbeat.
  // `at`, when given, receives the node's slot.
  std::optional<liveness_transition> heartbeat(const machine_id& node, std::int64_t now_ms,
                                               std::int64_t* heard_before = nullptr, slot* at = nullptr);
  // The same for the node in slot `at` (as heartbeat() or slot_of() gave it). Throws std::out_of_range when
  // the slot holds no node (never given, or its node was forgotten).
  std::optional<liveness_transition> heartbeat_at(slot at, std::int64_t now_ms, std::int64_t* heard_before = nullptr);

  // One watchdog tick: counts one more interval for every node not down; returns the status changes,
  // sorted by node name. `missed_more`, when given, receives (unsorted) every node whose count of missed
  // heartbeats this tick raised past the first one, which is forgiven (counter 2 or more after it): the
  // nodes whose status or missed count as a reader sees them changed. The transitions are among them.
  std::vector<liveness_transition> tick(std::int64_t now_ms, std::vector<machine_id>* missed_more = nullptr);

  // Forget a node entirely (reconfiguration removed it, or it was down too long). Returns false if it was
  // unknown. A forgotten node that heartbeats again is new (first_heard).
  bool forget(const machine_id& node);
  // Nodes that went down at or before `cutoff_ms` (the tick that called them down) and have not spoken
  // since, sorted by name: the candidates for forgetting when cutoff = now - forget time.
  std::vector<machine_id> down_since(std::int64_t cutoff_ms) const;

  bool known(const machine_id& node) const { return index_.count(node) != 0; }
  std::optional<slot> slot_of(const machine_id& node) const;  // empty for an unknown node
  node_status status(const machine_id& node) const;  // REQUIRES: known(node); unknown -> down
  int missed(const machine_id& node) const;           // the counter; 0 for an unknown node
  // By slot; throw std::out_of_range when the slot holds no node.
  node_status status_at(slot at) const;
  int missed_at(slot at) const;
  std::int64_t last_heard_ms(const machine_id& node) const;  // 0 for an unknown node
  std::vector<machine_id> nodes_with(node_status s) const;   // sorted by name
  const liveness_config& config() const { return cfg_; }

 private:
  struct node_rec {
    machine_id name;
    bool used = false;  // false: a free slot (its node was forgotten)
    int counter = 0;
    node_status status = node_status::up;
    std::int64_t last_heard_ms = 0;
    std::int64_t down_since_ms = 0;  // the tick that called it down (status down only)
  };
  node_status status_for(int counter) const;
  const node_rec& rec_at(slot at) const;  // throws std::out_of_range for a free or unknown slot
  node_rec& rec_at(slot at);
  std::optional<liveness_transition> beat(node_rec& rec, bool inserted, std::int64_t now_ms,
                                          std::int64_t* heard_before);

  liveness_config cfg_;
  // The nodes in slots, walked in place by tick(); free slots are reused. Names lead to slots through the
  // hashed index. What comes out as a list (tick, down_since, nodes_with) is sorted by name.
  std::vector<node_rec> recs_;
  std::vector<slot> free_;
  struct name_hasher {
    std::function<std::uint64_t(std::string_view)> hash;
    std::size_t operator()(const machine_id& id) const {
      return hash ? hash(id.str()) : std::hash<std::string_view>{}(id.str());
    }
  };
  std::unordered_map<machine_id, slot, name_hasher> index_;
};

}  // namespace rmbus::core
