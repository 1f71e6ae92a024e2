#pragma once
// What every phase of an rmbus-load run shares: the options, the RM's layouts (its processes, endpoints and
// configuration), timing a map to its rm.state, and the figures each phase fills in; and the phases
// themselves, one file each (phase_*.cpp). main.cpp parses the command line, runs the phases and reports.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bus/curve.hpp"
#include "tools/load/bus_clients.hpp"
#include "tools/load/load_cluster.hpp"
#include "tools/load/rm_process.hpp"

namespace zmq {
class context_t;
}

namespace rmbus::load {

// --curve: the key files rmbus-load made, and its own client key (agent, orchestrator and rm: the raw
// ceiling's messages go on an rm.* topic, which the forwarder's role check passes for the rm role).
struct load_keys {
  std::string rm_key, rm_public, split_key[2], keys;
  bus::curve_client client;
};

struct options {
  int nodes = 1000;
  int jobs = 2000;
  int users = 100;
  int runs = 1;
  int maps = 20;
  std::uint64_t seed = 1;
  std::string rmbus;
  std::string work_dir;
  std::set<std::string> phases{"startup", "intake", "latency", "idle", "split", "pools"};
  std::optional<load_keys> keys;  // --curve
  bool accounting = false;        // --accounting: [accounting] on, records in the work folder
  bool health = false;            // --health: [health] on
  bool ha = false;                // --ha: [ha] on in every one-process configuration
  int failovers = 5;              // the failover phase's kills
  int forwarders = 1;             // --forwarders: the RM's own and forwarders - 1 rmbus-proxy processes
  std::string proxy;              // the rmbus-proxy executable, next to rmbus
  int serve_s = 300;              // --serve-s: how long the serve phase keeps the cluster running
  bool no_node_memory = false;    // --no-node-memory: the serve phase's map names no node's size
  int events = 500;               // --events: changes published as deltas in the events phase
  int event_ms = 10;              // --event-ms: between two of them
  // --schedule-changes N: the events phase's orchestrator follows rm.schedule.changes (a full message every N
  // rounds) instead of rm.state, which nobody then subscribes to; 0: rm.state.
  int schedule_changes = 0;
  // --latency-after-settle: the latency phase times its maps after the settle window the first map opens
  // (full rounds, as the RM runs at rest), not inside it (settling rounds, the default: figures stay
  // comparable with earlier ones).
  bool latency_after_settle = false;
  // --events-heartbeat-ms: how often each node's agent heartbeats in the events phase (and the RM is told
  // so). 1000 by default (50,000 a second at 50,000 nodes, on the same cores as the rounds).
  int events_heartbeat_ms = 1000;
  // --preemption-policy: the RM's [scheduling] preemption_policy, "ducc" (its default) or "sparing".
  bool sparing_preemption = false;
  // --events-detail: the events phase also prints each change's latency and each round's stages, so that a
  // slow one in the tail can be told apart from the rest.
  bool events_detail = false;
};

load_keys make_keys(const std::string& work_dir);

double seconds_since(clock_type::time_point t0);
int free_port();
std::string tcp(int port);
// A metric's value from the RM's /metrics (the first line that starts with `name` and a space).
std::optional<double> scrape(int port, const std::string& name);

// The RM processes of one layout, their endpoints and logs.
struct rm_layout {
  int pub = free_port(), sub = free_port(), admin = free_port(), metrics = free_port();
  // --forwarders N: N - 1 rmbus-proxy processes besides the RM's embedded forwarder, and every client (the
  // RM's processes included) connected to all N (docs/bus.md, "Several forwarders").
  std::vector<std::pair<int, int>> proxy_ports;  // (pub, sub) of each rmbus-proxy
  std::vector<std::unique_ptr<rm_process>> proxies;  // not in sample(): what the RM costs is measured
  std::optional<bus::curve_client> curve;  // rmbus-load's client keys, with --curve
  std::vector<std::unique_ptr<rm_process>> procs;
  std::vector<std::vector<std::string>> args;  // procs[i]'s command line, to start it again
  std::string pub_list() const {
    auto list = tcp(pub);
    for (const auto& p : proxy_ports) list += "," + tcp(p.first);
    return list;
  }
  std::string sub_list() const {
    auto list = tcp(sub);
    for (const auto& p : proxy_ports) list += "," + tcp(p.second);
    return list;
  }
  bus_access pub_side() const { return {pub_list(), curve}; }
  bus_access sub_side() const { return {sub_list(), curve}; }
  proc_sample sample() const {
    proc_sample all;
    for (const auto& p : procs) {
      const auto s = p->sample();
      all.cpu_s += s.cpu_s;
      all.rss_kb += s.rss_kb;
      all.peak_rss_kb += s.peak_rss_kb;
    }
    return all;
  }
};

// The runtime settings every rmbus-load configuration shares: the heartbeat interval given, quick stability,
// a long round timeout and limits wide enough for 50,000 nodes; log level warn.
void set_load_runtime(config::runtime_settings& rt, std::int64_t heartbeat_ms);
std::string write_config(const options& o, const load_cluster& c, std::int64_t heartbeat_ms, const std::string& name);
// Starts rmbus in one of the layouts: "one" (every role, 2 threads), "one-1thread", "split" (three
// processes: intake+eviction with the forwarder; differencing, publication and admin; the schedulers).
rm_layout start(const options& o, const std::string& config, const std::string& how);
// Waits until the bus carries a probe node's heartbeat through the RM into rm.nodes (the slow-joiner hop of
// every socket is then behind us), then one more heartbeat interval, so rm.nodes' rate limit is open.
bool wait_ready(zmq::context_t& ctx, const rm_layout& l, observer& obs, std::int64_t heartbeat_ms);

struct latency_result {
  std::vector<double> ms;  // map -> rm.state, per answered map after the first
  double first_ms = 0;     // the first map: the RM recovers every process
  int unanswered = 0;
  std::vector<double> round_ms;  // rm.cycle total (apply_work + schedule) of the pool rounds of those maps
};

// Publishes the cluster's map, follows each rm.state as an orchestrator would, and times every map.
// With `after_settle`, the maps after the first are timed once the settle window it opens is over (REQUIRES:
// `obs` subscribes to rm.events).
// REQUIRES: `orch` connected before wait_ready (a PUB socket drops what it sends before its connection is up).
latency_result measure_latency(stamped_publisher& orch, observer& obs, load_cluster c, int maps,
                               bool after_settle = false);
void print_latency(const std::string& label, const latency_result& r);

struct restart_figures {
  std::size_t running = 0;       // processes running when the RM was killed
  std::size_t refused_jobs = 0;  // work items the restarted RM refused
  std::size_t taken = 0;         // of the running processes, those it preempted or evicted
  double to_whole_ms = -1;       // restart -> the first rm.state listing every running process (-1: never)
};

struct failover_figures {
  std::vector<double> ms;  // kill -> first rm.state of the new epoch
  // A job arriving at the kill: from the first rm.state of the new epoch to the first giving it a share (the new
  // active grants nothing before the orchestrator echoes its epoch, docs/architecture.md "High availability").
  std::vector<double> first_new_ms;
  double active_cpu = -1, standby_cpu = -1;  // at rest, share of one core
  double active_rss_mb = 0, standby_rss_mb = 0;
};

struct events_figures {
  std::vector<double> ms;    // change -> rm.state answering it (or a later map)
  int unanswered = 0;
  std::size_t arrivals = 0, completions = 0, rounds = 0;  // rounds: distinct rm.state answering the changes
  std::uint64_t resyncs = 0;  // full maps the RM asked for (a delta lost or refused), sent at once
  std::vector<double> full_ms;  // full maps of the same cluster, after the changes: the baseline
  std::vector<double> round_ms;  // rm.cycle total of the pool rounds while the changes ran
  std::vector<observer::round_stages> round_stages;  // and their stages
  std::vector<double> changes_listed;  // jobs each rm.schedule.changes (not full) listed and removed
  double rss_mb = 0;
  double rm_cpu = 0;  // the RM's CPU from the first change to the last answer, as a share of one core
};

struct run_figures {
  events_figures events;
  failover_figures failover;
  restart_figures restart;
  double startup_s = -1, absorbed_first_s = -1;
  std::size_t ever_missing = 0;
  double intake_sustained = 0, intake_peak = 0, raw_ceiling = 0;
  bool intake_ceiling_reached = false;  // a step was late: intake_sustained is the RM's own ceiling
  latency_result one, split, pools2, pools1;
  double idle_cpu = -1;
  double rss_mb = 0, peak_rss_mb = 0, idle_rss_mb = 0;
};

// ---- the phases (docs/performance.md, "The running RM") ----
// Startup, intake and latency against one rmbus running every role.
void run_one(const options& o, zmq::context_t& ctx, const load_cluster& c, run_figures& f);
// Idle: heartbeats every 10 s and an unchanged map every 10 s; CPU over 30 s of that.
void run_idle(const options& o, zmq::context_t& ctx, const load_cluster& c, run_figures& f);
// HA failover: rmbus-proxy is the bus, two candidates (rank 0 and 1) on it; agents heartbeat every 10 s (the
// idle phase's rate), the orchestrator fences (messages/epoch_fence.hpp). After the schedule settles, both
// candidates' CPU and memory are sampled for 30 s at rest (an unchanged map every 10 s, as in the idle phase);
// then the active is SIGKILLed `o.failovers` times, each time timed from the kill to the first rm.state of a
// higher epoch (maps every second meanwhile), and started again as a standby, given 15 s to hear every node.
void run_failover(const options& o, zmq::context_t& ctx, const load_cluster& c, failover_figures& f);
// Serve: the cluster kept running for an outside observer (rmbus-web's benchmark, tools/web/bench_web.py):
// rmbus with the cluster's configuration, every node heartbeating each second, and the work map published
// each second, following every schedule as an orchestrator would. One line on stdout names the endpoints;
// then it runs for --serve-s seconds, or until SIGTERM.
void run_serve(const options& o, zmq::context_t& ctx, const load_cluster& c);
void run_restart(const options& o, zmq::context_t& ctx, const load_cluster& c, restart_figures& f);
latency_result run_latency_only(const options& o, zmq::context_t& ctx, const load_cluster& c, const std::string& how);
// Events: the orchestrator publishes one full map (the RM recovers every process), waits out the settle
// window that map opens (rm.events settling / settled), then publishes one change every
// o.event_ms as a delta naming the map before it: a job arrival (a copy of a waiting job of the workload under
// a new id) or a completion (a job with processes leaves the map), alternately. Schedules are not followed
// (their new shares are not started): each change is the orchestrator's one change. rm.state is only peeked
// at (workmap_seq): at 100,000 jobs one takes longer to decode than the gap between two changes.
void run_events(const options& o, zmq::context_t& ctx, const load_cluster& c, events_figures& f);

}  // namespace rmbus::load
