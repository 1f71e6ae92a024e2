#include "config/detail/closest_name.hpp"

#include <algorithm>

namespace rmbus::config::detail {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme suffice: a swap looks two rows back.
  const std::size_t n = b.size();
  std::vector<std::size_t> before(n + 1), previous(n + 1), current(n + 1);
  for (std::size_t j = 0; j <= n; ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= n; ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[n];
}

std::optional<std::string> closest_name(std::string_view name,
                                        const std::vector<std::string_view>& candidates) {
  const std::size_t allowed = std::min<std::size_t>(3, name.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = allowed + 1;
  for (auto candidate : candidates) {
    // The distance is at least the difference in length: skipping early also bounds the work a hostile,
    // megabyte-long key can cause.
    const std::size_t longer = std::max(name.size(), candidate.size());
    if (longer - std::min(name.size(), candidate.size()) > allowed) continue;
    const std::size_t d = edit_distance(name, candidate);
    if (d > 0 && d < best_distance) {
      best_distance = d;
      best = std::string(candidate);
    }
  }
  return best;
}

}  // namespace rmbus::config::detail
