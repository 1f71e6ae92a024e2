#include "actors/work_slicer.hpp"

#include "core/nodepool_scheduler.hpp"

namespace rmbus::actors {

namespace {

// The class of a work item: named, or the default for its kind (jobs: FAIR_SHARE; other work: RESERVE, then
// FIXED_SHARE), as the core resolves it. nullptr: none.
const core::resource_class* class_of(const core::scheduler_config& cfg, const messages::work_item& w) {
  if (!w.class_name.empty()) {
    for (const auto& c : cfg.classes)
      if (c.name == w.class_name) return &c;
    return nullptr;
  }
  const std::vector<core::policy> prefs =
      w.kind == messages::work_kind::job
          ? std::vector<core::policy>{core::policy::fair_share}
          : std::vector<core::policy>{core::policy::reserve, core::policy::fixed_share};
  for (auto p : prefs)
    for (const auto& c : cfg.classes)
      if (c.is_default && c.policy == p) return &c;
  return nullptr;
}

bool live(const messages::work_process& p) { return p.state != messages::process_state::ended; }

}  // namespace

void work_slicer::configure(const core::scheduler_config& cfg, std::vector<std::string> pools) {
  cfg_ = &cfg;
  pool_order_ = std::move(pools);
  std::map<std::string, pool_state> kept;
  for (const auto& p : pool_order_) {
    auto& s = kept[p];
    if (auto it = pools_.find(p); it != pools_.end()) s.seq = it->second.seq;  // numbers never go back
  }
  pools_ = std::move(kept);
  resync_all();
}

void work_slicer::resync(const std::string& pool) {
  if (auto it = pools_.find(pool); it != pools_.end()) it->second.full_next = true;
}

void work_slicer::resync_all() {
  for (auto& [name, p] : pools_) p.full_next = true;
  reroute_all_ = true;
}

void work_slicer::compare(const item_map& before, const item_map& after) {
  // Both ordered by id: one walk.
  auto b = before.begin();
  auto a = after.begin();
  while (b != before.end() || a != after.end()) {
    if (a == after.end() || (b != before.end() && b->first < a->first)) {
      touched_.insert(b->first);
      ++b;
    } else if (b == before.end() || a->first < b->first) {
      touched_.insert(a->first);
      ++a;
    } else {
      if (!(a->second == b->second)) touched_.insert(a->first);
      ++a;
      ++b;
    }
  }
}

work_slicer::route work_slicer::route_of(const messages::work_item& w, const node_pool_fn& node_pool) const {
  route r;
  const auto* rc = class_of(*cfg_, w);
  if (rc != nullptr) {
    r.pool = core::top_level_of(*cfg_, rc->nodepool);
  } else {
    for (const auto& p : w.processes)
      if (live(p)) {
        r.pool = node_pool(p.node);
        break;
      }
  }
  if (r.pool.empty() || pools_.count(r.pool) == 0) {
    r.pool.clear();
    r.refused = w.state != messages::work_state::completed;
  }
  return r;
}

void work_slicer::forget(const std::string& id) {
  routes_.erase(id);
  refused_.erase(id);
  np_.erase(id);
  foreign_.erase(id);
}

work_slicer::round_cut work_slicer::cut(const item_map& items, const node_pool_fn& node_pool) {
  round_cut out;
  for (const auto& p : pool_order_) out.slices[p];
  if (reroute_all_) {
    for (const auto& [id, r] : routes_) touched_.insert(id);
    for (const auto& [id, w] : items) touched_.insert(id);
    reroute_all_ = false;
  }
  last_routed_ = touched_.size();
  const auto& cfg = *cfg_;
  for (const auto& id : touched_) {
    std::string old_pool;
    if (auto r = routes_.find(id); r != routes_.end()) old_pool = r->second.pool;
    forget(id);
    auto it = items.find(id);
    if (it == items.end()) {
      if (!old_pool.empty()) out.slices[old_pool].removed.push_back(id);
      continue;
    }
    const auto& w = it->second;
    const auto r = route_of(w, node_pool);
    routes_[id] = r;
    if (!old_pool.empty() && old_pool != r.pool) out.slices[old_pool].removed.push_back(id);
    if (r.refused) {
      refused_[id] = {id, w.user,
                      w.class_name.empty()
                          ? std::string{"No scheduling class defined and no default class configured."}
                          : "Cannot find class " + w.class_name + " for the work"};
      continue;
    }
    if (r.pool.empty()) continue;  // completed, nowhere to go
    if (!pools_.at(r.pool).full_next) out.slices[r.pool].work.push_back(w);
    const auto* rc = class_of(cfg, w);
    if (rc != nullptr && rc->policy != core::policy::fair_share && w.state != messages::work_state::completed)
      np_[id] = {w.user, r.pool, static_cast<std::int64_t>(w.submitted_ms), id};
    // Live processes on another top-level pool's node (it moved there in a reconfiguration): that pool
    // must not place anything on the node while they run. (One pool: no node can be another's.)
    if (pools_.size() > 1) {
      std::vector<std::pair<std::string, std::string>> elsewhere;
      for (const auto& p : w.processes) {
        if (!live(p) || p.node.empty()) continue;
        const auto& node_pool_name = node_pool(p.node);
        if (node_pool_name != r.pool && pools_.count(node_pool_name) != 0)
          elsewhere.emplace_back(node_pool_name, p.node);
      }
      if (!elsewhere.empty()) foreign_[id] = std::move(elsewhere);
    }
  }
  touched_.clear();
  for (auto& [name, p] : pools_) {
    auto& s = out.slices[name];
    s.seq = ++p.seq;
    if (p.full_next) {
      s.work.clear();
      s.removed.clear();
      s.base_seq = 0;
      for (const auto& [id, w] : items)
        if (auto r = routes_.find(id); r != routes_.end() && r->second.pool == name) s.work.push_back(w);
      last_routed_ += s.work.size();
      p.full_next = false;
    } else {
      s.base_seq = p.seq - 1;
    }
  }
  for (const auto& [id, list] : foreign_)
    for (const auto& [pool, node] : list) ++out.slices[pool].foreign_processes[node];
  out.refused.reserve(refused_.size());
  for (const auto& [id, r] : refused_) out.refused.push_back(r);
  return out;
}

std::vector<waiting_np_work> work_slicer::non_preemptable_work() const {
  std::vector<waiting_np_work> out;
  out.reserve(np_.size());
  for (const auto& [id, n] : np_) out.push_back(n);
  return out;
}

messages::work_slice work_slicer::full_slice(const std::string& pool, const item_map& items) {
  messages::work_slice s;
  auto p = pools_.find(pool);
  if (p == pools_.end()) return s;
  s.seq = ++p->second.seq;
  for (const auto& [id, w] : items)
    if (auto r = routes_.find(id); r != routes_.end() && r->second.pool == pool) s.work.push_back(w);
  for (const auto& [id, list] : foreign_)
    for (const auto& [other, node] : list)
      if (other == pool) ++s.foreign_processes[node];
  p->second.full_next = false;
  return s;
}

}  // namespace rmbus::actors
