// Phase idle: what an RM costs at DUCC's idle rates.
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

namespace rmbus::load {

using namespace std::chrono_literals;

void run_idle(const options& o, zmq::context_t& ctx, const load_cluster& c, run_figures& f) {
  const auto cfg = write_config(o, c, 10000, "idle");
  auto l = start(o, cfg, "idle");
  observer obs{ctx, l.sub_side(), {std::string{messages::topics::rm_events}}};
  stamped_publisher orch{ctx, l.pub_side(), "rmbus-load.orchestrator"};
  if (!wait_ready(ctx, l, obs, 100)) throw std::runtime_error("rmbus (idle) did not come up");
  heartbeat_loop agents{ctx, l.pub_side(), c.nodes, 10000ms};
  const std::string topic{messages::topics::workmap};
  // What is measured is an RM at rest: every node heard (one heartbeat interval) before the first map, so
  // that recovery places every process; the settle window the first map opens (it names running processes)
  // waited out; then the schedule followed until it stops changing.
  obs.wait([&] { return obs.last_nodes && obs.last_nodes->up >= c.nodes.size(); }, 60s);
  auto work = c.work;
  work.rm_epoch = obs.fence.echo();
  work.rm_cycle = obs.fence.echo_cycle();
  const auto first = orch.publish(topic, work);
  obs.wait([&] { return obs.state_for_map.count(first) > 0; }, 120s);
  if (obs.wait([&] { return obs.settling; }, 2s)) obs.wait([&] { return obs.settled; }, 120s);
  // Bounded: an RM whose schedule never settles is measured as it is, and the line below says so.
  constexpr int max_follow_maps = 20;
  int followed = 0;
  std::size_t last_changes = 0;
  for (; followed < max_follow_maps; ++followed) {
    work.rm_epoch = obs.fence.echo();
    work.rm_cycle = obs.fence.echo_cycle();
    const auto seq = orch.publish(topic, work);
    obs.wait([&] { return obs.state_for_map.count(seq) > 0; }, 120s);
    last_changes = obs.last_state ? follow_schedule(work, obs.last_state->state) : 0;
    if (last_changes == 0) break;
  }
  if (last_changes == 0)
    std::printf("idle: the schedule settled after %d maps followed\n", followed + 1);
  else
    std::printf("idle: the schedule still changed after %d maps followed (%zu processes started or stopped by the "
                "last); measured as it is\n", followed, last_changes);
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

}  // namespace rmbus::load
