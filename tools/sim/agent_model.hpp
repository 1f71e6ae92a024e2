#pragma once
// The simulated node agents: when each node heartbeats, and when scripted failures take it down and bring
// it back.
//
// Every node keeps its own schedule: its first heartbeat falls at a seeded offset in [0, period) (so a big
// cluster does not heartbeat in one burst), and each next one `period +- jitter` later, the jitter drawn
// uniformly from the node's own std::mt19937_64 (seeded from the scenario seed and the node's position, so a
// node's schedule does not change when other nodes are added after it). A node that is down at a due time
// sends nothing; its schedule runs on, so it resumes at its next due time after coming back.
//
// Failures (scenario [[failure]]): down at down_at_ms; up again at up_at_ms when given; with flap_ms it
// alternates down / up every flap_ms from down_at_ms, until up_at_ms (then up for good) or for ever. Several
// failures of one node combine: it is down while any of them holds it down.
//
// Pure and deterministic: time is passed in (scenario milliseconds); same inputs and seed give the same
// heartbeats and transitions. Thread-safety: none (one owner).

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tools/sim/node_spec.hpp"
#include "tools/sim/scenario.hpp"

namespace rmbus::sim {

struct heartbeat_timing {
  std::int64_t period_ms = 200;  // REQUIRES: >= 1
  std::int64_t jitter_ms = 50;   // REQUIRES: 0 <= jitter_ms < period_ms
};

struct node_transition {
  std::int64_t at_ms = 0;
  std::size_t node = 0;  // index into nodes()
  bool up = false;

  friend bool operator==(const node_transition&, const node_transition&) = default;
};

struct agent_step {
  std::vector<std::size_t> heartbeats;       // nodes that heartbeat in (last, now], each once per due time
  std::vector<node_transition> transitions;  // up/down changes in (last, now], in time order
};

class agent_model {
 public:
  // Failures naming an unknown node are ignored (a parsed scenario has none).
  agent_model(std::vector<node_def> nodes, std::vector<failure_spec> failures, heartbeat_timing timing,
              std::uint64_t seed);

  // Everything due in (last call, now_ms]; the first call covers [0, now_ms]. A node due several times in
  // the interval (a long pause) is listed once per due time.
  agent_step advance(std::int64_t now_ms);

  // Whether the failure script has the node up at time t (pure function of the script).
  bool is_up(std::size_t node, std::int64_t t) const;
  std::size_t nodes_up(std::int64_t t) const;
  // The earliest time something is due after the last advance (a heartbeat or a transition).
  std::int64_t next_due_ms() const;

  const std::vector<node_def>& nodes() const { return nodes_; }

 private:
  struct schedule {
    std::mt19937_64 rng;
    std::int64_t next_ms = 0;
  };
  std::int64_t interval(schedule& s);
  std::int64_t next_transition_after(std::int64_t t) const;  // strictly after t; INT64_MAX if none

  std::vector<node_def> nodes_;
  std::vector<std::vector<failure_spec>> failures_;  // per node
  heartbeat_timing timing_;
  std::vector<schedule> schedules_;
  std::int64_t last_ = -1;
};

}  // namespace rmbus::sim
