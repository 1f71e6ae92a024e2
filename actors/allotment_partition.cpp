#include "actors/allotment_partition.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

namespace rmbus::actors {

namespace {

std::optional<std::uint64_t> limit_of(const core::scheduler_config& cfg, const std::string& user) {
  for (const auto& u : cfg.users)
    if (u.user == user && u.max_allotment_mb) return u.max_allotment_mb;
  return cfg.settings.global_allotment_mb;
}

}  // namespace

bool any_allotment_limit(const core::scheduler_config& cfg) {
  if (cfg.settings.global_allotment_mb) return true;
  return std::any_of(cfg.users.begin(), cfg.users.end(),
                     [](const auto& u) { return u.max_allotment_mb.has_value(); });
}

std::map<std::string, std::map<core::user_id, std::uint64_t>> partition_allotments(
    const core::scheduler_config& cfg, const std::vector<std::string>& pools,
    const std::map<std::string, std::map<std::string, std::uint64_t>>& held_by_pool,
    const std::vector<waiting_np_work>& waiting) {
  std::set<std::string> users;
  for (const auto& [pool, held] : held_by_pool)
    for (const auto& [u, mb] : held) users.insert(u);
  for (const auto& w : waiting) users.insert(w.user);

  // The recipient of each user's free allotment: the pool of the oldest waiting work.
  std::map<std::string, const waiting_np_work*> oldest;
  for (const auto& w : waiting) {
    auto& o = oldest[w.user];
    if (o == nullptr || std::tie(w.submitted_ms, w.job) < std::tie(o->submitted_ms, o->job)) o = &w;
  }

  std::map<std::string, std::map<core::user_id, std::uint64_t>> out;
  for (const auto& user : users) {
    const auto limit = limit_of(cfg, user);
    if (!limit) continue;
    std::uint64_t held_total = 0;
    auto held_in = [&](const std::string& pool) -> std::uint64_t {
      auto p = held_by_pool.find(pool);
      if (p == held_by_pool.end()) return 0;
      auto u = p->second.find(user);
      return u == p->second.end() ? 0 : u->second;
    };
    for (const auto& pool : pools) held_total += held_in(pool);
    const std::uint64_t free = held_total < *limit ? *limit - held_total : 0;
    auto o = oldest.find(user);
    for (const auto& pool : pools) {
      std::uint64_t budget = held_in(pool);
      if (o != oldest.end() && o->second->pool == pool) budget += free;
      out[pool][core::user_id{user}] = budget < *limit ? *limit - budget : 0;
    }
  }
  return out;
}

}  // namespace rmbus::actors
