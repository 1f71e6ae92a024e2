#pragma once
// Free space counted as blocks by size, the currency of DUCC's How Much phase.
//
// A block of size p is p contiguous free quanta on one machine: a completely free machine of order p
// (DUCC's nMachinesByOrder[p]) or a partly used one with p quanta left (vMachinesByOrder[p]). How Much
// works on the sum of both ("vshares") and on the derived count
//     nshares(o) = sum over p >= o of floor(p / o) * blocks(p)        (DUCC's nSharesByOrder[o])
// i.e. how many order-o processes could be carved out of all free space.
// Example (DUCC internals): blocks [_ 3 2 1 4] give nshares [_ 26 11 5 4].
//
// Cost: add/remove are O(1), total_qshares() is O(1) (a running count); nshares() is cached and rebuilt
// lazily after a change: the prefix sums over the block counts from the smallest size changed upward, then
// nshares(o) in O(max_order / o) on its first query, so the whole table costs O(max_order log max_order)
// (DUCC rebuilt it in O(max_order^2) after every single share, its dominant cost at a 1 GB quantum).
// take_shares is O(max_order).
// Not thread-safe; a value type (copy it to make a scratch table).

#include <algorithm>
#include <cstdint>
#include <vector>

namespace rmbus::core {

class free_blocks {
 public:
  free_blocks() = default;
  explicit free_blocks(int max_order);

  int max_order() const { return max_order_; }
  // Orders only ever grow (a bigger machine or request appeared). Existing counts are kept.
  void grow(int max_order);

  // Empties the table and sets its width to max_order, as free_blocks(max_order) would, keeping the memory
  // (How Much builds one table per user and class every round).
  void reset(int max_order);

  // REQUIRES: 0 <= size; a size of 0 is ignored (no space); size > max_order grows the table.
  void add(int size, std::int64_t count = 1);
  // REQUIRES: blocks(size) >= count.
  void remove(int size, std::int64_t count = 1);

  // Both inline: the apportionment asks them some millions of times a round, mostly answered from the table
  // or the cache.
  std::int64_t blocks(int size) const {  // blocks of exactly this size (0 outside 1..max_order)
    if (size < 1 || size > max_order_) return 0;
    return blocks_[static_cast<std::size_t>(size)];
  }
  std::int64_t nshares(int order) const {  // nSharesByOrder[order] (0 outside 1..max_order)
    if (order < 1 || order > max_order_) return 0;
    if (stale_from_ > max_order_ && computed_at_[static_cast<std::size_t>(order)] == epoch_)
      return nshares_[static_cast<std::size_t>(order)];
    return compute_nshares(order);
  }
  std::int64_t total_qshares() const;    // == nshares(1)

  // DUCC's removeSharesByOrder: the count model of the free space left after `count` order-`order`
  // nshares were handed out (exact multiples of the order are consumed first, then larger blocks are
  // split from the smallest up). Not real placement. REQUIRES: count <= nshares(order).
  void take_shares(int order, std::int64_t count);

  free_blocks& operator+=(const free_blocks& other);
  bool operator==(const free_blocks& other) const;

 private:
  void rebuild_nshares() const;
  std::int64_t compute_nshares(int order) const;  // nshares() when the cache does not hold it
  void changed_at(std::int64_t size) { stale_from_ = std::min(stale_from_, static_cast<int>(size)); }

  int max_order_ = 0;
  std::vector<std::int64_t> blocks_;           // index = size, [0] unused
  std::int64_t total_q_ = 0;                   // sum of size * blocks
  mutable std::vector<std::int64_t> prefix_;   // cache: blocks with size <= s, index = s
  mutable std::vector<std::int64_t> nshares_;  // cache, index = order; valid where computed_at_ == epoch_
  mutable std::vector<std::uint64_t> computed_at_;
  mutable std::uint64_t epoch_ = 1;            // advanced by every rebuild of prefix_
  mutable int stale_from_ = 1;                 // prefix_ is stale from this size up (> max_order_: none)
};

}  // namespace rmbus::core
