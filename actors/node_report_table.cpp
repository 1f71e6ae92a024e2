#include "actors/node_report_table.hpp"

#include <algorithm>

namespace rmbus::actors {

messages::node_state node_state_of(const messages::machine_summary* m, const messages::node_entry* e) {
  if (e != nullptr && e->state == messages::node_liveness::down) return messages::node_state::down;
  if (e != nullptr && e->state == messages::node_liveness::missing) return messages::node_state::missing;
  if (m == nullptr) return e != nullptr && e->quiesced ? messages::node_state::quiesced : messages::node_state::up;
  switch (m->state) {
    case messages::machine_status::varied_off: return messages::node_state::varied_off;
    case messages::machine_status::blacklisted: return messages::node_state::blacklisted;
    case messages::machine_status::down:
      // The pool saw it down, the intake sees it back: back, the pool not told yet.
      if (e != nullptr) return e->quiesced ? messages::node_state::quiesced : messages::node_state::up;
      return messages::node_state::down;
    case messages::machine_status::up: break;
  }
  return m->quiesced ? messages::node_state::quiesced : messages::node_state::up;
}

namespace {

// A node the intake knows, with what its pool's plan says of it (`m`, if any).
messages::node_report report_of(const std::string& name, const messages::node_entry& e,
                                const messages::machine_summary* m) {
  messages::node_report r;
  r.node = name;
  r.missed = e.missed;
  r.pool = e.pool;
  if (m != nullptr) {
    r.nodepool = m->nodepool;
    r.memory_mb = m->memory_mb;
    r.quanta = m->quanta;
    r.free_quanta = m->free_quanta;
  } else {
    // Not in a pool's plan yet: what the intake knows, its quanta from the first heartbeat on.
    r.nodepool = e.nodepool;
    r.memory_mb = e.memory_mb;
    r.quanta = e.quanta;
    r.free_quanta = 0;  // unknown until its pool's plan says: never promise memory that may be held
  }
  r.state = node_state_of(m, &e);
  return r;
}

}  // namespace

node_replica::outcome node_report_table::apply(const std::string& src, const messages::node_changes& batch,
                                               std::vector<liveness_change>& changes) {
  const auto seq = liveness_.seq();
  const auto from = liveness_.source();
  const auto outcome = liveness_.apply(src, batch, changes);
  forget_machines(changes);
  if (liveness_.seq() == seq && liveness_.source() == from) return outcome;  // kept or a duplicate: no change
  if (liveness_.seq() == batch.seq && seq + 1 == batch.seq && from == src) {
    // This batch alone was applied: it names every node it changed.
    for (const auto& e : batch.changed) touch(e.node);
    if (!batch.forgotten.empty()) rebuild_ = true;
  } else {
    rebuild_ = true;  // a first batch, or batches kept earlier applied with it
  }
  return outcome;
}

node_replica::outcome node_report_table::apply(const std::string& src, const messages::node_snapshot& snap,
                                               std::vector<liveness_change>& changes) {
  const auto outcome = liveness_.apply(src, snap, changes);
  forget_machines(changes);
  rebuild_ = true;
  return outcome;
}

void node_report_table::touch(const std::string& node) {
  if (rebuild_) return;
  if (position_.count(node) == 0) rebuild_ = true;  // a node the report does not list yet
  else touched_.push_back(node);
}

void node_report_table::forget_machines(const std::vector<liveness_change>& changes) {
  for (const auto& c : changes)
    if (c.forgotten)
      if (auto pool = machines_.find(c.pool); pool != machines_.end()) {
        pool->second.erase(c.node);
        node_order_.erase(c.node);
      }
}

void node_report_table::take_machines(const messages::pool_plan& plan) {
  auto& table = machines_[plan.pool];
  if (plan.machines_complete) {
    for (const auto& [node, m] : table) node_order_.erase(node);
    table.clear();
    rebuild_ = true;
  }
  for (const auto& m : plan.machines) {
    table.insert_or_assign(m.node, m);
    node_order_.insert_or_assign(m.node, m.quanta);
    touch(m.node);
  }
}

std::optional<std::uint64_t> node_report_table::order_of(std::string_view node) const {
  auto it = node_order_.find(node);
  if (it == node_order_.end()) return std::nullopt;
  return it->second;
}

const messages::machine_summary* node_report_table::machine(std::string_view node) const {
  for (const auto& [pool, table] : machines_)
    if (auto it = table.find(node); it != table.end()) return &it->second;
  return nullptr;
}

std::optional<messages::node_report> node_report_table::entry_of(const std::string& node) const {
  const auto* e = liveness_.find(node);
  if (e == nullptr) return std::nullopt;
  const messages::machine_summary* m = nullptr;
  if (auto pool = machines_.find(e->pool); pool != machines_.end())
    if (auto it = pool->second.find(node); it != pool->second.end()) m = &it->second;
  return report_of(node, *e, m);
}

std::shared_ptr<const messages::payload> node_report_table::report() {
  if (!rebuild_ && report_) {
    if (!touched_.empty() && report_.use_count() > 1)
      report_ = std::make_shared<messages::payload>(*report_);  // the last one is still being encoded
    auto& report = std::get<messages::rm_nodes>(*report_);
    for (const auto& node : touched_) {
      auto entry = entry_of(node);
      if (!entry) {  // listed as a machine the intake does not know: rare, rebuilt below
        rebuild_ = true;
        break;
      }
      const auto at = position_.at(node);
      report.encoded_nodes[at] = messages::encode_node_entry(*entry);
      report.nodes[at] = std::move(*entry);
    }
  }
  touched_.clear();
  if (rebuild_ || !report_) {
    report_ = std::make_shared<messages::payload>(build_report());
    auto& report = std::get<messages::rm_nodes>(*report_);
    // Each entry packed once here; later publications pack only the entries of nodes that changed.
    report.encoded_nodes.reserve(report.nodes.size());
    for (const auto& n : report.nodes) report.encoded_nodes.push_back(messages::encode_node_entry(n));
    const auto& nodes = report.nodes;
    position_.clear();
    position_.reserve(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) position_.emplace(nodes[i].node, i);
    if (position_.size() != nodes.size()) position_.clear();  // a node listed twice (two pools hold it)
    rebuild_ = position_.empty() && !nodes.empty();
  }
  return report_;
}

messages::rm_nodes node_report_table::build_report() const {
  messages::rm_nodes out;
  out.nodes.reserve(liveness_.nodes().size());
  const machine_table* pool_table = nullptr;  // the last node's pool's machines: most neighbours share a pool
  const std::string* pool_name = nullptr;
  std::size_t matched = 0;  // machines listed with their node above
  for (const auto& [name, e] : liveness_.nodes()) {
    if (pool_name == nullptr || *pool_name != e.pool) {
      auto pool = machines_.find(e.pool);
      pool_table = pool == machines_.end() ? nullptr : &pool->second;
      pool_name = &e.pool;
    }
    const messages::machine_summary* m = nullptr;
    if (pool_table != nullptr)
      if (auto it = pool_table->find(name); it != pool_table->end()) m = &it->second;
    if (m != nullptr) ++matched;
    out.nodes.push_back(report_of(name, e, m));
  }
  // Machines not listed above: only when some are (the common case, every machine under its node, costs
  // no lookup in the intake's table).
  std::size_t machines = 0;
  for (const auto& [pool, table] : machines_) machines += table.size();
  if (matched == machines) return out;
  bool extra = false;
  for (const auto& [pool, table] : machines_)
    for (const auto& [name, m] : table) {
      if (liveness_.find(name) != nullptr) continue;
      messages::node_report r;
      r.node = name;
      r.pool = pool;
      r.nodepool = m.nodepool;
      r.memory_mb = m.memory_mb;
      r.quanta = m.quanta;
      r.free_quanta = m.free_quanta;
      r.state = node_state_of(&m, nullptr);
      out.nodes.push_back(std::move(r));
      extra = true;
    }
  if (extra)
    std::sort(out.nodes.begin(), out.nodes.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  return out;
}

}  // namespace rmbus::actors
