#pragma once
// What rmbus-top knows of a running RM, folded from what the RM publishes for monitors.
//
// rm.state and rm.nodes are complete snapshots, so each one REPLACES the last (a monitor started after the
// RM is whole after one round); rm.cycle is kept per pool (the last one); rm.events and bad messages go to a
// bounded ring of recent events. Bus health (sequence gaps, restarts, bad messages) comes from the monitor's
// own subscriber. Everything derived (per pool node counts, per class and user totals) is computed from
// those snapshots on demand, so nothing can drift.
//
// Times are milliseconds of a clock the caller passes in; the model reads none. Not thread-safe: one owner.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "messages/rm_cycle.hpp"
#include "messages/rm_event.hpp"
#include "messages/rm_nodes.hpp"
#include "messages/rm_state.hpp"

namespace rmbus::top {

struct recent_event {
  std::int64_t at_ms = 0;
  std::string kind;
  std::string text;  // the event's details, "key=value" in key order
};

struct bus_health {
  std::uint64_t received = 0;
  std::uint64_t gaps = 0;
  std::uint64_t missing = 0;  // messages skipped over by the gaps
  std::uint64_t restarts = 0;
  std::uint64_t bad_messages = 0;  // rejected by the subscriber or by the monitor's decoders
};

struct pool_summary {
  std::string pool;
  std::map<messages::node_state, std::uint64_t> nodes_by_state;
  std::uint64_t nodes = 0;
  std::uint64_t quanta = 0;       // of nodes that are up
  std::uint64_t free_quanta = 0;  // of nodes that are up
};

// One user in one class: sums over its jobs. Processes are shares running or new (held, not being removed).
struct user_summary {
  std::string class_name;
  std::string user;
  std::uint64_t jobs = 0;
  std::uint64_t processes = 0;
  std::uint64_t quanta = 0;
  std::uint64_t given = 0;
  std::uint64_t demand = 0;
  std::uint64_t fair_share = 0;
};

class monitor_model {
 public:
  explicit monitor_model(std::size_t max_events = 64);

  void on_state(messages::rm_state state, std::int64_t now_ms);
  void on_nodes(messages::rm_nodes nodes, std::int64_t now_ms);
  void on_cycle(messages::rm_cycle cycle);
  void on_event(const messages::rm_event& event, std::int64_t now_ms);
  // A message the monitor could not decode, listed as an event and counted; one the bus subscriber
  // rejected is listed only (the subscriber's own count arrives through set_bus).
  void on_bad_message(const std::string& what, std::int64_t now_ms, bool counted_by_bus = false);
  void set_bus(const bus_health& health);

  const std::optional<messages::rm_state>& state() const { return state_; }
  const std::optional<messages::rm_nodes>& nodes() const { return nodes_; }
  std::int64_t state_at_ms() const { return state_at_ms_; }
  const std::map<std::string, messages::rm_cycle>& cycles() const { return cycles_; }
  const std::deque<recent_event>& events() const { return events_; }  // newest first
  bus_health bus() const;

  std::vector<pool_summary> pools() const;    // by pool name
  std::vector<user_summary> users() const;    // by class, then user

 private:
  std::size_t max_events_;
  std::optional<messages::rm_state> state_;
  std::int64_t state_at_ms_ = 0;
  std::optional<messages::rm_nodes> nodes_;
  std::map<std::string, messages::rm_cycle> cycles_;
  std::deque<recent_event> events_;
  bus_health bus_;
  std::uint64_t undecodable_ = 0;
};

}  // namespace rmbus::top
