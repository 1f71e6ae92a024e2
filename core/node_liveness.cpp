#include "core/node_liveness.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace rmbus::core {

const char* to_string(node_status s) {
  switch (s) {
    case node_status::up: return "up";
    case node_status::missing: return "missing";
    case node_status::down: return "down";
  }
  return "unknown";
}

node_liveness::node_liveness(liveness_config cfg) : cfg_(cfg), index_(0, name_hasher{cfg_.name_hash}) {
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
                                                         std::int64_t* heard_before, slot* at) {
  auto [it, inserted] = index_.try_emplace(node, slot{0});
  if (inserted) {
    if (free_.empty()) {
      if (recs_.size() > std::numeric_limits<slot>::max()) {
        index_.erase(it);
        throw std::length_error("node_liveness: more nodes than slots");
      }
      it->second = static_cast<slot>(recs_.size());
      recs_.emplace_back();
    } else {
      it->second = free_.back();
      free_.pop_back();
    }
    auto& rec = recs_[it->second];
    rec = node_rec{};
    rec.name = node;
    rec.used = true;
  }
  if (at != nullptr) *at = it->second;
  return beat(recs_[it->second], inserted, now_ms, heard_before);
}

std::optional<liveness_transition> node_liveness::heartbeat_at(slot at, std::int64_t now_ms,
                                                            std::int64_t* heard_before) {
  return beat(rec_at(at), false, now_ms, heard_before);
}

std::optional<liveness_transition> node_liveness::beat(node_rec& rec, bool inserted, std::int64_t now_ms,
                                                    std::int64_t* heard_before) {
  if (heard_before != nullptr) *heard_before = rec.last_heard_ms;
  const node_status was = rec.status;
  const int counter = rec.counter;
  rec.counter = 0;
  rec.status = node_status::up;
  rec.last_heard_ms = now_ms;
  if (!inserted && was == node_status::up) return std::nullopt;
  liveness_transition t;
  t.node = rec.name;
  t.from = inserted ? node_status::down : was;
  t.to = node_status::up;
  t.first_heard = inserted;
  t.missed = inserted ? 0 : counter;
  t.at_ms = now_ms;
  return t;
}

std::vector<liveness_transition> node_liveness::tick(std::int64_t now_ms, std::vector<machine_id>* missed_more) {
  std::vector<liveness_transition> out;
  for (auto& rec : recs_) {
    if (!rec.used || rec.status == node_status::down) continue;  // forgotten by the watchdog until it speaks again
    // A heartbeat heard less than half an interval before this tick belongs to the interval the tick closes:
    // agents and the watchdog run on separate clocks, and a heartbeat that arrives a little before one tick
    // and a little after the next must not look like a missed one (DUCC's counting alone would call such
    // a node missing; see docs/ducc-differences.md).
    if (rec.counter == 0 && 2 * (now_ms - rec.last_heard_ms) < cfg_.heartbeat_interval_ms) continue;
    ++rec.counter;
    if (missed_more != nullptr && rec.counter >= 2) missed_more->push_back(rec.name);
    const node_status next = status_for(rec.counter);
    if (next != rec.status) {
      out.push_back(liveness_transition{rec.name, rec.status, next, false, rec.counter, now_ms});
      rec.status = next;
      if (next == node_status::down) rec.down_since_ms = now_ms;
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  return out;
}

bool node_liveness::forget(const machine_id& node) {
  const auto it = index_.find(node);
  if (it == index_.end()) return false;
  recs_[it->second] = node_rec{};
  free_.push_back(it->second);
  index_.erase(it);
  return true;
}

std::vector<machine_id> node_liveness::down_since(std::int64_t cutoff_ms) const {
  std::vector<machine_id> out;
  for (const auto& rec : recs_)
    if (rec.used && rec.status == node_status::down && rec.down_since_ms <= cutoff_ms) out.push_back(rec.name);
  std::sort(out.begin(), out.end());
  return out;
}

const node_liveness::node_rec& node_liveness::rec_at(slot at) const {
  if (at >= recs_.size() || !recs_[at].used)
    throw std::out_of_range("node_liveness: slot " + std::to_string(at) + " holds no node");
  return recs_[at];
}

node_liveness::node_rec& node_liveness::rec_at(slot at) {
  return const_cast<node_rec&>(std::as_const(*this).rec_at(at));
}

std::optional<node_liveness::slot> node_liveness::slot_of(const machine_id& node) const {
  const auto it = index_.find(node);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

node_status node_liveness::status(const machine_id& node) const {
  const auto it = index_.find(node);
  return it == index_.end() ? node_status::down : recs_[it->second].status;
}

int node_liveness::missed(const machine_id& node) const {
  const auto it = index_.find(node);
  return it == index_.end() ? 0 : recs_[it->second].counter;
}

node_status node_liveness::status_at(slot at) const { return rec_at(at).status; }

int node_liveness::missed_at(slot at) const { return rec_at(at).counter; }

std::int64_t node_liveness::last_heard_ms(const machine_id& node) const {
  const auto it = index_.find(node);
  return it == index_.end() ? 0 : recs_[it->second].last_heard_ms;
}

std::vector<machine_id> node_liveness::nodes_with(node_status s) const {
  std::vector<machine_id> out;
  for (const auto& rec : recs_)
    if (rec.used && rec.status == s) out.push_back(rec.name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace rmbus::core
