// Phase failover: HA candidates on rmbus-proxy, the active SIGKILLed again and again.
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

#include "config/render.hpp"
#include "messages/topics.hpp"
#include "tools/load/load_run.hpp"
#include "tools/load/stats.hpp"

namespace rmbus::load {

using namespace std::chrono_literals;

namespace {

// One process of the smallest size the work asks for, in the class of the first item: it fits wherever any
// process fits.
messages::work_item probe_job(const std::string& id, const messages::workmap& work) {
  messages::work_item p;
  p.id = id;
  p.user = "failover-probe";
  p.kind = messages::work_kind::job;
  p.state = messages::work_state::waiting;
  p.max_processes = 1;
  p.items_total = 1000;
  p.memory_mb = 1024;
  for (const auto& w : work.work) p.memory_mb = std::min(p.memory_mb, w.memory_mb == 0 ? p.memory_mb : w.memory_mb);
  if (!work.work.empty()) {
    p.class_name = work.work.front().class_name;
    p.submitted_ms = work.work.back().submitted_ms + 1;
  }
  return p;
}

bool holds_share(const messages::rm_state& s, const std::string& job) {
  for (const auto& j : s.jobs)
    if (j.id == job) return !j.shares.empty();
  return false;
}

}  // namespace

void run_failover(const options& o, zmq::context_t& ctx, const load_cluster& c, failover_figures& f) {
  auto with_rank = [&](int rank) {
    auto cfg = c.config;
    auto& rt = cfg.runtime;
    rt.ha.enabled = true;
    rt.ha.rank = rank;
    set_load_runtime(rt, 10000);
    rt.log_level = "info";  // each candidate's log in the work folder says when it took over
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
    // A job arrives as the active dies: only the new active can give it its share.
    const auto probe_id = "failover-probe-" + std::to_string(k);
    work.work.push_back(probe_job(probe_id, c.work));
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
    const auto new_epoch_at = obs.last_state->at;
    // The probe's first share: the orchestrator maps every second, as before the kill.
    bool given = false;
    while (!given && seconds_since(killed_at) < 60) {
      if (clock_type::now() >= next_map) {
        publish_map();
        next_map += 1000ms;
      }
      given = obs.wait([&] { return obs.last_state && holds_share(obs.last_state->state, probe_id); },
                       std::chrono::duration_cast<std::chrono::milliseconds>(next_map - clock_type::now()) + 1ms);
    }
    const double to_new = given ? std::chrono::duration<double, std::milli>(obs.last_state->at - new_epoch_at).count() : -1;
    if (given) f.first_new_ms.push_back(to_new);
    std::printf("  failover %d: SIGKILL -> first rm.state of epoch %llu: %.0f ms; -> first new share %s\n", k,
                static_cast<unsigned long long>(obs.fence.echo().value_or(0)), ms,
                given ? (std::to_string(static_cast<long long>(to_new)) + " ms later").c_str() : "none within 60 s");
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
              "%.0f ms over %zu failovers; its first rm.state -> the first new share (maps every 1 s): median %.0f ms, "
              "max %.0f ms over %zu\n",
              static_cast<int>(c.nodes.size()), c.work.work.size(), median(f.ms), percentile(f.ms, 100), f.ms.size(),
              median(f.first_new_ms), percentile(f.first_new_ms, 100), f.first_new_ms.size());
}

}  // namespace rmbus::load
