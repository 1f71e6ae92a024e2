#pragma once
// A fake cluster on the bus: node agents that heartbeat, an orchestrator that publishes its full work map and
// carries out the RM's schedule, and an observer of what the RM publishes. Used by the end-to-end tests and
// by the tools' tests (rmbus-sim has its own, richer orchestrator model: tools/sim).
//
// Everything travels the real bus (ZeroMQ through the forwarder's two endpoints): the harness knows nothing
// of the RM's internals. Every `period` the driver thread publishes one heartbeat per live node and one work
// map. The orchestrator model follows rm.state as DUCC's orchestrator does: a share "new" becomes a running
// process with that share id on that node (initialized at once, so the job may expand), a share "preempt" or
// "evict" makes its process vanish from the next map; a job with a process is "running".
//
// Fencing (docs/protocol.md 4.8), as every orchestrator rmbus ships does: an rm.state whose envelope carries an
// `epoch` is acted on only when that epoch is at least the highest accepted so far; a lower one is refused
// (counted, never followed, never seen by wait_state). Each work map echoes the highest accepted epoch as
// `rm_epoch`. With HA off no epoch ever arrives and nothing changes.
//
// Thread-safety: every public member may be called from any thread (one mutex); waits use a condition
// variable with a deadline, never a bare sleep.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bus/curve.hpp"
#include "bus/subscriber.hpp"
#include "messages/rm_cycle.hpp"
#include "messages/rm_event.hpp"
#include "messages/rm_nodes.hpp"
#include "messages/rm_schedule_changes.hpp"
#include "messages/rm_state.hpp"
#include "messages/workmap.hpp"
#include "messages/workmap_delta.hpp"

namespace rmbus::test_support {

struct cluster_options {
  // One forwarder's sides, or several separated by commas: the agents and the orchestrator publish through
  // every one, the observer drops the copies (docs/bus.md, "Several forwarders").
  std::string bus_pub = "tcp://127.0.0.1:5560";
  std::string bus_sub = "tcp://127.0.0.1:5561";
  std::chrono::milliseconds period{200};
  std::string name = "fake-cluster";
  std::optional<bus::curve_client> curve;  // CURVE keys (roles agent,orchestrator); none: CURVE off
  // Delta work maps (docs/protocol.md 4.2.1): every period a delta of the changes since the map published
  // before (possibly empty), a full map every `full_map_every` periods, first, and at once after an rm.events
  // `workmap_resync` or `workmap_delta_refused` naming this cluster. Off: a full map every period.
  bool deltas = false;
  int full_map_every = 10;
  // The orchestrator and observer read the schedule from rm.schedule.changes (docs/protocol.md 4.3.1, the RM
  // configured with [bus] schedule_changes_full_every) instead of rm.state: it acts on the followed schedule
  // after every message applied (messages/schedule_follower.hpp), and on nothing while it waits for a full one.
  bool schedule_changes = false;
  // The orchestrator's own check of the RM's one promise (docs/reliability.md): with a quantum, after every
  // schedule it acts on it counts the nodes whose processes (running, starting, or being launched) hold more
  // quanta (each process ceil(memory / quantum)) than the node has (memory / quantum). 0: not checked.
  std::uint64_t quantum_mb = 0;
  // On accepting an epoch above the highest it accepted, publish the next work map at once (it echoes the new
  // epoch), rather than at the next period: a new HA active grants nothing until it sees that echo.
  bool map_on_new_epoch = true;
  // The orchestrator lists its processes without node_memory_mb, as DUCC's does (it has no node sizes).
  bool omit_node_memory = false;
};

// A job to submit; the harness fills in the rest of the work item (state, processes, submission time).
struct job_spec {
  std::string id;
  std::string user;
  std::string class_name;  // empty: default class for its kind
  std::uint64_t memory_mb = 1024;
  messages::work_kind kind = messages::work_kind::job;
  std::uint64_t max_processes = 0;
  std::uint64_t items_total = 1000;
};

class fake_cluster {
 public:
  explicit fake_cluster(cluster_options options);
  ~fake_cluster();  // stop()
  fake_cluster(const fake_cluster&) = delete;
  fake_cluster& operator=(const fake_cluster&) = delete;

  void start();
  void stop();

  // ---- agents
  void add_node(const std::string& name, std::uint64_t memory_mb);
  void set_alive(const std::string& name, bool alive);  // a dead node stops heartbeating
  void set_quiesced(const std::string& name, bool quiesced);  // the agent drains: heartbeats say quiesced

  // ---- orchestrator
  void submit(const job_spec& job);
  void complete(const std::string& job_id);
  // The orchestrator's progress figures for a job from the next work map on (the numbers its prediction uses).
  void set_progress(const std::string& job_id, std::uint64_t items_done, std::uint64_t item_ms);
  // A process the orchestrator already runs (e.g. from before the RM started): it is in every work map.
  void adopt_process(const std::string& job_id, const std::string& share_id, const std::string& node);
  messages::workmap workmap() const;  // what the orchestrator would publish now
  // A slow orchestrator: while held, shares it sees as new are queued instead of started (it is still
  // launching them), and one preempted or evicted meanwhile leaves the queue; release starts the queue.
  void hold_starts();
  void release_starts();
  std::size_t starts_held() const;
  // While paused the orchestrator publishes no work map (agents still heartbeat).
  void pause_maps(bool paused);
  // Delta mode: the next delta is lost on the way (its seq is consumed, it never reaches the bus), so the RM
  // sees the delta after it build on a map it never had.
  void lose_next_delta();
  // Publishes, before the next period's map, a body of the orchestrator's work-map stream made by `encode`
  // from the envelope and the seq of the map published last (the base a delta would name). For bad deltas.
  void inject_workmap(std::function<std::string(const messages::envelope&, std::uint64_t base_seq)> encode);
  struct map_counts {
    std::uint64_t full = 0, deltas = 0, lost = 0, injected = 0, resyncs = 0;  // resyncs: answered with a full map
    std::uint64_t last_full_seq = 0;  // envelope seq of the last full map published
  };
  // Delta mode: the next period publishes a full map (as after a resync request).
  void send_full_map_next();
  map_counts maps_sent() const;

  // ---- observations
  std::optional<messages::rm_state> last_state() const;
  std::optional<messages::rm_nodes> last_nodes() const;
  std::vector<messages::rm_event> events() const;
  std::vector<messages::rm_cycle> cycles() const;  // every rm.cycle received, in order
  std::uint64_t states_seen() const;
  // ---- fencing
  std::optional<std::uint64_t> accepted_epoch() const;  // the highest epoch acted on; none: no epoch seen
  std::uint64_t states_refused() const;                  // rm.state messages refused for a lower epoch
  // Every rm.state acted on, in order: its epoch (0 when it carried none) and its envelope src.
  struct acted_state {
    std::uint64_t epoch = 0;
    std::string src;
    std::uint64_t cycle = 0;
  };
  std::vector<acted_state> acted() const;
  // The envelope of the last rm.state acted on (epoch, src).
  std::optional<messages::envelope> last_state_envelope() const;
  // rm.state messages handed to the cluster with an envelope (src, seq) it had already been handed: must stay
  // 0, also when the cluster is connected to several forwarders (bus_pub / bus_sub lists) and receives every
  // message once through each.
  std::uint64_t states_repeated() const;
  // With schedule_changes: messages of rm.schedule.changes that could not be applied (the follower waited for
  // a full one), and those applied.
  std::uint64_t schedule_changes_waiting() const;
  std::uint64_t schedule_changes_applied() const;
  // Heartbeats the agents published (each once, whatever the number of forwarders it goes through).
  std::uint64_t heartbeats_sent() const;
  // The cluster's bus subscriber's counters (received, duplicates dropped, gaps...).
  bus::subscriber_stats bus_stats() const;
  // With cluster_options::quantum_mb: the times a node was seen above its order after a schedule was acted on,
  // and the first such sighting in words ("node n04 holds 4 quanta of 2: ...").
  struct over_order_count {
    std::uint64_t sightings = 0;
    std::string first;
  };
  over_order_count over_order() const;
  // `new` shares of the schedules acted on that named a node the last rm.nodes received before them reported
  // down (the RM's rule: a node reported down takes nothing new), and the first such share in words.
  struct new_on_down_count {
    std::uint64_t shares = 0;
    std::string first;
  };
  new_on_down_count new_on_down() const;
  // Waits until a NEW rm.state (one received after the call) satisfies `pred`, or the deadline passes.
  bool wait_state(const std::function<bool(const messages::rm_state&)>& pred, std::chrono::milliseconds timeout);
  bool wait_nodes(const std::function<bool(const messages::rm_nodes&)>& pred, std::chrono::milliseconds timeout);
  // Called with EVERY rm.state received (after the orchestrator followed it), on the subscriber's thread with
  // the cluster's lock held: it must not call back into the cluster. For checks that may not skip a round.
  void set_state_observer(std::function<void(const messages::rm_state&)> observer);
  // The same, with the envelope the state came in, the share ids of every process the orchestrator runs right
  // after following it (started, or queued to start while it holds starts: what the state's shares stand for in
  // memory), and the epoch echoed by the work map the state's round answered (its workmap_seq; none when the
  // state names no map or the map is not among the last 10,000). Replaces the plain observer.
  struct acted_view {
    const messages::rm_state& state;
    const messages::envelope& env;
    const std::set<std::string>& processes;
    std::optional<std::uint64_t> map_echo;
  };
  void set_acted_observer(std::function<void(const acted_view&)> observer);
  // Waits until an rm.events event received so far (or later) satisfies `pred`; returns it, or nothing when
  // the deadline passes first.
  std::optional<messages::rm_event> wait_event(const std::function<bool(const messages::rm_event&)>& pred,
                                               std::chrono::milliseconds timeout);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// ---- helpers over rm.state for assertions and printing

const messages::job_schedule* find_job(const messages::rm_state& s, const std::string& id);
// Shares of a job with status running or new (the ones it holds and is not giving up).
std::size_t active_shares(const messages::rm_state& s, const std::string& id);
// Shares of a job running under a reclaim deadline (reclaim_at_ms): chosen for preemption, not yet preempted.
std::size_t reclaiming_shares(const messages::rm_state& s, const std::string& id);
// Nodes holding active shares of the job.
std::vector<std::string> nodes_of(const messages::rm_state& s, const std::string& id);
// Problems with the schedule: a share id listed twice, or a node holding more quanta (all listed shares,
// which still occupy space until their processes are gone) than `node_quanta` says it has. Empty when sound.
std::vector<std::string> double_bookings(const messages::rm_state& s, const std::map<std::string, std::uint64_t>& node_quanta);
// A compact multi-line summary for people.
std::string summary(const messages::rm_state& s);

}  // namespace rmbus::test_support
