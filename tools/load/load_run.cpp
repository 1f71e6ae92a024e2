// The parts every phase of an rmbus-load run shares (load_run.hpp).
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include <zmq.hpp>

#include "messages/topics.hpp"
#include "tools/load/load_run.hpp"
#include "tools/load/stats.hpp"
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config/render.hpp"

namespace rmbus::load {

using namespace std::chrono_literals;

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

void set_load_runtime(config::runtime_settings& rt, std::int64_t heartbeat_ms) {
  rt.heartbeat_interval_ms = heartbeat_ms;
  rt.node_stability = 6;
  rt.init_stability = 1;
  rt.orchestrator_publish_ms = 1000;
  rt.round_timeout_ms = 30000;
  rt.log_level = "warn";
  rt.limits.max_body_bytes = 256u << 20;
  rt.limits.max_array_len = 10'000'000;
  rt.limits.max_map_len = 100'000;
}

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
  if (o.sparing_preemption) cfg.scheduling.settings.preemption_policy = core::preemption_policy::sparing;
  rt.health.enabled = o.health;
  rt.ha.enabled = o.ha && name != "split";  // HA elects a head: a split of the head roles is refused
  if (name == "events") rt.schedule_changes_full_every = o.schedule_changes;
  set_load_runtime(rt, heartbeat_ms);
  const auto path = o.work_dir + "/" + name + ".toml";
  std::ofstream(path) << config::render(cfg);
  return path;
}

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
  auto launch = [&](std::vector<std::string> args, const std::string& log_path) {
    l.procs.push_back(std::make_unique<rm_process>(o.rmbus, args, log_path));
    l.args.push_back(std::move(args));
  };
  if (how == "split") {
    launch(base({"--roles", "intake,eviction", "--metrics", "127.0.0.1:" + std::to_string(l.metrics)}), log + "-1.log");
    std::this_thread::sleep_for(300ms);  // its forwarder binds the bus first
    auto second = base({"--roles", "diff,publisher,admin", "--no-forwarder", "--admin", tcp(l.admin), "--metrics", "off"});
    auto third = base({"--roles", "scheduler", "--no-forwarder", "--metrics", "off"});
    for (auto& a : own_key(0)) second.push_back(a);
    for (auto& a : own_key(1)) third.push_back(a);
    launch(second, log + "-2.log");
    launch(third, log + "-3.log");
  } else {
    launch(base({"--admin", tcp(l.admin), "--metrics", "127.0.0.1:" + std::to_string(l.metrics), "--threads",
                 how == "one-1thread" ? "1" : "2"}),
           log + ".log");
  }
  return l;
}

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

latency_result measure_latency(stamped_publisher& orch, observer& obs, load_cluster c, int maps, bool after_settle) {
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
    if (i == 0 && after_settle && obs.wait([&] { return obs.settling; }, 2s)) {
      // The first map named running processes: the RM settles; its rounds only report until "settled".
      obs.wait([&] { return obs.settled; }, 120s);
      obs.round_total_ms.clear();
    }
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

}  // namespace rmbus::load
