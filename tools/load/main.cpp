// rmbus-load: the system benchmark. Fake agents and a fake orchestrator in one C++ process drive a real
// rmbus process over tcp loopback, and measure what users of the whole process feel (docs/performance.md,
// "The running RM"):
//   startup   first heartbeats of every node -> all up in rm.nodes (and nodes ever reported missing)
//   intake    heartbeats per second absorbed into node state as the rate is raised, beside a raw cppzmq
//             PUB/SUB receiver's ceiling for the same bodies through the same forwarder
//   latency   a work map's publication -> the rm.state that answers it (rm.state's workmap_seq)
//   idle      CPU seconds per wall second and resident memory at DUCC's idle rates (/proc)
//   split     latency with the roles split over three processes on one bus
//   pools     four equal top-level pools: 2 actor threads against 1 (the pools' rounds one after another)
//   failover  HA: two candidates ([ha] enabled, default timing) on rmbus-proxy; the active SIGKILLed
//             --failovers times: the kill -> the first rm.state of the new epoch; before that, the standby's and
//             the active's CPU and memory at rest (not in the default set of phases)
// --ha turns [ha] on (one candidate, which takes over) in every one-process configuration, to measure what HA
// costs the active.
//   serve     no measurement: keeps the cluster running for an outside observer (rmbus-web's benchmark)
// --curve runs every phase with CURVE on the bus (docs/bus.md, "Security"): rmbus-load makes fresh key pairs
// in its work folder (the RM's, one rm key per further split process, its own client key), lists them, and
// writes [security] into each configuration. It takes no --key / --server-key as the other tools do: those
// name the keys of an RM running elsewhere, and rmbus-load always starts the RM itself.
// --accounting and --health turn those modules on in every configuration, to measure what they cost.
// Every wait has a deadline; children are killed at the end. Build in Release.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config/render.hpp"
#include "messages/topics.hpp"
#include "tools/load/bus_clients.hpp"
#include "tools/load/load_cluster.hpp"
#include "tools/load/rm_process.hpp"
#include "tools/load/stats.hpp"

using namespace rmbus;
using namespace rmbus::load;
using namespace std::chrono_literals;

namespace {

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
};

load_keys make_keys(const std::string& work_dir) {
  const auto dir = std::filesystem::path(work_dir) / "curve";
  std::filesystem::remove_all(dir);  // write_key_file never replaces a file: fresh keys each run
  std::filesystem::create_directories(dir);
  load_keys k;
  std::string listed;
  auto make = [&](const std::string& name, bus::role_set roles) {
    const auto pair = bus::make_curve_keypair();
    bus::write_key_file(dir / (name + ".key"), pair, true);
    bus::write_key_file(dir / (name + ".pub"), pair, false);
    listed += bus::keys_file_line({pair.public_key, name, roles});
    return pair;
  };
  const auto rm = make("rmbus", bus::roles::rm);
  make("rmbus-2", bus::roles::rm);
  make("rmbus-3", bus::roles::rm);
  k.client = {rm.public_key, make("load", bus::roles::agent | bus::roles::orchestrator | bus::roles::rm)};
  std::ofstream(dir / "keys") << listed;
  k.rm_key = (dir / "rmbus.key").string();
  k.rm_public = (dir / "rmbus.pub").string();
  k.split_key[0] = (dir / "rmbus-2.key").string();
  k.split_key[1] = (dir / "rmbus-3.key").string();
  k.keys = (dir / "keys").string();
  return k;
}


double seconds_since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string tcp(int port) { return "tcp://127.0.0.1:" + std::to_string(port); }

// A metric's value from the RM's /metrics (the first line that starts with `name` and a space).
std::optional<double> scrape(int port, const std::string& name) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_connection_timeout(1, 0);
  cli.set_read_timeout(2, 0);
  auto res = cli.Get("/metrics");
  if (!res || res->status != 200) return std::nullopt;
  std::istringstream in(res->body);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  return std::nullopt;
}

// The RM processes of one layout, their endpoints and logs.
struct rm_layout {
  int pub = free_port(), sub = free_port(), admin = free_port(), metrics = free_port();
  // --forwarders N: N - 1 rmbus-proxy processes besides the RM's embedded forwarder, and every client (the
  // RM's processes included) connected to all N (docs/bus.md, "Several forwarders").
  std::vector<std::pair<int, int>> proxy_ports;  // (pub, sub) of each rmbus-proxy
  std::vector<std::unique_ptr<rm_process>> proxies;  // not in sample(): what the RM costs is measured
  std::optional<bus::curve_client> curve;  // rmbus-load's client keys, with --curve
  std::vector<std::unique_ptr<rm_process>> procs;
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

std::string write_config(const options& o, const load_cluster& c, std::int64_t heartbeat_ms, const std::string& name) {
  const auto& keys = o.keys;
  auto cfg = c.config;
  auto& rt = cfg.runtime;
  if (keys) {
    rt.security.curve = true;
    rt.security.key = keys->rm_key;
    rt.security.keys = keys->keys;
  }
  if (o.accounting) {
    rt.accounting.enabled = true;
    rt.accounting.file = o.work_dir + "/" + name + ".jobs.jsonl";
  }
  rt.health.enabled = o.health;
  rt.ha.enabled = o.ha && name != "split";  // HA elects a head: a split of the head roles is refused
  rt.heartbeat_interval_ms = heartbeat_ms;
  rt.node_stability = 6;
  rt.init_stability = 1;
  rt.orchestrator_publish_ms = 1000;
  rt.round_timeout_ms = 30000;
  rt.log_level = "warn";
  rt.limits.max_body_bytes = 256u << 20;
  rt.limits.max_array_len = 10'000'000;
  rt.limits.max_map_len = 100'000;
  const auto path = o.work_dir + "/" + name + ".toml";
  std::ofstream(path) << config::render(cfg);
  return path;
}

// Starts rmbus in one of the layouts: "one" (every role, 2 threads), "one-1thread", "split" (three
// processes: intake+eviction with the forwarder; differencing, publication and admin; the schedulers).
rm_layout start(const options& o, const std::string& config, const std::string& how) {
  const auto& keys = o.keys;
  rm_layout l;
  if (keys) l.curve = keys->client;
  // With CURVE, the processes that connect to the first one's forwarder hold keys of their own.
  auto own_key = [&](int i) -> std::vector<std::string> {
    if (!keys) return {};
    return {"--key", keys->split_key[i], "--server-key", keys->rm_public};
  };
  auto base = [&](std::vector<std::string> extra) {
    // The intake phase offers each node's heartbeat every few milliseconds (10,000 nodes in turn at up to
    // 600,000 a second): the forwarder would shed those repeats (docs/bus.md "Shedding repeats"), and the phase
    // measures what the RM's intake absorbs, so shedding is off.
    std::vector<std::string> a{"--config", config, "--bus-pub", l.pub_list(), "--bus-sub", l.sub_list(),
                               "--heartbeat-min-gap-ms", "0"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const auto log = o.work_dir + "/rmbus-" + how;
  for (int i = 1; i < o.forwarders; ++i) {
    l.proxy_ports.emplace_back(free_port(), free_port());
    std::vector<std::string> a{"--bus-pub", tcp(l.proxy_ports.back().first), "--bus-sub",
                               tcp(l.proxy_ports.back().second), "--heartbeat-min-gap-ms", "0", "--log-level", "warn"};
    if (keys) {  // the forwarders of one bus serve with one key pair (docs/bus.md, "Several forwarders")
      for (const auto& k : {"--key", keys->rm_key.c_str(), "--keys", keys->keys.c_str()}) a.emplace_back(k);
    }
    l.proxies.push_back(
        std::make_unique<rm_process>(o.proxy, a, o.work_dir + "/rmbus-proxy-" + how + "-" + std::to_string(i) + ".log"));
  }
  if (how == "split") {
    l.procs.push_back(std::make_unique<rm_process>(
        o.rmbus, base({"--roles", "intake,eviction", "--metrics", "127.0.0.1:" + std::to_string(l.metrics)}), log + "-1.log"));
    std::this_thread::sleep_for(300ms);  // its forwarder binds the bus first
    auto second = base({"--roles", "diff,publisher,admin", "--no-forwarder", "--admin", tcp(l.admin), "--metrics", "off"});
    auto third = base({"--roles", "scheduler", "--no-forwarder", "--metrics", "off"});
    for (auto& a : own_key(0)) second.push_back(a);
    for (auto& a : own_key(1)) third.push_back(a);
    l.procs.push_back(std::make_unique<rm_process>(o.rmbus, second, log + "-2.log"));
    l.procs.push_back(std::make_unique<rm_process>(o.rmbus, third, log + "-3.log"));
  } else {
    l.procs.push_back(std::make_unique<rm_process>(
        o.rmbus,
        base({"--admin", tcp(l.admin), "--metrics", "127.0.0.1:" + std::to_string(l.metrics), "--threads",
              how == "one-1thread" ? "1" : "2"}),
        log + ".log"));
  }
  return l;
}

// Waits until the bus carries a probe node's heartbeat through the RM into rm.nodes (the slow-joiner hop of
// every socket is then behind us), then one more heartbeat interval, so rm.nodes' rate limit is open.
bool wait_ready(zmq::context_t& ctx, const rm_layout& l, observer& obs, std::int64_t heartbeat_ms) {
  stamped_publisher agents{ctx, l.pub_side(), "rmbus-load.probe"};
  messages::heartbeat probe{"load-probe", "10.9.9.9", 1024, {}, {}, {}};
  const auto deadline = clock_type::now() + 60s;
  while (clock_type::now() < deadline) {
    agents.publish(std::string{messages::topics::heartbeat}, probe);
    if (obs.wait([&] { return obs.probe_seen; }, 200ms)) {
      obs.wait([] { return false; }, std::chrono::milliseconds(heartbeat_ms + 100));
      return true;
    }
  }
  return false;
}

struct latency_result {
  std::vector<double> ms;  // map -> rm.state, per answered map after the first
  double first_ms = 0;     // the first map: the RM recovers every process
  int unanswered = 0;
  std::vector<double> round_ms;  // rm.cycle total (apply_work + schedule) of the pool rounds of those maps
};

// Publishes the cluster's map, follows each rm.state as an orchestrator would, and times every map.
// REQUIRES: `orch` connected before wait_ready (a PUB socket drops what it sends before its connection is up).
latency_result measure_latency(stamped_publisher& orch, observer& obs, load_cluster c, int maps) {
  latency_result r;
  const std::string topic{messages::topics::workmap};
  for (int i = 0; i <= maps; ++i) {
    if (i == 1) obs.round_total_ms.clear();  // the recovery round is reported apart
    const auto t0 = clock_type::now();
    c.work.rm_epoch = obs.fence.echo();
    c.work.rm_cycle = obs.fence.echo_cycle();
    const auto seq = orch.publish(topic, c.work);
    const bool got = obs.wait([&] { return obs.state_for_map.count(seq) > 0; }, i == 0 ? 120s : 30s);
    if (!got) {
      ++r.unanswered;
      continue;
    }
    const double ms = std::chrono::duration<double, std::milli>(obs.state_for_map[seq] - t0).count();
    if (i == 0) r.first_ms = ms;
    else r.ms.push_back(ms);
    if (obs.last_state) follow_schedule(c.work, obs.last_state->state);
    std::fprintf(stderr, "\r  map %d/%d: %.1f ms   ", i, maps, ms);
    std::this_thread::sleep_for(200ms);  // an orchestrator publishes periodically, not back to back
  }
  std::fprintf(stderr, "\n");
  r.round_ms = obs.round_total_ms;
  return r;
}

void print_latency(const std::string& label, const latency_result& r) {
  const auto unanswered = r.unanswered > 0 ? "; " + std::to_string(r.unanswered) + " unanswered" : std::string{};
  std::printf("%-40s median %7.1f ms  p99 %7.1f ms  max %7.1f ms  (%zu maps; pool rounds inside: median %.1f ms; "
              "first map, recovering every process: %.1f ms%s)\n",
              label.c_str(), median(r.ms), percentile(r.ms, 99), percentile(r.ms, 100), r.ms.size(), median(r.round_ms),
              r.first_ms, unanswered.c_str());
}

struct failover_figures {
  std::vector<double> ms;  // kill -> first rm.state of the new epoch
  double active_cpu = -1, standby_cpu = -1;  // at rest, share of one core
  double active_rss_mb = 0, standby_rss_mb = 0;
};

struct run_figures {
  failover_figures failover;
  double startup_s = -1, absorbed_first_s = -1;
  std::size_t ever_missing = 0;
  double intake_sustained = 0, intake_peak = 0, raw_ceiling = 0;
  latency_result one, split, pools2, pools1;
  double idle_cpu = -1;
  double rss_mb = 0, peak_rss_mb = 0, idle_rss_mb = 0;
};

// Startup, intake and latency against one rmbus running every role.
void run_one(const options& o, zmq::context_t& ctx, const load_cluster& c, run_figures& f) {
  const auto cfg = write_config(o, c, 1000, "one");
  auto l = start(o, cfg, "one");
  // The raw ceiling's topic: one the RM does not read; under CURVE an rm.* one, which the forwarder's role
  // check passes for rmbus-load's key (role rm).
  const std::string raw_topic = o.keys ? "rm.load.raw" : "load.raw";
  observer obs{ctx, l.sub_side(), {raw_topic}};
  // Every publisher connects now, so none loses its first messages to the slow-joiner hop.
  stamped_publisher burst{ctx, l.pub_side(), "rmbus-load.boot"}, orch{ctx, l.pub_side(), "rmbus-load.orchestrator"},
      raw{ctx, l.pub_side(), "rmbus-load.raw"}, pub{ctx, l.pub_side(), "rmbus-load.intake"};
  if (!wait_ready(ctx, l, obs, 1000)) throw std::runtime_error("rmbus did not come up (logs in " + o.work_dir + ")");
  const auto base_hb = scrape(l.metrics, "rmbus_heartbeats_received_total").value_or(0);
  std::unique_ptr<heartbeat_loop> agents;
  if (o.phases.count("startup") || o.phases.count("latency") || o.phases.count("intake")) {
    // Startup: every node's first heartbeat at once (a booting cluster), then one a second each.
    const auto t0 = clock_type::now();
    for (const auto& n : c.nodes) burst.publish(std::string{messages::topics::heartbeat}, n);
    agents = std::make_unique<heartbeat_loop>(ctx, l.pub_side(), c.nodes, 1000ms);
    const auto want = c.nodes.size();
    obs.wait([&] { return obs.last_nodes && obs.last_nodes->up >= want; }, 60s);
    if (obs.last_nodes && obs.last_nodes->up >= want) f.startup_s = std::chrono::duration<double>(obs.last_nodes->at - t0).count();
    // When the intake had absorbed them (its own count, independent of rm.nodes' rate limit).
    for (int i = 0; i < 600; ++i) {
      const auto n = scrape(l.metrics, "rmbus_heartbeats_received_total").value_or(0);
      if (n - base_hb >= static_cast<double>(c.nodes.size())) break;
      std::this_thread::sleep_for(10ms);
    }
    std::printf("startup: %zu nodes' first heartbeats -> all up in rm.nodes: %.2f s (rm.nodes outside rounds is "
                "published at most once per heartbeat interval, here 1 s)\n",
                c.nodes.size(), f.startup_s);
  }
  if (o.phases.count("latency")) {
    f.one = measure_latency(orch, obs, c, o.maps);
    print_latency("latency, one process:", f.one);
  }
  f.ever_missing = obs.ever_missing.size();
  std::printf("nodes ever reported missing or down while heartbeating on time: %zu\n", f.ever_missing);
  const auto s = l.sample();
  f.rss_mb = s.rss_kb / 1024.0;
  f.peak_rss_mb = s.peak_rss_kb / 1024.0;
  std::printf("memory after the latency phase: resident %.0f MB, peak %.0f MB\n", f.rss_mb, f.peak_rss_mb);
  if (agents) agents->stop();

  if (o.phases.count("intake")) {
    // The raw ceiling: the same heartbeat bodies, on a topic the RM does not read, to our own SUB socket
    // through the same forwarder.
    const std::size_t burst_n = 300'000;
    obs.decode_states = false;
    {
      const auto t0 = clock_type::now();
      for (std::size_t i = 0; i < burst_n; ++i) raw.publish(raw_topic, c.nodes[i % c.nodes.size()]);
      obs.wait([&] { return obs.extra_received >= burst_n; }, 20s);
      obs.wait([] { return false; }, 300ms);
      const double span = std::chrono::duration<double>(obs.last_extra - t0).count();
      f.raw_ceiling = span > 0 ? obs.extra_received / span : 0;
    }
    // The RM: raise the rate until heartbeats are late (not all counted within 250 ms of the step's end).
    for (double rate : {25'000.0, 50'000.0, 100'000.0, 150'000.0, 200'000.0, 300'000.0, 400'000.0, 600'000.0}) {
      const auto before = scrape(l.metrics, "rmbus_heartbeats_received_total").value_or(0);
      const auto step = 1.0;  // seconds of sending
      const auto n = static_cast<std::size_t>(rate * step);
      const auto t0 = clock_type::now();
      for (std::size_t i = 0; i < n; ++i) {
        pub.publish(std::string{messages::topics::heartbeat}, c.nodes[i % c.nodes.size()]);
        if (i % 1000 == 999) std::this_thread::sleep_until(t0 + std::chrono::duration<double>(i / rate));
      }
      const double sent_s = seconds_since(t0);
      double counted = 0;
      double done_s = 0;
      for (int k = 0; k < 500; ++k) {
        counted = scrape(l.metrics, "rmbus_heartbeats_received_total").value_or(0) - before;
        done_s = seconds_since(t0);
        if (counted >= static_cast<double>(n)) break;
        std::this_thread::sleep_for(10ms);
      }
      const double absorbed = counted / done_s;
      const bool on_time = counted >= static_cast<double>(n) && done_s - sent_s <= 0.25;
      std::printf("intake step %7.0f/s offered (sent in %.2f s): %.0f of %zu counted in %.2f s = %.0f/s%s\n", rate,
                  sent_s, counted, n, done_s, absorbed, on_time ? "" : "  (late)");
      f.intake_peak = std::max(f.intake_peak, absorbed);
      if (!on_time) break;
      f.intake_sustained = std::max(f.intake_sustained, n / sent_s);
    }
    std::printf("intake: %.0f heartbeats/s absorbed on time (peak %.0f/s); raw cppzmq PUB/SUB ceiling through the "
                "same forwarder: %.0f/s; ratio %.2f\n",
                f.intake_sustained, f.intake_peak, f.raw_ceiling, f.raw_ceiling > 0 ? f.intake_sustained / f.raw_ceiling : 0);
    obs.decode_states = true;
  }
}

// Idle: heartbeats every 10 s and an unchanged map every 10 s; CPU over 30 s of that.
void run_idle(const options& o, zmq::context_t& ctx, const load_cluster& c, run_figures& f) {
  const auto cfg = write_config(o, c, 10000, "idle");
  auto l = start(o, cfg, "idle");
  observer obs{ctx, l.sub_side()};
  stamped_publisher orch{ctx, l.pub_side(), "rmbus-load.orchestrator"};
  if (!wait_ready(ctx, l, obs, 100)) throw std::runtime_error("rmbus (idle) did not come up");
  heartbeat_loop agents{ctx, l.pub_side(), c.nodes, 10000ms};
  const std::string topic{messages::topics::workmap};
  // Settle: the first map recovers every process; follow until the schedule stops changing.
  auto work = c.work;
  for (int i = 0; i < 10; ++i) {
    work.rm_epoch = obs.fence.echo();
    work.rm_cycle = obs.fence.echo_cycle();
    const auto seq = orch.publish(topic, work);
    obs.wait([&] { return obs.state_for_map.count(seq) > 0; }, 120s);
    if (!obs.last_state || follow_schedule(work, obs.last_state->state) == 0) break;
  }
  const auto a = l.sample();
  const auto t0 = clock_type::now();
  while (seconds_since(t0) < 30) {
    orch.publish(topic, work);  // unchanged
    obs.wait([] { return false; }, 10s);
  }
  const auto b = l.sample();
  f.idle_cpu = (b.cpu_s - a.cpu_s) / seconds_since(t0);
  f.idle_rss_mb = b.rss_kb / 1024.0;
  std::printf("idle (heartbeat every 10 s, unchanged map every 10 s): %.1f%% of one core, resident %.0f MB\n",
              100 * f.idle_cpu, f.idle_rss_mb);
}

// HA failover: rmbus-proxy is the bus, two candidates (rank 0 and 1) on it; agents heartbeat every 10 s (the
// idle phase's rate), the orchestrator fences (messages/epoch_fence.hpp). After the schedule settles, both
// candidates' CPU and memory are sampled for 30 s at rest (an unchanged map every 10 s, as in the idle phase);
// then the active is SIGKILLed `o.failovers` times, each time timed from the kill to the first rm.state of a
// higher epoch (maps every second meanwhile), and started again as a standby, given 15 s to hear every node.
void run_failover(const options& o, zmq::context_t& ctx, const load_cluster& c, failover_figures& f) {
  auto with_rank = [&](int rank) {
    auto cfg = c.config;
    auto& rt = cfg.runtime;
    rt.ha.enabled = true;
    rt.ha.rank = rank;
    rt.heartbeat_interval_ms = 10000;
    rt.node_stability = 6;
    rt.init_stability = 1;
    rt.orchestrator_publish_ms = 1000;
    rt.round_timeout_ms = 30000;
    rt.log_level = "info";
    rt.limits.max_body_bytes = 256u << 20;
    rt.limits.max_array_len = 10'000'000;
    rt.limits.max_map_len = 100'000;
    const auto path = o.work_dir + "/failover-" + std::to_string(rank) + ".toml";
    std::ofstream(path) << config::render(cfg);
    return path;
  };
  const int pub = free_port(), sub = free_port();
  const auto proxy_exe = (std::filesystem::path(o.rmbus).parent_path() / "rmbus-proxy").string();
  rm_process proxy{proxy_exe, {"--bus-pub", tcp(pub), "--bus-sub", tcp(sub), "--heartbeat-min-gap-ms", "0"},
                   o.work_dir + "/failover-proxy.log"};
  const int metrics[2] = {free_port(), free_port()};
  const std::string configs[2] = {with_rank(0), with_rank(1)};
  std::unique_ptr<rm_process> rm[2];
  auto start_candidate = [&](int i) {
    rm[i] = std::make_unique<rm_process>(
        o.rmbus,
        std::vector<std::string>{"--config", configs[i], "--bus-pub", tcp(pub), "--bus-sub", tcp(sub), "--no-forwarder",
                                 "--admin", tcp(free_port()), "--metrics", "127.0.0.1:" + std::to_string(metrics[i])},
        o.work_dir + "/failover-" + std::to_string(i) + ".log");
  };
  start_candidate(0);
  start_candidate(1);
  const bus_access pub_side{tcp(pub), std::nullopt}, sub_side{tcp(sub), std::nullopt};
  observer obs{ctx, sub_side};
  stamped_publisher orch{ctx, pub_side, "rmbus-load.orchestrator"};
  heartbeat_loop agents{ctx, pub_side, c.nodes, 10000ms};
  auto work = c.work;
  const std::string topic{messages::topics::workmap};
  auto publish_map = [&] {
    work.rm_epoch = obs.fence.echo();
    work.rm_cycle = obs.fence.echo_cycle();
    return orch.publish(topic, work);
  };
  auto active = [&]() -> int {
    for (int i = 0; i < 2; ++i)
      if (rm[i] && rm[i]->running() && scrape(metrics[i], "rmbus_ha_role").value_or(0) == 1) return i;
    return -1;
  };
  // Up: a candidate takes over once it has heard a map; then the schedule is followed until it settles.
  const auto up_deadline = clock_type::now() + 180s;
  while (active() < 0 && clock_type::now() < up_deadline) {
    publish_map();
    obs.wait([] { return false; }, 1000ms);
  }
  if (active() < 0) throw std::runtime_error("failover: no candidate became active (logs in " + o.work_dir + ")");
  for (int i = 0; i < 15; ++i) {
    const auto seq = publish_map();
    obs.wait([&] { return obs.state_for_map.count(seq) > 0; }, 120s);
    if (!obs.last_state || follow_schedule(work, obs.last_state->state) == 0) break;
  }
  // At rest: both candidates' cost over 30 s (an unchanged map every 10 s).
  {
    const int a = active();
    const int sb = 1 - a;
    const auto a0 = rm[a]->sample(), s0 = rm[sb]->sample();
    const auto t0 = clock_type::now();
    while (seconds_since(t0) < 30) {
      publish_map();
      obs.wait([] { return false; }, 10000ms);
    }
    const auto a1 = rm[a]->sample(), s1 = rm[sb]->sample();
    const double secs = seconds_since(t0);
    f.active_cpu = (a1.cpu_s - a0.cpu_s) / secs;
    f.standby_cpu = (s1.cpu_s - s0.cpu_s) / secs;
    f.active_rss_mb = a1.rss_kb / 1024.0;
    f.standby_rss_mb = s1.rss_kb / 1024.0;
    std::printf("HA at rest (heartbeat and unchanged map every 10 s, 30 s): active %.1f%% of one core, %.0f MB; "
                "standby %.1f%% of one core, %.0f MB (standby / active memory %.2f)\n",
                100 * f.active_cpu, f.active_rss_mb, 100 * f.standby_cpu, f.standby_rss_mb,
                f.standby_rss_mb / std::max(1.0, f.active_rss_mb));
  }
  for (int k = 1; k <= o.failovers; ++k) {
    const int a = active();
    if (a < 0) throw std::runtime_error("failover: no active candidate before kill " + std::to_string(k));
    const auto epoch = obs.fence.echo().value_or(0);
    ::kill(rm[a]->pid(), SIGKILL);
    const auto killed_at = clock_type::now();
    auto next_map = killed_at;
    bool taken = false;
    while (!taken && seconds_since(killed_at) < 60) {
      if (clock_type::now() >= next_map) {
        publish_map();
        next_map += 1000ms;
      }
      taken = obs.wait([&] { return obs.fence.echo().value_or(0) > epoch && obs.last_state.has_value(); },
                       std::chrono::duration_cast<std::chrono::milliseconds>(next_map - clock_type::now()) + 1ms);
    }
    if (!taken) throw std::runtime_error("failover " + std::to_string(k) + ": no schedule of a new epoch within 60 s");
    const double ms = std::chrono::duration<double, std::milli>(obs.last_state->at - killed_at).count();
    f.ms.push_back(ms);
    std::printf("  failover %d: SIGKILL -> first rm.state of epoch %llu: %.0f ms\n", k,
                static_cast<unsigned long long>(obs.fence.echo().value_or(0)), ms);
    rm[a].reset();  // reaped
    start_candidate(a);
    // The restarted standby hears every node before the next kill; the orchestrator keeps publishing.
    const auto t0 = clock_type::now();
    while (seconds_since(t0) < 15) {
      if (obs.last_state) follow_schedule(work, obs.last_state->state);
      publish_map();
      obs.wait([] { return false; }, 1000ms);
    }
  }
  std::printf("failover (%d nodes, %zu work items): kill -> first rm.state of the new active: median %.0f ms, max "
              "%.0f ms over %zu failovers\n",
              static_cast<int>(c.nodes.size()), c.work.work.size(), median(f.ms), percentile(f.ms, 100), f.ms.size());
}

// Serve: the cluster kept running for an outside observer (rmbus-web's benchmark, tools/web/bench_web.py):
// rmbus with the cluster's configuration, every node heartbeating each second, and the work map published
// each second, following every schedule as an orchestrator would. One line on stdout names the endpoints;
// then it runs for --serve-s seconds, or until SIGTERM.
void run_serve(const options& o, zmq::context_t& ctx, const load_cluster& c) {
  const auto cfg = write_config(o, c, 1000, "serve");
  auto l = start(o, cfg, "serve");
  observer obs{ctx, l.sub_side()};
  stamped_publisher orch{ctx, l.pub_side(), "rmbus-load.orchestrator"};
  if (!wait_ready(ctx, l, obs, 1000)) throw std::runtime_error("rmbus (serve) did not come up");
  heartbeat_loop agents{ctx, l.pub_side(), c.nodes, 1000ms};
  std::printf("serving: bus-sub %s admin %s rmbus-pid %d\n", tcp(l.sub).c_str(), tcp(l.admin).c_str(),
              static_cast<int>(l.procs.front()->pid()));
  std::fflush(stdout);
  const std::string topic{messages::topics::workmap};
  auto work = c.work;
  const auto t0 = clock_type::now();
  while (seconds_since(t0) < o.serve_s) {
    const auto seq = orch.publish(topic, work);
    obs.wait([&] { return obs.state_for_map.count(seq) > 0; }, 30s);
    if (obs.last_state) follow_schedule(work, obs.last_state->state);
    obs.state_for_map.clear();
    obs.wait([] { return false; }, 1000ms);  // the orchestrator's period
  }
}

latency_result run_latency_only(const options& o, zmq::context_t& ctx, const load_cluster& c, const std::string& how) {
  const auto cfg = write_config(o, c, 1000, how);
  auto l = start(o, cfg, how);
  observer obs{ctx, l.sub_side()};
  stamped_publisher orch{ctx, l.pub_side(), "rmbus-load.orchestrator"};
  if (!wait_ready(ctx, l, obs, 1000)) throw std::runtime_error("rmbus (" + how + ") did not come up");
  heartbeat_loop agents{ctx, l.pub_side(), c.nodes, 1000ms};
  obs.wait([&] { return obs.last_nodes && obs.last_nodes->up >= c.nodes.size(); }, 60s);
  return measure_latency(orch, obs, c, o.maps);
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  CLI::App app{"rmbus-load: drives a real rmbus over tcp loopback and measures the whole process"};
  std::string phases = "startup,intake,latency,idle,split,pools";
  app.add_option("--nodes", o.nodes, "nodes (agents)")->check(CLI::Range(4, 200000));
  app.add_option("--jobs", o.jobs, "work items of the DUCC-shaped mix")->check(CLI::Range(4, 400000));
  app.add_option("--users", o.users, "users")->check(CLI::Range(1, 10000));
  app.add_option("--runs", o.runs, "repeat everything; figures are printed per run and as medians")->check(CLI::Range(1, 20));
  app.add_option("--maps", o.maps, "work maps timed per latency measurement")->check(CLI::Range(2, 1000));
  app.add_option("--seed", o.seed, "workload seed");
  app.add_option("--phases", phases, "comma-separated: startup, intake, latency, idle, split, pools, failover; or "
                                     "serve (alone: keep the cluster running for an outside observer)");
  app.add_option("--serve-s", o.serve_s, "serve: seconds to keep the cluster running")->check(CLI::Range(1, 86400));
  app.add_option("--rmbus", o.rmbus,
                 "the rmbus executable (default: rmbus beside this program, else ../rmbus)");
  app.add_option("--work-dir", o.work_dir, "where configurations and RM logs go (default: a fresh temporary folder)");
  bool curve = false;
  app.add_flag("--curve", curve, "CURVE on the bus: fresh keys in the work folder, [security] in every configuration");
  app.add_flag("--accounting", o.accounting, "job accounting on in every configuration (what Maui's JobChecker costs)");
  app.add_flag("--health", o.health, "the health report on in every configuration");
  app.add_flag("--ha", o.ha, "[ha] on (one candidate) in every one-process configuration: what HA costs the active");
  app.add_option("--failovers", o.failovers, "SIGKILLs of the active in the failover phase")->check(CLI::Range(1, 1000));
  app.add_option("--forwarders", o.forwarders,
                 "bus forwarders: the RM's embedded one and N - 1 rmbus-proxy processes (next to rmbus); every "
                 "client connects to all, so each message travels through each and receivers drop the copies")
      ->capture_default_str()
      ->check(CLI::Range(1, 4));
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as soon as it is measured, also into a file
  o.phases.clear();
  std::stringstream ps(phases);
  for (std::string p; std::getline(ps, p, ',');) {
    static const std::set<std::string> known{"startup", "intake", "latency", "idle", "split", "pools", "failover", "serve"};
    if (!known.count(p)) {
      std::cerr << "rmbus-load: --phases: unknown phase '" << p
                << "' (known: startup, intake, latency, idle, split, pools, failover, serve)\n";
      return 2;
    }
    o.phases.insert(p);
  }
  if (o.rmbus.empty()) {
    // Installed, rmbus sits beside this program (bin/); in the build tree one folder up (build/tools/).
    const auto here = std::filesystem::canonical("/proc/self/exe").parent_path();
    o.rmbus =
        (std::filesystem::exists(here / "rmbus") ? here / "rmbus" : here.parent_path() / "rmbus").string();
  }
  if (!std::filesystem::exists(o.rmbus)) {
    std::cerr << "rmbus-load: no rmbus executable at " << o.rmbus << " (give --rmbus)\n";
    return 2;
  }
  o.proxy = (std::filesystem::path(o.rmbus).parent_path() / "rmbus-proxy").string();
  if (o.forwarders > 1 && !std::filesystem::exists(o.proxy)) {
    std::cerr << "rmbus-load: --forwarders " << o.forwarders << " needs rmbus-proxy next to rmbus, at " << o.proxy
              << "\n";
    return 2;
  }
  if (o.work_dir.empty()) {
    char tmpl[] = "/tmp/rmbus-load.XXXXXX";
    o.work_dir = ::mkdtemp(tmpl);
  } else {
    std::error_code ec;
    std::filesystem::create_directories(o.work_dir, ec);
    if (ec) {
      std::cerr << "rmbus-load: --work-dir " << o.work_dir << ": " << ec.message() << "\n";
      return 2;
    }
  }
  if (curve) {
    try {
      o.keys = make_keys(o.work_dir);
    } catch (const std::exception& e) {
      std::cerr << "rmbus-load: --curve: " << e.what() << "\n";
      return 1;
    }
  }
  std::printf("rmbus-load: %d nodes, %d jobs, %d users; rmbus %s%s%s%s; %d forwarder(s); logs in %s\n", o.nodes,
              o.jobs, o.users, o.rmbus.c_str(), o.keys ? " with CURVE" : "", o.accounting ? " with accounting" : "",
              o.health ? " with the health report" : "", o.forwarders, o.work_dir.c_str());
  zmq::context_t ctx;
  std::vector<run_figures> runs;
  try {
    for (int run = 1; run <= o.runs; ++run) {
      std::printf("--- run %d of %d\n", run, o.runs);
      cluster_spec spec{o.nodes, o.jobs, o.users, 1, 15, o.seed, 12};
      const auto t0 = clock_type::now();
      const auto cluster = make_cluster(spec);
      std::fprintf(stderr, "  cluster: %zu nodes, %zu work items, %zu processes running (made in %.1f s)\n",
                   cluster.nodes.size(), cluster.work.work.size(), cluster.processes, seconds_since(t0));
      run_figures f;
      if (o.phases.count("serve")) run_serve(o, ctx, cluster);
      if (o.phases.count("startup") || o.phases.count("intake") || o.phases.count("latency")) run_one(o, ctx, cluster, f);
      if (o.phases.count("idle")) run_idle(o, ctx, cluster, f);
      if (o.phases.count("split")) {
        f.split = run_latency_only(o, ctx, cluster, "split");
        print_latency("latency, roles over 3 processes:", f.split);
        if (!f.one.ms.empty())
          std::printf("split / one process (median latency): %.2f\n", median(f.split.ms) / median(f.one.ms));
      }
      if (o.phases.count("pools")) {
        auto four = make_cluster(cluster_spec{o.nodes, o.jobs, o.users, 4, 15, o.seed, 12});
        f.pools2 = run_latency_only(o, ctx, four, "one");
        print_latency("4 pools, 2 threads (concurrent):", f.pools2);
        f.pools1 = run_latency_only(o, ctx, four, "one-1thread");
        print_latency("4 pools, 1 thread (one after another):", f.pools1);
        std::printf("4 pools: one after another / concurrent (median latency): %.2f\n",
                    median(f.pools1.ms) / std::max(1e-9, median(f.pools2.ms)));
      }
      if (o.phases.count("failover")) run_failover(o, ctx, cluster, f.failover);
      runs.push_back(f);
    }
  } catch (const std::exception& e) {
    std::cerr << "rmbus-load: " << e.what() << "\n";
    return 1;
  }
  if (runs.size() > 1) {
    auto med = [&](auto get) {
      std::vector<double> v;
      for (const auto& r : runs) v.push_back(get(r));
      return median(v);
    };
    std::printf("=== medians of %zu runs\n", runs.size());
    const bool one = o.phases.count("startup") || o.phases.count("intake") || o.phases.count("latency");
    if (o.phases.count("startup")) std::printf("startup %.2f s\n", med([](const run_figures& r) { return r.startup_s; }));
    if (o.phases.count("intake"))
      std::printf("intake %.0f/s (raw ceiling %.0f/s; per-run ratio %.2f)\n",
                  med([](const run_figures& r) { return r.intake_sustained; }),
                  med([](const run_figures& r) { return r.raw_ceiling; }),
                  med([](const run_figures& r) { return r.raw_ceiling > 0 ? r.intake_sustained / r.raw_ceiling : 0.0; }));
    if (o.phases.count("latency"))
      std::printf("latency median %.1f ms, p99 %.1f ms\n", med([](const run_figures& r) { return median(r.one.ms); }),
                  med([](const run_figures& r) { return percentile(r.one.ms, 99); }));
    if (one)
      std::printf("resident %.0f MB (peak %.0f MB)\n", med([](const run_figures& r) { return r.rss_mb; }),
                  med([](const run_figures& r) { return r.peak_rss_mb; }));
    if (o.phases.count("idle")) std::printf("idle %.1f%% of one core\n", 100 * med([](const run_figures& r) { return r.idle_cpu; }));
    if (o.phases.count("split") && o.phases.count("latency"))
      std::printf("split / one process %.2f\n",
                  med([](const run_figures& r) { return r.one.ms.empty() ? 0.0 : median(r.split.ms) / median(r.one.ms); }));
    if (o.phases.count("pools"))
      std::printf("4 pools, one after another / concurrent %.2f\n",
                  med([](const run_figures& r) { return median(r.pools1.ms) / std::max(1e-9, median(r.pools2.ms)); }));
  }
  return 0;
}
