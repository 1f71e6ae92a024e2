#include "tools/top/monitor_model.hpp"

#include <algorithm>

namespace rmbus::top {

namespace {

bool holds(messages::share_status s) {
  return s == messages::share_status::running || s == messages::share_status::new_;
}

}  // namespace

monitor_model::monitor_model(std::size_t max_events) : max_events_(std::max<std::size_t>(1, max_events)) {}

void monitor_model::on_state(messages::rm_state state, std::int64_t now_ms) {
  state_ = std::move(state);
  state_at_ms_ = now_ms;
}

void monitor_model::on_nodes(messages::rm_nodes nodes, std::int64_t) { nodes_ = std::move(nodes); }

void monitor_model::on_cycle(messages::rm_cycle cycle) {
  // Bounded: a pool name off the bus must not grow the table without end.
  constexpr std::size_t max_pools = 256;
  if (cycles_.size() >= max_pools && !cycles_.count(cycle.pool)) return;
  auto pool = cycle.pool;
  cycles_[pool] = std::move(cycle);
}

void monitor_model::on_event(const messages::rm_event& event, std::int64_t now_ms) {
  std::string text;
  for (const auto& [k, v] : event.detail) {
    if (!text.empty()) text += ' ';
    text += k + "=" + v;
  }
  events_.push_front({now_ms, event.kind, std::move(text)});
  if (events_.size() > max_events_) events_.pop_back();
}

void monitor_model::on_bad_message(const std::string& what, std::int64_t now_ms, bool counted_by_bus) {
  if (!counted_by_bus) ++undecodable_;
  events_.push_front({now_ms, "bad_message", what});
  if (events_.size() > max_events_) events_.pop_back();
}

void monitor_model::set_bus(const bus_health& health) { bus_ = health; }

bus_health monitor_model::bus() const {
  bus_health b = bus_;
  b.bad_messages += undecodable_;
  return b;
}

std::vector<pool_summary> monitor_model::pools() const {
  std::map<std::string, pool_summary> by_pool;
  if (nodes_) {
    for (const auto& n : nodes_->nodes) {
      auto& p = by_pool[n.pool];
      p.pool = n.pool;
      ++p.nodes;
      ++p.nodes_by_state[n.state];
      if (n.state == messages::node_state::up) {
        p.quanta += n.quanta;
        p.free_quanta += n.free_quanta;
      }
    }
  }
  std::vector<pool_summary> out;
  for (auto& [name, p] : by_pool) out.push_back(std::move(p));
  return out;
}

std::vector<user_summary> monitor_model::users() const {
  std::map<std::pair<std::string, std::string>, user_summary> by_user;
  if (state_) {
    for (const auto& j : state_->jobs) {
      auto& u = by_user[{j.class_name, j.user}];
      u.class_name = j.class_name;
      u.user = j.user;
      ++u.jobs;
      u.given += j.given;
      u.demand += j.demand;
      u.fair_share += j.fair_share;
      for (const auto& s : j.shares) {
        if (!holds(s.status)) continue;
        ++u.processes;
        u.quanta += s.quanta;
      }
    }
  }
  std::vector<user_summary> out;
  for (auto& [key, u] : by_user) out.push_back(std::move(u));
  return out;
}

}  // namespace rmbus::top
