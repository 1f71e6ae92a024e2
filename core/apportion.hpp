#pragma once
// apportion_qshares: DUCC's weighted fair-share routine, used at the class, user and job levels of How
// Much (shared/ducc-rm.md section 1.6, "apportion_qshares precisely").
//
// It splits free space, given as blocks by size (free_blocks), among entities that each want some number
// of nshares of one or more orders, by weight, in qshares, while handing out whole processes:
//   pass loop: deserved quanta water-filled by weight over what each entity holds from earlier passes
//              plus what it still wants (floors, then the leftover quanta by largest remainder), less
//              what it holds; orders from the largest wanted down: each
//              entity's entitlement in processes is min(nshares(o) * w / W, room / o), whole parts first,
//              then one more for each remainder of half a process or more, largest first, while nshares
//              last (DUCC: floor(t / o), one whole process for any sliver); the nshares handed out at an
//              order are removed from the free-block model (take_shares);
//   final bonus loop: one nshare to each entity that still wants one at an order with a free block of
//              exactly that size, until nothing more can be given.
// Departures from DUCC's code (docs/ducc-differences.md): largest-remainder rounding (DUCC's floors and
// entity-order leftovers drift by more than one process from the weighted max-min share); a satisfied
// entity's weight leaves W once, not at every later order (DUCC #12); the bonus loop decrements `wanted`
// so nothing is given past demand; there is no class cap (DUCC's cap slipped units, #2); the entity order
// is the caller's, deterministic.
// Pure: its only effects are on its arguments.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/free_blocks.hpp"

namespace rmbus::core {

struct apportion_entity {
  std::int64_t weight = 1;  // > 0
  // (order, nshares) pairs with distinct orders. `wanted` is consumed as shares are given.
  std::vector<std::pair<int, std::int64_t>> wanted;
  // Output: nshares given per order, same positions as `wanted`.
  std::vector<std::int64_t> given;

  std::int64_t given_total() const;
  std::int64_t given_qshares() const;
  std::int64_t given_at(int order) const;
};

// Working memory of apportion_qshares. A caller that apportions many times (How Much does so some 500 times a
// round) keeps one and passes it to every call, which then reuses its arrays instead of allocating them.
// Holds nothing between calls that could change a result. Not thread-safe.
class apportion_workspace {
 public:
  apportion_workspace();
  ~apportion_workspace();
  apportion_workspace(apportion_workspace&&) noexcept;
  apportion_workspace& operator=(apportion_workspace&&) noexcept;

 private:
  friend void apportion_qshares(apportion_entity*, std::size_t, free_blocks&, apportion_workspace&);
  class state;
  std::unique_ptr<state> state_;
};

// REQUIRES: entities in the caller's tie-break order (classes: weight desc then name; users: name; jobs:
// submission time then id). Consumes `vshares` (the free-space model left afterwards).
void apportion_qshares(std::vector<apportion_entity>& entities, free_blocks& vshares, apportion_workspace& workspace);
// The same on entities [first, first + count): a caller that apportions among many groups of entities keeps
// one array of entities that never shrinks, so their vectors keep their capacity from call to call (How
// Much's job level: resizing a vector per user destroyed and re-allocated them, some 40 allocations a user).
void apportion_qshares(apportion_entity* first, std::size_t count, free_blocks& vshares,
                       apportion_workspace& workspace);
// The same with a workspace of its own.
void apportion_qshares(std::vector<apportion_entity>& entities, free_blocks& vshares);

}  // namespace rmbus::core
