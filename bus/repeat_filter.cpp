#include "bus/repeat_filter.hpp"

#include <algorithm>
#include <stdexcept>

namespace rmbus::bus {

std::uint64_t key_hash(std::string_view key) {
  std::uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

repeat_filter::repeat_filter(std::size_t slots, std::chrono::nanoseconds min_gap)
    : table_(slots), min_gap_ns_(min_gap.count()) {
  if (slots == 0 || (slots & (slots - 1)) != 0) throw std::invalid_argument("repeat_filter: slots must be a power of two");
  if (min_gap.count() < 0) throw std::invalid_argument("repeat_filter: min_gap must not be negative");
}

bool repeat_filter::admit(std::uint64_t hash, std::int64_t now_ns) {
  if (min_gap_ns_ <= 0) return true;
  // The low bits pick the slot; FNV-1a's low bits mix well enough for a table this small.
  auto& s = table_[hash & (table_.size() - 1)];
  const bool fresh = s.used && now_ns - s.last_ns < min_gap_ns_;
  if (s.used && s.hash == hash) {
    if (fresh) return false;  // a repeat within min_gap
    s.last_ns = now_ns;
    return true;
  }
  // Free, or another key's: forward. Take the slot only from a stale occupant, so a flooding key keeps its own.
  if (!fresh) s = slot{hash, now_ns, true};
  return true;
}

std::size_t repeat_filter::used() const {
  return static_cast<std::size_t>(std::count_if(table_.begin(), table_.end(), [](const slot& s) { return s.used; }));
}

}  // namespace rmbus::bus
