#pragma once
// Cutting the orchestrator's map into the pools' slices (rm.internal.work.<pool>), each round sending only
// what changed: without CAF, so that it can be tested alone.
//
// Differencing holds the map as items by id (workmap_chain::item_map) and tells the slicer which ids it
// touched since the last round: every id of a delta, and the ids a full map adds, changes or drops (compare).
// A round's cut routes only those items (class -> top-level pool, as before: work of an unknown class goes to
// the pool of its first live process's node, or is refused) and gives each pool a change slice: the touched
// items now routed to it, and the ids that left it (gone from the map, or routed elsewhere now). A pool that
// needs a full slice (the first round, after a reconfiguration or HA takeover, or when its scheduler asked:
// resync) gets every item routed to it. Slices are numbered per pool (messages/internal/work_slice.hpp).
//
// What spans every item is kept up to date from the touched ones instead of recomputed each round: the
// refused items, the non-preemptable work the allotment partition looks at (actors/allotment_partition.hpp),
// and the live processes of one pool's work on another pool's nodes. So a round costs the changes, plus the
// refused, non-preemptable and cross-pool items (few).
//
// Not thread-safe; one owner (the differencing actor).

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/allotment_partition.hpp"
#include "actors/workmap_chain.hpp"
#include "core/policy.hpp"
#include "messages/internal/round_start.hpp"
#include "messages/internal/work_slice.hpp"

namespace rmbus::actors {

class work_slicer {
 public:
  using item_map = workmap_chain::item_map;
  // The top-level pool of a node, by name ("" when none): placement, which the caller caches.
  using node_pool_fn = std::function<const std::string&(const std::string& node)>;

  // The classes and the top-level pools (configuration order). Forgets every route: every pool's next slice
  // is full. `cfg` must outlive the slicer or the next configure.
  void configure(const core::scheduler_config& cfg, std::vector<std::string> pools);

  // Item `id` was added, changed or removed since the last cut.
  void touch(const std::string& id) { touched_.insert(id); }
  // A full map replaced `before` by `after`: touches the ids added, changed or gone.
  void compare(const item_map& before, const item_map& after);
  // The pool's next slice is full (its scheduler asked; an unknown pool is ignored).
  void resync(const std::string& pool);
  // Every pool's next slice is full, and every item is routed again (HA takeover).
  void resync_all();

  struct round_cut {
    // Every pool's slice, numbered, with `work`, `removed` and `foreign_processes` filled in; the caller sets
    // cycle, now_ms, settling and other_np_mb.
    std::map<std::string, messages::work_slice> slices;
    std::vector<messages::refused_work> refused;  // by id
  };
  round_cut cut(const item_map& items, const node_pool_fn& node_pool);

  // The non-preemptable work not completed as of the last cut, by id: what the allotment partition reads.
  // Listed on demand, since most configurations have no allotment to partition and the list holds every
  // FIXED_SHARE and RESERVE item.
  std::vector<waiting_np_work> non_preemptable_work() const;

  // A full slice of `pool` now, from `items` as they are (a scheduler asked in the middle of a round),
  // numbered after the pool's last; the items touched since the last cut are routed by the next cut, which
  // sends them again. Its header (cycle, now_ms, ...) is the caller's. An unknown pool gets an empty slice
  // with seq 0.
  messages::work_slice full_slice(const std::string& pool, const item_map& items);

  // How many items the last cut routed (touched, or all of them for a full slice): for the log and tests.
  std::size_t last_cut_routed() const { return last_routed_; }

 private:
  struct route {
    std::string pool;  // "" when not sent to any pool (refused, or completed with nowhere to go)
    bool refused = false;
  };
  struct pool_state {
    std::uint64_t seq = 0;  // the last slice's number
    bool full_next = true;
  };
  route route_of(const messages::work_item& w, const node_pool_fn& node_pool) const;
  void forget(const std::string& id);

  const core::scheduler_config* cfg_ = nullptr;
  std::vector<std::string> pool_order_;
  std::map<std::string, pool_state> pools_;
  std::unordered_map<std::string, route> routes_;  // id -> where its version of the last cut went
  std::set<std::string> touched_;
  bool reroute_all_ = true;
  std::map<std::string, messages::refused_work> refused_;  // id -> its refusal
  std::map<std::string, waiting_np_work> np_;              // id -> its entry for the allotment partition
  // id -> (pool, node) for each live process of the item on a node of another top-level pool than its own.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> foreign_;
  std::size_t last_routed_ = 0;
};

}  // namespace rmbus::actors
