#pragma once
// What the simulator writes down while it runs: a time series of samples (one per work-map publication,
// thinned by halves when very long), and the counts that are not time series (preempted and evicted shares,
// preempt / evict events, rm.state rounds received).
//
// A sample joins three views at one scenario time: the orchestrator model's (which work is waiting, how much
// its remaining work could use), the RM's last rm.state (which shares each job holds) and its last rm.nodes
// (how many nodes are up, their quanta and free quanta). From them it derives per user the quanta and
// processes held, and the fair share those users would have (tools/sim/fair_share.hpp) in each top-level
// nodepool, and checks the schedule for double booking (a share listed twice, or a node holding more quanta
// than it has).
//
// A job's pool: that of the nodes its shares are on; else its class's `nodepool` from the scenario (mapped to
// its top-level pool through rm.nodes); else the pool the RM was last seen placing its class's work in; else
// the only pool. Work whose pool is still unknown (several pools, no share yet) is counted as unplaced and
// left out of fair shares until the RM places some work of its class.
//
// Demand (and so fair shares) counts only work the RM lists in rm.state and has not refused, and none of a
// job whose order exceeds every node up in its pool (no machine can hold it: it waits, and takes nothing).
//
// Preemptions and evictions are counted as distinct share ids seen with status preempt / evict in rm.state
// (a share stays listed so until its process is gone, so no snapshot in between is needed to see it), and
// separately as rm.events of those kinds; only for the scenario's own jobs (the RM may still list work of an
// earlier run or of another orchestrator on the bus).
//
// Pure: fed values, no I/O, no clock. Thread-safety: none (one owner).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "messages/rm_event.hpp"
#include "messages/rm_nodes.hpp"
#include "messages/rm_state.hpp"
#include "tools/sim/orchestrator_model.hpp"
#include "tools/sim/scenario.hpp"

namespace rmbus::sim {

struct user_sample {
  std::uint64_t held_quanta = 0;       // active shares (running or new) of all its work
  std::uint64_t held_processes = 0;    // the same, counted in processes
  std::uint64_t fair_held_quanta = 0;  // of which in fair-share classes
  double demand_quanta = 0;            // what its fair-share work could use
  std::uint64_t demand_processes = 0;  // processes all its unfinished work could use (any class)
  double fair_quanta = 0;              // its weighted max-min fair share (fair_share.hpp), per pool summed
  std::uint64_t rm_fair_quanta = 0;    // the RM's own: sum of its jobs' rm.state fair_share x order

  friend bool operator==(const user_sample&, const user_sample&) = default;
};

// One top-level nodepool in a sample (rm.nodes `pool`): quanta of the nodes up, of those held, of those held
// by non-fair-share work, and each user's holdings, demand and fair share IN THIS POOL (same order as
// recorder::users()): fair shares are computed per pool, against that pool's quanta (pools may differ in
// quantum and size; a user can use only the pools of its classes).
struct pool_sample {
  std::uint64_t total_quanta = 0;
  std::uint64_t used_quanta = 0;
  std::uint64_t fixed_quanta = 0;
  std::uint64_t quantum_mb = 0;  // its nodes' memory / quanta (0 when rm.nodes gave no memory)
  std::vector<user_sample> users;

  friend bool operator==(const pool_sample&, const pool_sample&) = default;
};

struct sample {
  std::int64_t t_ms = 0;
  std::size_t nodes_up = 0;        // the RM's view when it sent rm.nodes, else the agents'
  std::uint64_t total_quanta = 0;  // quanta of the nodes that are up
  std::uint64_t used_quanta = 0;   // of which held by some share
  std::uint64_t fixed_quanta = 0;  // held by non-fair-share work (taken off the top for fair shares)
  std::size_t pending_jobs = 0;    // arrived, not finished, and without a process
  std::uint64_t preemptions = 0;   // cumulative distinct shares seen preempt
  std::uint64_t evictions = 0;     // cumulative distinct shares seen evict
  bool double_booked = false;
  std::vector<user_sample> users;            // same order as recorder::users(); the sums over the pools
  std::map<std::string, pool_sample> pools;  // by top-level nodepool, from rm.nodes (empty without it)
  std::size_t unplaced_jobs = 0;  // with demand, but in no known pool yet (left out of fair shares)

  friend bool operator==(const sample&, const sample&) = default;
};

class recorder {
 public:
  static constexpr std::size_t max_samples = 20000;

  // `users`: the scenario's users (one column each, in this order); `classes`: the class table for fair
  // shares; `quantum_mb`: used until an rm.state reveals the RM's quantum (memory_mb / quanta of a share);
  // `job_ids`: the jobs whose preemptions and evictions count (empty: every job).
  recorder(std::vector<std::string> users, std::vector<class_spec> classes, std::uint64_t quantum_mb,
           std::set<std::string> job_ids = {});

  void observe_state(const messages::rm_state& state);
  void observe_event(const messages::rm_event& event);
  // One sample at scenario time t. `state` / `nodes` may be null before the RM has sent them.
  void sample_now(std::int64_t t_ms, const std::vector<job_view>& jobs, const messages::rm_state* state,
                  const messages::rm_nodes* nodes, std::size_t agent_nodes_up);

  const std::vector<std::string>& users() const { return users_; }
  const std::vector<sample>& samples() const { return samples_; }
  std::uint64_t preempted_shares() const { return preempted_.size(); }
  std::uint64_t evicted_shares() const { return evicted_.size(); }
  std::uint64_t preempt_events() const { return preempt_events_; }
  std::uint64_t evict_events() const { return evict_events_; }
  std::uint64_t states_received() const { return states_; }
  std::uint64_t quantum_mb() const { return quantum_mb_; }

 private:
  std::vector<std::string> users_;
  std::vector<class_spec> classes_;
  std::uint64_t quantum_mb_;
  std::vector<sample> samples_;
  std::size_t stride_ = 1;  // keep every stride_-th sample offered (doubles when thinning)
  std::size_t offered_ = 0;
  std::set<std::string> job_ids_;
  std::map<std::string, std::string> class_pool_;  // class -> top-level pool the RM was seen placing it in
  std::set<std::string> preempted_, evicted_;
  std::uint64_t preempt_events_ = 0, evict_events_ = 0, states_ = 0;
};

}  // namespace rmbus::sim
