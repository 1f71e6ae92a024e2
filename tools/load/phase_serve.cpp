// Phase serve: the cluster kept running for an outside observer.
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
  if (o.no_node_memory)
    for (auto& w : work.work)
      for (auto& p : w.processes) p.node_memory_mb.reset();
  const auto t0 = clock_type::now();
  while (seconds_since(t0) < o.serve_s) {
    const auto seq = orch.publish(topic, work);
    obs.wait([&] { return obs.state_for_map.count(seq) > 0; }, 30s);
    if (obs.last_state) follow_schedule(work, obs.last_state->state);
    if (o.no_node_memory)
      for (auto& w : work.work)
        for (auto& p : w.processes) p.node_memory_mb.reset();
    obs.state_for_map.clear();
    obs.wait([] { return false; }, 1000ms);  // the orchestrator's period
  }
}

}  // namespace rmbus::load
