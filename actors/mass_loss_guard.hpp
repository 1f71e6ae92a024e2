#pragma once
// When to evict from nodes that died: at once, or paced because a large part of a pool went silent together.
// Without CAF, so that it can be tested alone.
//
// A node that stops heartbeating is usually dead, and its work is best evicted and placed elsewhere. When a
// large part of a pool goes silent within one heartbeat interval, the likelier cause is the network (a
// switch, a partition), and evicting everything would throw away work that is still running. So, like
// Kubernetes' unhealthy-zone threshold: when more than `loss_percent` of a pool's nodes go missing within one
// heartbeat interval, the pool is in mass loss. Its nodes are still reported missing and down, but their
// evictions are paced: at most `evict_percent` of the pool (at least one node) per interval, oldest down
// first, and a node whose heartbeats return before its turn is never evicted. The mass loss ends when no node
// of the pool waits for its eviction and no more than the threshold are silent (missing or down, neither
// back nor evicted): nodes go down node_stability intervals after they go missing, so the pool stays in mass
// loss while they are on their way.
//
// Time is an input (milliseconds); not thread-safe; one owner (the eviction actor).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace rmbus::actors {

struct mass_loss_settings {
  int loss_percent = 30;   // of a pool's nodes going missing within one interval
  int evict_percent = 10;  // of the pool evicted per interval while in mass loss
  std::int64_t interval_ms = 30000;
};

class mass_loss_guard {
 public:
  explicit mass_loss_guard(mass_loss_settings s) : s_(s) {}
  // New settings (a reconfiguration); the pools' state is kept.
  void reconfigure(mass_loss_settings s) { s_ = s; }

  // What the caller must do after a call.
  struct actions {
    std::vector<std::string> evict;    // evict these nodes now
    std::vector<std::string> entered;  // pools that just went into mass loss
    std::vector<std::string> ended;    // pools whose mass loss just ended
  };

  // Node `node` of pool `pool` (which has `pool_size` nodes) went missing at now_ms.
  void missing(const std::string& pool, const std::string& node, std::size_t pool_size, std::int64_t now_ms,
               actions& out);
  // Node `node` of pool `pool` went down: evicted now, or queued while the pool is in mass loss.
  void down(const std::string& pool, const std::string& node, std::int64_t now_ms, actions& out);
  // Node `node` heartbeats again: if it waits for its eviction, it is not evicted.
  void back(const std::string& pool, const std::string& node);
  // Nodes of `pool` forgotten (down too long, holding nothing): no longer silent nor waiting, so a storm of
  // invented names, once forgotten, does not hold its pool in mass loss. One pass over the pool's queue.
  void forget(const std::string& pool, const std::set<std::string>& nodes);

  // Once per interval: the paced evictions that are due, and mass losses that ended.
  void tick(const std::map<std::string, std::size_t>& pool_sizes, std::int64_t now_ms, actions& out);

  bool in_mass_loss(const std::string& pool) const;
  std::size_t waiting(const std::string& pool) const;

 private:
  struct pool_state {
    std::deque<std::int64_t> went_missing;  // times within the last interval
    std::set<std::string> silent;           // missing or down, neither back nor evicted
    bool mass_loss = false;
    std::deque<std::string> queue;  // down nodes waiting for their eviction, oldest first
    std::size_t budget = 0;         // evictions left in the current interval
  };
  void forget_old(pool_state& p, std::int64_t now_ms) const;
  void evict_paced(pool_state& p, actions& out) const;
  std::size_t per_interval(std::size_t pool_size) const;

  mass_loss_settings s_;
  std::map<std::string, pool_state> pools_;
};

}  // namespace rmbus::actors
