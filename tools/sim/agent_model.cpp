#include "tools/sim/agent_model.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace rmbus::sim {

namespace {

constexpr std::int64_t never = std::numeric_limits<std::int64_t>::max();

// SplitMix64: spreads (seed, node position) into well-mixed, independent generator seeds.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

bool failure_has_up(const failure_spec& f, std::int64_t t) {
  if (t < f.down_at_ms) return true;
  if (f.up_at_ms && t >= *f.up_at_ms) return true;
  if (!f.flap_ms) return false;
  return ((t - f.down_at_ms) / *f.flap_ms) % 2 == 1;  // down in even flap periods, up in odd ones
}

// The next time strictly after t at which this failure may change the node's state.
std::int64_t next_change(const failure_spec& f, std::int64_t t) {
  if (t < f.down_at_ms) return f.down_at_ms;
  if (f.up_at_ms && t >= *f.up_at_ms) return never;
  std::int64_t next = never;
  if (f.flap_ms) next = f.down_at_ms + ((t - f.down_at_ms) / *f.flap_ms + 1) * *f.flap_ms;
  if (f.up_at_ms) next = std::min(next, *f.up_at_ms);
  return next;
}

}  // namespace

agent_model::agent_model(std::vector<node_def> nodes, std::vector<failure_spec> failures,
                         heartbeat_timing timing, std::uint64_t seed)
    : nodes_(std::move(nodes)), failures_(nodes_.size()), timing_(timing) {
  timing_.period_ms = std::max<std::int64_t>(1, timing_.period_ms);
  timing_.jitter_ms = std::clamp<std::int64_t>(timing_.jitter_ms, 0, timing_.period_ms - 1);
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < nodes_.size(); ++i) index[nodes_[i].name] = i;
  for (auto& f : failures)
    if (auto it = index.find(f.node); it != index.end()) failures_[it->second].push_back(std::move(f));
  schedules_.reserve(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    schedule s{std::mt19937_64{mix(seed ^ mix(i + 1))}, 0};
    s.next_ms = static_cast<std::int64_t>(s.rng() % static_cast<std::uint64_t>(timing_.period_ms));
    schedules_.push_back(std::move(s));
  }
}

std::int64_t agent_model::interval(schedule& s) {
  const auto span = static_cast<std::uint64_t>(2 * timing_.jitter_ms + 1);
  return timing_.period_ms + static_cast<std::int64_t>(s.rng() % span) - timing_.jitter_ms;
}

bool agent_model::is_up(std::size_t node, std::int64_t t) const {
  if (node >= failures_.size()) return false;
  return std::all_of(failures_[node].begin(), failures_[node].end(),
                     [t](const failure_spec& f) { return failure_has_up(f, t); });
}

std::size_t agent_model::nodes_up(std::int64_t t) const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < nodes_.size(); ++i) n += is_up(i, t) ? 1 : 0;
  return n;
}

std::int64_t agent_model::next_transition_after(std::int64_t t) const {
  std::int64_t next = never;
  for (const auto& per_node : failures_)
    for (const auto& f : per_node) next = std::min(next, next_change(f, t));
  return next;
}

agent_step agent_model::advance(std::int64_t now_ms) {
  agent_step step;
  if (now_ms <= last_) return step;
  // Transitions: walk the candidate change times in order and keep the ones that really change a node.
  for (std::int64_t t = last_; t < now_ms;) {
    const std::int64_t c = next_transition_after(t);
    if (c > now_ms) break;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (failures_[i].empty()) continue;
      const bool before = is_up(i, c - 1), after = is_up(i, c);
      if (before != after) step.transitions.push_back({c, i, after});
    }
    t = c;
  }
  // Heartbeats due in (last, now], sent only if the node is up at that moment.
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    auto& s = schedules_[i];
    for (int guard = 0; s.next_ms <= now_ms; ++guard) {
      if (guard == 1000) {  // a long stall: do not replay thousands of stale heartbeats
        s.next_ms = now_ms + interval(s);
        break;
      }
      if (is_up(i, s.next_ms)) step.heartbeats.push_back(i);
      s.next_ms += interval(s);
    }
  }
  last_ = now_ms;
  return step;
}

std::int64_t agent_model::next_due_ms() const {
  std::int64_t next = next_transition_after(last_);
  for (const auto& s : schedules_) next = std::min(next, s.next_ms);
  return next;
}

}  // namespace rmbus::sim
