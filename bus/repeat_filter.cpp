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

repeat_filter::repeat_filter(std::size_t slots, std::chrono::nanoseconds min_gap, int burst)
    : min_gap_ns_(min_gap.count()), burst_(burst) {
  if (slots == 0 || (slots & (slots - 1)) != 0) throw std::invalid_argument("repeat_filter: slots must be a power of two");
  if (min_gap.count() < 0) throw std::invalid_argument("repeat_filter: min_gap must not be negative");
  if (burst < 1 || burst > 64) throw std::invalid_argument("repeat_filter: burst must be 1 to 64");
  table_.resize(slots);
}

bool repeat_filter::admit(std::uint64_t hash, std::int64_t now_ns) {
  if (min_gap_ns_ <= 0) return true;
  // The low bits pick the slot; FNV-1a's low bits mix well enough for a table this small.
  auto& s = table_[hash & (table_.size() - 1)];
  if (s.used && s.hash == hash) {
    if (now_ns < s.tat_ns - (burst_ - 1) * min_gap_ns_) return false;  // its burst is spent: a repeat
    s.tat_ns = std::max(s.tat_ns, now_ns) + min_gap_ns_;
    return true;
  }
  // Free, or another key's: forward. Take the slot only from a stale occupant, so a flooding key keeps its own.
  if (!s.used || now_ns >= s.tat_ns) s = slot{hash, now_ns + min_gap_ns_, true};
  return true;
}

std::size_t repeat_filter::used() const {
  return static_cast<std::size_t>(std::count_if(table_.begin(), table_.end(), [](const slot& s) { return s.used; }));
}

}  // namespace rmbus::bus
