#include "actors/mass_loss_guard.hpp"

#include <algorithm>

namespace rmbus::actors {

void mass_loss_guard::forget_old(pool_state& p, std::int64_t now_ms) const {
  while (!p.went_missing.empty() && now_ms - p.went_missing.front() >= s_.interval_ms) p.went_missing.pop_front();
}

std::size_t mass_loss_guard::per_interval(std::size_t pool_size) const {
  // ceil(evict_percent x size / 100), at least one: the pace never stops evicting altogether.
  const auto n = (pool_size * static_cast<std::size_t>(s_.evict_percent) + 99) / 100;
  return std::max<std::size_t>(1, n);
}

void mass_loss_guard::evict_paced(pool_state& p, actions& out) const {
  while (p.budget > 0 && !p.queue.empty()) {
    out.evict.push_back(p.queue.front());
    p.silent.erase(p.queue.front());
    p.queue.pop_front();
    --p.budget;
  }
}

void mass_loss_guard::missing(const std::string& pool, const std::string& node, std::size_t pool_size,
                              std::int64_t now_ms, actions& out) {
  auto& p = pools_[pool];
  forget_old(p, now_ms);
  p.went_missing.push_back(now_ms);
  p.silent.insert(node);
  // More than loss_percent of the pool within one interval (integers: 100 x silent > percent x size).
  if (!p.mass_loss && 100 * p.went_missing.size() > static_cast<std::size_t>(s_.loss_percent) * pool_size) {
    p.mass_loss = true;
    p.budget = per_interval(pool_size);
    out.entered.push_back(pool);
  }
}

void mass_loss_guard::down(const std::string& pool, const std::string& node, std::int64_t now_ms, actions& out) {
  auto& p = pools_[pool];
  forget_old(p, now_ms);
  if (!p.mass_loss) {
    out.evict.push_back(node);
    p.silent.erase(node);
    return;
  }
  if (std::find(p.queue.begin(), p.queue.end(), node) == p.queue.end()) p.queue.push_back(node);
  evict_paced(p, out);
}

void mass_loss_guard::back(const std::string& pool, const std::string& node) {
  auto it = pools_.find(pool);
  if (it == pools_.end()) return;
  auto& q = it->second.queue;
  q.erase(std::remove(q.begin(), q.end(), node), q.end());
  it->second.silent.erase(node);
}

void mass_loss_guard::forget(const std::string& pool, const std::set<std::string>& nodes) {
  auto it = pools_.find(pool);
  if (it == pools_.end() || nodes.empty()) return;
  auto& q = it->second.queue;
  q.erase(std::remove_if(q.begin(), q.end(), [&](const std::string& n) { return nodes.count(n) != 0; }), q.end());
  for (const auto& n : nodes) it->second.silent.erase(n);
}

void mass_loss_guard::tick(const std::map<std::string, std::size_t>& pool_sizes, std::int64_t now_ms, actions& out) {
  for (auto& [pool, p] : pools_) {
    forget_old(p, now_ms);
    if (!p.mass_loss) continue;
    auto size = pool_sizes.find(pool);
    const std::size_t n = size == pool_sizes.end() ? 0 : size->second;
    p.budget = per_interval(n);
    evict_paced(p, out);
    if (p.queue.empty() && 100 * p.silent.size() <= static_cast<std::size_t>(s_.loss_percent) * n) {
      p.mass_loss = false;
      out.ended.push_back(pool);
    }
  }
}

bool mass_loss_guard::in_mass_loss(const std::string& pool) const {
  auto it = pools_.find(pool);
  return it != pools_.end() && it->second.mass_loss;
}

std::size_t mass_loss_guard::waiting(const std::string& pool) const {
  auto it = pools_.find(pool);
  return it == pools_.end() ? 0 : it->second.queue.size();
}

}  // namespace rmbus::actors
