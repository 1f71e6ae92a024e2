#pragma once
// Differencing remembers, per job, what the last plans said of it (whether it wants more). Jobs leave the
// map and never come back under the same id, so what was said of them must be forgotten, or the table grows
// with every job ever seen. Without CAF so that it can be tested alone.

#include <cstddef>
#include <map>
#include <string>

namespace rmbus::actors {

// Drops the entries of jobs no longer in `items` once the table holds more than twice the map and 1,024
// entries: one walk now and then instead of a lookup per job each round, and the table stays bounded.
template <class Value, class Item>
void forget_departed_jobs(std::map<std::string, Value>& per_job, const std::map<std::string, Item>& items) {
  if (per_job.size() <= 2 * items.size() + 1024) return;
  std::erase_if(per_job, [&](const auto& entry) { return items.find(entry.first) == items.end(); });
}

}  // namespace rmbus::actors
