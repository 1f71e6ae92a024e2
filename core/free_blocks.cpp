#include "core/free_blocks.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rmbus::core {

// How the nshares cache works. nshares(o) = sum over k >= 1 of k * (blocks with size in [k*o, (k+1)*o - 1]),
// which is the DUCC formula sum over p >= o of floor(p/o) * blocks(p) grouped by the quotient k. With a
// prefix sum over block counts each group is one subtraction, so nshares(o) costs O(max_order / o) and the
// whole table O(max_order * (1 + 1/2 + ... )) = O(max_order log max_order). A change only marks the prefix
// sums stale from the smallest size changed; they are rebuilt from there (O(max_order) at most) at the next
// query, and each order's value is computed on its first query after a change. How Much alternates "take at
// order o" with "query nshares(o - 1)", so the lazy per-order fill matters: the full table is rarely needed
// between two changes.

free_blocks::free_blocks(int max_order) {
  if (max_order < 0) throw std::invalid_argument("free_blocks: negative max_order " + std::to_string(max_order));
  grow(max_order);
}

void free_blocks::grow(int max_order) {
  if (max_order <= max_order_) return;
  max_order_ = max_order;
  blocks_.resize(static_cast<std::size_t>(max_order_) + 1, 0);
  stale_from_ = 1;  // the cache is resized at the next rebuild
}

void free_blocks::reset(int max_order) {
  if (max_order < 0)
    throw std::invalid_argument("free_blocks: negative max_order " + std::to_string(max_order));
  max_order_ = max_order;
  blocks_.assign(static_cast<std::size_t>(max_order_) + 1, 0);
  total_q_ = 0;
  stale_from_ = 1;  // the cache is rebuilt (and resized if the width changed) at the next query
}

void free_blocks::add(int size, std::int64_t count) {
  if (size < 0 || count < 0) {
    throw std::invalid_argument("free_blocks::add: size " + std::to_string(size) + " count " +
                                std::to_string(count));
  }
  if (size == 0 || count == 0) return;  // an empty block is no space
  if (size > max_order_) grow(size);
  blocks_[static_cast<std::size_t>(size)] += count;
  total_q_ += count * size;
  changed_at(size);
}

void free_blocks::remove(int size, std::int64_t count) {
  if (size == 0 || count == 0) return;
  if (size < 0 || count < 0 || size > max_order_ || blocks_[static_cast<std::size_t>(size)] < count) {
    throw std::logic_error("free_blocks::remove: " + std::to_string(count) + " blocks of size " +
                           std::to_string(size) + " requested, " + std::to_string(blocks(size)) + " present");
  }
  blocks_[static_cast<std::size_t>(size)] -= count;
  total_q_ -= count * size;
  changed_at(size);
}

void free_blocks::rebuild_nshares() const {
  // prefix_[s] = number of blocks with size <= s. Every entry is rewritten, and the per-order values are
  // invalidated by moving to a new epoch, so nothing is cleared first (How Much rebuilds after every take).
  const auto width = static_cast<std::size_t>(max_order_) + 1;
  if (prefix_.size() != width) {
    prefix_.assign(width, 0);
    nshares_.assign(width, 0);
    computed_at_.assign(width, 0);
    stale_from_ = 1;
  }
  for (auto s = static_cast<std::size_t>(std::max(1, stale_from_)); s < width; ++s) prefix_[s] = prefix_[s - 1] + blocks_[s];
  ++epoch_;
  stale_from_ = max_order_ + 1;
}

std::int64_t free_blocks::compute_nshares(int order) const {
  if (stale_from_ <= max_order_) rebuild_nshares();  // grow() marks everything stale
  std::int64_t& cached = nshares_[static_cast<std::size_t>(order)];
  if (computed_at_[static_cast<std::size_t>(order)] == epoch_) return cached;
  computed_at_[static_cast<std::size_t>(order)] = epoch_;
  std::int64_t sum = 0;
  for (std::int64_t k = 1; k * order <= max_order_; ++k) {
    const auto lo = static_cast<std::size_t>(k * order);
    const auto hi = static_cast<std::size_t>(std::min<std::int64_t>((k + 1) * order - 1, max_order_));
    sum += k * (prefix_[hi] - prefix_[lo - 1]);
  }
  cached = sum;
  return sum;
}

std::int64_t free_blocks::total_qshares() const { return total_q_; }

void free_blocks::take_shares(int order, std::int64_t count) {
  if (count == 0) return;
  if (order < 1 || count < 0 || count > nshares(order)) {
    throw std::logic_error("free_blocks::take_shares: " + std::to_string(count) + " nshares of order " +
                           std::to_string(order) + " requested, " + std::to_string(nshares(order)) +
                           " available");
  }
  const auto at = [this](std::int64_t size) -> std::int64_t& {
    changed_at(size);  // every size touched below changes
    return blocks_[static_cast<std::size_t>(size)];
  };
  total_q_ -= count * order;  // every nshare taken is exactly `order` quanta

  // 1. Blocks whose size is an exact multiple f*order: a block of size f*order yields f nshares with no
  //    waste. What is left of the bucket (`rest` nshares) is written back as whole blocks of size f*order
  //    plus one residual block holding the remainder, as DUCC does.
  for (std::int64_t f = 1; f * order <= max_order_ && count > 0; ++f) {
    const std::int64_t fo = f * order;
    if (blocks_[static_cast<std::size_t>(fo)] == 0) continue;
    const std::int64_t available = at(fo) * f;  // nshares of `order` in this bucket
    const std::int64_t given = std::min(count, available);
    const std::int64_t rest = available - given;
    at(fo) = rest * order / fo;
    const std::int64_t residual = rest * order % fo;
    if (residual > 0) ++at(residual);
    count -= given;
  }

  // 2. Still short: split the other blocks, smallest first from `order` upward. A block of size s yields
  //    floor(s / order) nshares and leaves s mod order; when only part of it is needed it leaves
  //    s - count * order.
  for (std::int64_t s = order; s <= max_order_ && count > 0; ++s) {
    if (blocks_[static_cast<std::size_t>(s)] == 0) continue;
    const std::int64_t yield = s / order;
    // Whole blocks first, in one step (a bucket may hold thousands of machines).
    const std::int64_t whole = std::min(at(s), count / yield);
    if (whole > 0) {
      count -= whole * yield;
      at(s) -= whole;
      if (s % order > 0) at(s % order) += whole;
    }
    // Then at most one block of which only part is needed.
    if (count > 0 && at(s) > 0) {
      --at(s);
      ++at(s - count * order);
      count = 0;
    }
  }
}

free_blocks& free_blocks::operator+=(const free_blocks& other) {
  grow(other.max_order_);
  for (int s = 1; s <= other.max_order_; ++s) blocks_[static_cast<std::size_t>(s)] += other.blocks(s);
  total_q_ += other.total_q_;
  stale_from_ = 1;
  return *this;
}

bool free_blocks::operator==(const free_blocks& other) const {
  // Equal when every size holds the same number of blocks; the table width (max_order) is capacity only.
  const int top = std::max(max_order_, other.max_order_);
  for (int s = 1; s <= top; ++s) {
    if (blocks(s) != other.blocks(s)) return false;
  }
  return true;
}

}  // namespace rmbus::core
