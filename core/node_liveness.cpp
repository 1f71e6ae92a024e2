#include "core/node_liveness.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rmbus::core {

const char* to_string(node_status s) {
  switch (s) {
    case node_status::up: return "up";
    case node_status::missing: return "missing";
    case node_status::down: return "down";
  }
  return "unknown";
}

node_liveness::node_liveness(liveness_config cfg) : cfg_(cfg) {
  if (cfg_.heartbeat_interval_ms <= 0) {
    throw std::invalid_argument("node_liveness: heartbeat interval must be > 0 ms, got " +
                                std::to_string(cfg_.heartbeat_interval_ms));
  }
  if (cfg_.node_stability < 2) {
    throw std::invalid_argument("node_liveness: node stability must be >= 2 ticks, got " +
                                std::to_string(cfg_.node_stability));
  }
}

node_status node_liveness::status_for(int counter) const {
  if (counter >= cfg_.node_stability) return node_status::down;
  if (counter >= 2) return node_status::missing;
  return node_status::up;
}

std::optional<liveness_transition> node_liveness::heartbeat(const machine_id& node, std::int64_t now_ms,
                                                         std::int64_t* heard_before) {
  auto [it, inserted] = nodes_.try_emplace(node);
  node_rec& rec = it->second;
  if (heard_before != nullptr) *heard_before = rec.last_heard_ms;
  const node_status was = rec.status;
  const int counter = rec.counter;
  rec.counter = 0;
  rec.status = node_status::up;
  rec.last_heard_ms = now_ms;
  if (!inserted && was == node_status::up) return std::nullopt;
  liveness_transition t;
  t.node = node;
  t.from = inserted ? node_status::down : was;
  t.to = node_status::up;
  t.first_heard = inserted;
  t.missed = inserted ? 0 : counter;
  t.at_ms = now_ms;
  return t;
}

std::vector<liveness_transition> node_liveness::tick(std::int64_t now_ms) {
  std::vector<liveness_transition> out;
  for (auto& [name, rec] : nodes_) {
    if (rec.status == node_status::down) continue;  // forgotten by the watchdog until it speaks again
    // A heartbeat heard less than half an interval before this tick belongs to the interval the tick closes:
    // agents and the watchdog run on separate clocks, and a heartbeat that arrives a little before one tick
    // and a little after the next must not look like a missed one (DUCC's counting alone would call such
    // a node missing; see docs/ducc-differences.md).
    if (rec.counter == 0 && 2 * (now_ms - rec.last_heard_ms) < cfg_.heartbeat_interval_ms) continue;
    ++rec.counter;
    const node_status next = status_for(rec.counter);
    if (next != rec.status) {
      out.push_back(liveness_transition{name, rec.status, next, false, rec.counter, now_ms});
      rec.status = next;
      if (next == node_status::down) rec.down_since_ms = now_ms;
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  return out;
}

bool node_liveness::forget(const machine_id& node) { return nodes_.erase(node) != 0; }

std::vector<machine_id> node_liveness::down_since(std::int64_t cutoff_ms) const {
  std::vector<machine_id> out;
  for (const auto& [name, rec] : nodes_)
    if (rec.status == node_status::down && rec.down_since_ms <= cutoff_ms) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

node_status node_liveness::status(const machine_id& node) const {
  const auto it = nodes_.find(node);
  return it == nodes_.end() ? node_status::down : it->second.status;
}

int node_liveness::missed(const machine_id& node) const {
  const auto it = nodes_.find(node);
  return it == nodes_.end() ? 0 : it->second.counter;
}

std::int64_t node_liveness::last_heard_ms(const machine_id& node) const {
  const auto it = nodes_.find(node);
  return it == nodes_.end() ? 0 : it->second.last_heard_ms;
}

std::vector<machine_id> node_liveness::nodes_with(node_status s) const {
  std::vector<machine_id> out;
  for (const auto& [name, rec] : nodes_) {
    if (rec.status == s) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace rmbus::core
