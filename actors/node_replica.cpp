#include "actors/node_replica.hpp"

#include <algorithm>

namespace rmbus::actors {

const messages::node_entry* node_replica::find(const std::string& node) const {
  auto it = nodes_.find(node);
  return it == nodes_.end() ? nullptr : &it->second;
}

void node_replica::add(const messages::node_entry& e) {
  nodes_.emplace(e.node, e);
  ++pool_sizes_[e.pool];
}

void node_replica::remove(std::map<std::string, messages::node_entry>::iterator it) {
  if (auto p = pool_sizes_.find(it->second.pool); p != pool_sizes_.end() && --p->second == 0) pool_sizes_.erase(p);
  nodes_.erase(it);
}

void node_replica::take(const messages::node_entry& e, std::vector<liveness_change>& changes) {
  auto it = nodes_.find(e.node);
  if (it == nodes_.end()) {
    changes.push_back({e.node, std::nullopt, e.state});
    add(e);
    return;
  }
  if (it->second.state != e.state) changes.push_back({e.node, it->second.state, e.state});
  if (it->second.pool != e.pool) {  // placed anew (its ip moved, or the configuration's pools changed)
    remove(it);
    add(e);
    return;
  }
  it->second = e;
}

void node_replica::apply_batch(const messages::node_changes& batch, std::vector<liveness_change>& changes) {
  for (const auto& e : batch.changed) take(e, changes);
  for (const auto& name : batch.forgotten) {
    auto it = nodes_.find(name);
    if (it == nodes_.end()) continue;
    changes.push_back({name, it->second.state, it->second.state, true, it->second.pool});
    remove(it);
  }
  seq_ = batch.seq;
}

node_replica::outcome node_replica::keep(const std::string& src, const messages::node_changes& batch) {
  if (waiting_.size() >= max_waiting_) waiting_.erase(waiting_.begin());
  waiting_.emplace_back(src, batch);
  if (asked_) return outcome::waiting;
  asked_ = true;
  return outcome::need_snapshot;
}

node_replica::outcome node_replica::apply(const std::string& src, const messages::node_changes& batch,
                                          std::vector<liveness_change>& changes) {
  if (!in_step_) {
    // A reader that was there from the intake's very start needs no snapshot: batch 1 is the whole story.
    if (!asked_ && src_.empty() && batch.seq == 1) {
      in_step_ = true;
      src_ = src;
    } else {
      return keep(src, batch);
    }
  } else if (src != src_ || batch.seq != seq_ + 1) {
    if (src == src_ && batch.seq <= seq_) return outcome::applied;  // a duplicate: already in the table
    in_step_ = false;
    return keep(src, batch);
  }
  apply_batch(batch, changes);
  return outcome::applied;
}

node_replica::outcome node_replica::apply(const std::string& src, const messages::node_snapshot& snap,
                                          std::vector<liveness_change>& changes) {
  // The snapshot is the whole table: nodes it lacks are gone (a restarted intake never heard of them).
  std::map<std::string, messages::node_entry> before;
  before.swap(nodes_);
  pool_sizes_.clear();
  for (const auto& e : snap.nodes) {
    auto it = before.find(e.node);
    if (it == before.end()) changes.push_back({e.node, std::nullopt, e.state});
    else if (it->second.state != e.state) changes.push_back({e.node, it->second.state, e.state});
    if (nodes_.count(e.node) == 0) add(e);  // a name twice in one snapshot: the first one, as before
  }
  for (const auto& [name, e] : before)
    if (nodes_.count(name) == 0) changes.push_back({name, e.state, e.state, true, e.pool});
  src_ = src;
  seq_ = snap.seq;
  in_step_ = true;
  asked_ = false;
  auto kept = std::move(waiting_);
  waiting_.clear();
  std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) { return a.second.seq < b.second.seq; });
  for (const auto& [s, batch] : kept) {
    if (s != src_ || batch.seq <= seq_) continue;
    if (batch.seq != seq_ + 1) {
      // Kept batches were dropped in between: this snapshot is already stale.
      in_step_ = false;
      asked_ = true;
      return outcome::need_snapshot;
    }
    apply_batch(batch, changes);
  }
  return outcome::applied;
}

}  // namespace rmbus::actors
