#include "bus/known_keys.hpp"

#include <stdexcept>

namespace rmbus::bus {

known_keys::known_keys(std::size_t slots) {
  if (slots == 0 || (slots & (slots - 1)) != 0) throw std::invalid_argument("known_keys: slots must be a power of two");
  table_.resize(slots);
}

void known_keys::heard(std::uint64_t hash, std::int64_t now_ns, std::int64_t window_ns) {
  auto& s = table_[hash & (table_.size() - 1)];
  if (s.used && s.hash != hash && now_ns - s.heard_ns < window_ns) return;  // another live key's
  s = slot{hash, now_ns, true};
}

bool known_keys::known(std::uint64_t hash, std::int64_t now_ns, std::int64_t window_ns) const {
  const auto& s = table_[hash & (table_.size() - 1)];
  return s.used && s.hash == hash && now_ns - s.heard_ns < window_ns;
}

}  // namespace rmbus::bus
