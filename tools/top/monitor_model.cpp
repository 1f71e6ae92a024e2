#include "tools/top/monitor_model.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <string_view>

namespace rmbus::top {

namespace {

using messages::job_status;
using messages::share_status;

bool holds(share_status s) { return s == share_status::running || s == share_status::new_; }

void add_job(user_summary& u, const messages::job_schedule& j) {
  ++u.jobs;
  u.given = add_capped(u.given, j.given);
  u.demand = add_capped(u.demand, j.demand);
  u.fair_share = add_capped(u.fair_share, j.fair_share);
  // A job the policy caps on purpose wants, for now, what it was given.
  u.wanted = add_capped(u.wanted, j.capped_by.empty() ? j.demand : std::min(j.demand, j.given));
  if (!j.capped_by.empty()) ++u.capped_jobs;
  for (const auto& s : j.shares) {
    if (!holds(s.status)) continue;
    ++u.active;
    u.quanta = add_capped(u.quanta, s.quanta);
  }
}

// How long after `sent_ms` the RM's deadline `at_ms` falls (both on the RM's clock), negative when it has
// passed; bounded (about 35 years) so no value off the bus can overflow the monitor's time arithmetic.
millis until_deadline(std::uint64_t at_ms, std::uint64_t sent_ms) {
  constexpr std::uint64_t bound = std::uint64_t{1} << 40;
  if (at_ms >= sent_ms) return static_cast<millis>(std::min(at_ms - sent_ms, bound));
  return -static_cast<millis>(std::min(sent_ms - at_ms, bound));
}

int attention_rank(job_status s) {
  switch (s) {
    case job_status::pending:
      return 0;
    case job_status::refused:
      return 1;
    case job_status::scheduled:
      return 2;
  }
  return 3;
}

std::string cut_bytes(std::string s, std::size_t n) {
  if (s.size() > n) s.resize(n);
  return s;
}

}  // namespace

std::uint64_t add_capped(std::uint64_t a, std::uint64_t b) {
  return a > std::numeric_limits<std::uint64_t>::max() - b ? std::numeric_limits<std::uint64_t>::max()
                                                           : a + b;
}

void add_sums(user_summary& total, const user_summary& u, bool as_part) {
  total.jobs = add_capped(total.jobs, u.jobs);
  total.active = add_capped(total.active, u.active);
  total.quanta = add_capped(total.quanta, u.quanta);
  total.given = add_capped(total.given, u.given);
  total.demand = add_capped(total.demand, u.demand);
  total.fair_share = add_capped(total.fair_share, u.fair_share);
  total.wanted = add_capped(total.wanted, u.wanted);
  total.capped_jobs = add_capped(total.capped_jobs, u.capped_jobs);
  if (!as_part) return;
  ++total.parts;
  total.parts_below += u.below_fair_share() ? 1 : 0;
}

std::uint64_t pool_summary::count(messages::node_state s) const {
  const auto it = nodes_by_state.find(s);
  return it == nodes_by_state.end() ? 0 : it->second;
}

bool user_summary::below_fair_share() const {
  return parts == 0 ? given < std::min(wanted, fair_share) : parts_below > 0;
}

monitor_model::monitor_model(model_limits limits) : limits_(limits) {
  limits_.max_events = std::max<std::size_t>(1, limits_.max_events);
}

void monitor_model::on_state(messages::rm_state state, millis now_ms, std::string src,
                             std::optional<std::uint64_t> sent_at_ms, std::optional<std::uint64_t> epoch) {
  if (state_epoch_ && epoch.value_or(0) < *state_epoch_) {
    ++stale_states_;
    return;
  }
  if (epoch) state_epoch_ = epoch;
  if (state_) previous_state_at_ms_ = state_at_ms_;
  state_ = std::move(state);
  state_src_ = std::move(src);
  state_sent_at_ms_ = sent_at_ms;
  state_at_ms_ = now_ms;
  state_arrival_ = ++arrivals_;
  // Losses are remembered only for jobs the RM still lists.
  if (losses_.empty()) return;
  std::set<std::string_view> ids;
  for (const auto& j : state_->jobs) ids.insert(j.id);
  for (auto it = losses_.begin(); it != losses_.end();)
    it = ids.count(it->first) ? std::next(it) : losses_.erase(it);
}

void monitor_model::on_schedule_changes(const messages::rm_schedule_changes& changes, millis now_ms, std::string src,
                                        std::optional<std::uint64_t> sent_at_ms, std::optional<std::uint64_t> epoch) {
  switch (follower_.take(changes, epoch)) {
    case messages::schedule_follower::outcome::applied:
      on_state(follower_.schedule(), now_ms, std::move(src), sent_at_ms, epoch);
      return;
    case messages::schedule_follower::outcome::waiting: ++changes_waited_; return;
    case messages::schedule_follower::outcome::fenced: ++stale_states_; return;
  }
}

void monitor_model::on_nodes(messages::rm_nodes nodes, millis) {
  nodes_ = std::move(nodes);
  nodes_arrival_ = ++arrivals_;
}

void monitor_model::on_cycle(messages::rm_cycle cycle, millis now_ms) {
  if (cycles_.size() >= limits_.max_pools && !cycles_.count(cycle.pool)) return;
  auto pool = cycle.pool;
  cycles_[pool] = {std::move(cycle), now_ms};
}

void monitor_model::on_event(const messages::rm_event& event, millis now_ms) {
  std::string text;
  for (const auto& [key, value] : event.detail) {
    if (text.size() >= limits_.max_event_text) break;
    if (!text.empty()) text += ' ';
    text += key;
    text += '=';
    text += value;
  }
  // Kinds are an open set: counted up to a bound, then only listed.
  const auto kind = cut_bytes(event.kind, 64);
  if (events_by_kind_.count(kind) || events_by_kind_.size() < limits_.max_event_kinds)
    ++events_by_kind_[kind];
  remember_loss(event, now_ms);
  if (auto why = messages::not_scheduling_of(event)) {
    // Sent every report period while the RM is idle: listed once per reason (again after a round), so the
    // recent events are not a column of the same line.
    const bool in_stretch = not_scheduling_ && not_scheduling_arrival_ > state_arrival_;
    const bool again = in_stretch && not_scheduling_->reason == why->reason;
    // The report period is measured within one stretch without rounds, never across the rounds between two.
    previous_not_scheduling_at_ms_ = in_stretch ? std::optional<millis>{not_scheduling_at_ms_} : std::nullopt;
    not_scheduling_ = std::move(why);
    not_scheduling_at_ms_ = now_ms;
    not_scheduling_arrival_ = ++arrivals_;
    if (again) return;
  }
  remember_event(now_ms, kind, cut_bytes(std::move(text), limits_.max_event_text));
}

std::optional<messages::not_scheduling> monitor_model::not_scheduling(millis now_ms) const {
  if (!not_scheduling_ || not_scheduling_arrival_ < state_arrival_) return std::nullopt;
  return messages::aged(*not_scheduling_,
                        static_cast<std::uint64_t>(std::max<millis>(0, now_ms - not_scheduling_at_ms_)));
}

void monitor_model::remember_loss(const messages::rm_event& event, millis now_ms) {
  const bool preempt = event.kind == messages::event_kinds::preempt;
  if (!preempt && event.kind != messages::event_kinds::evict) return;
  const auto job = event.detail.find("job");
  if (job == event.detail.end()) return;
  if (!losses_.count(job->second) && losses_.size() >= limits_.max_job_records) return;
  auto& l = losses_[job->second];
  ++(preempt ? l.preempted : l.evicted);
  l.last_at_ms = now_ms;
}

void monitor_model::on_bad_message(const std::string& what, millis now_ms, bool counted_by_bus) {
  if (!counted_by_bus) ++undecodable_;
  remember_event(now_ms, "bad_message", cut_bytes("received here: " + what, limits_.max_event_text));
}

void monitor_model::remember_event(millis now_ms, std::string kind, std::string text) {
  events_.push_front({now_ms, std::move(kind), std::move(text)});
  while (events_.size() > limits_.max_events) events_.pop_back();
}

void monitor_model::set_bus(bus_health health) { bus_ = std::move(health); }

bus_health monitor_model::bus() const {
  auto b = bus_;
  b.bad_messages = add_capped(b.bad_messages, undecodable_);
  return b;
}

bool monitor_model::complete() const {
  return nodes_ && (state_ || (not_scheduling_ && not_scheduling_arrival_ > state_arrival_));
}

bool monitor_model::round_complete() const {
  if (!complete()) return false;
  if (!state_ || not_scheduling_arrival_ > state_arrival_) return true;  // idle: no round to wait for
  if (nodes_arrival_ < state_arrival_) return false;
  for (const auto& n : nodes_->nodes) {
    const auto c = cycles_.find(n.pool);
    if (c == cycles_.end() || c->second.cycle.cycle != state_->cycle) return false;
  }
  return true;
}

std::optional<millis> monitor_model::round_interval() const {
  if (!state_ || !previous_state_at_ms_) return std::nullopt;
  return std::max<millis>(0, state_at_ms_ - *previous_state_at_ms_);
}

bool monitor_model::stale(millis now_ms) const {
  if (not_scheduling_ && not_scheduling_arrival_ > state_arrival_) {
    const millis age = now_ms - not_scheduling_at_ms_;
    const millis period =
        previous_not_scheduling_at_ms_ ? not_scheduling_at_ms_ - *previous_not_scheduling_at_ms_ : 5000;
    return age > 2000 && age > 3 * period;
  }
  const auto interval = round_interval();
  if (!interval) return false;
  const millis age = now_ms - state_at_ms_;
  return age > 2000 && age > 3 * *interval;
}

std::vector<pool_summary> monitor_model::pools() const {
  std::map<std::string, pool_summary> by_pool;
  if (nodes_) {
    for (const auto& n : nodes_->nodes) {
      auto& p = by_pool[n.pool];
      p.pool = n.pool;
      ++p.nodes;
      ++p.nodes_by_state[n.state];
      // Only nodes up take work: a missing node's quanta are not there to be had.
      if (n.state == messages::node_state::up) {
        p.quanta = add_capped(p.quanta, n.quanta);
        p.free_quanta = add_capped(p.free_quanta, n.free_quanta);
      }
    }
  }
  std::vector<pool_summary> out;
  out.reserve(by_pool.size());
  for (auto& [name, p] : by_pool) out.push_back(std::move(p));
  return out;
}

std::vector<class_summary> monitor_model::classes() const {
  // class -> group ("" for none) -> user
  std::map<std::string, std::map<std::string, std::map<std::string, user_summary>>> by_class;
  if (state_)
    for (const auto& j : state_->jobs) {
      auto& u = by_class[j.class_name][j.group][j.user];
      u.user = j.user;
      add_job(u, j);
    }
  std::vector<class_summary> out;
  out.reserve(by_class.size());
  for (auto& [name, groups] : by_class) {
    class_summary c;
    c.class_name = name;
    for (auto& [group, users] : groups) {
      group_summary g;
      g.group = group;
      for (auto& [user, u] : users) {
        add_sums(g.total, u);
        g.users.push_back(std::move(u));
      }
      add_sums(c.total, g.total);
      if (group.empty())
        c.users = std::move(g.users);
      else
        c.groups.push_back(std::move(g));
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::uint64_t monitor_model::reclaiming() const {
  std::uint64_t n = 0;
  if (state_)
    for (const auto& j : state_->jobs)
      for (const auto& s : j.shares)
        if (holds(s.status) && s.reclaim_at_ms) ++n;
  return n;
}

std::vector<job_row> monitor_model::jobs() const {
  std::vector<job_row> out;
  if (!state_) return out;
  out.reserve(state_->jobs.size());
  for (const auto& j : state_->jobs) {
    job_row r;
    r.id = j.id;
    r.user = j.user;
    r.class_name = j.class_name;
    r.status = j.status;
    r.reason = j.reason;
    r.memory_mb = j.memory_mb;
    for (const auto& s : j.shares) {
      ++(holds(s.status) ? r.active : r.leaving);
      // A share already leaving is counted there, not as one still to be reclaimed.
      if (!holds(s.status) || !s.reclaim_at_ms) continue;
      ++r.reclaiming;
      if (!state_sent_at_ms_) continue;
      const millis at = state_at_ms_ + until_deadline(*s.reclaim_at_ms, *state_sent_at_ms_);
      r.reclaim_at_ms = r.reclaim_at_ms ? std::min(*r.reclaim_at_ms, at) : at;
    }
    r.given = j.given;
    r.demand = j.demand;
    r.fair_share = j.fair_share;
    r.capped_by = j.capped_by;
    if (const auto l = losses_.find(j.id); l != losses_.end()) r.losses = l->second;
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const job_row& a, const job_row& b) {
    const int ra = attention_rank(a.status), rb = attention_rank(b.status);
    return ra != rb ? ra < rb : a.id < b.id;
  });
  return out;
}

}  // namespace rmbus::top
