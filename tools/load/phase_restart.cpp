// Phase restart: an RM restart under running work. The cluster is served until its schedule settles; then the
// RM is SIGKILLed and started again while every agent heartbeats once a second, and the orchestrator publishes
// its map, which names every running process and no node's size (as DUCC's does), as soon as the new RM is
// up: before it has heard most nodes. A restart must refuse none of that work, and preempt or evict none of it
// while every node is alive (docs/architecture.md, "Life cycle").
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <map>
#include <set>
#include <memory>
#include <string>

#include <zmq.hpp>

#include "messages/topics.hpp"
#include "tools/load/load_run.hpp"
#include "tools/load/stats.hpp"

namespace rmbus::load {

using namespace std::chrono_literals;

namespace {

void without_node_sizes(messages::workmap& work) {
  for (auto& w : work.work)
    for (auto& p : w.processes) p.node_memory_mb.reset();
}

// Processes listed running, share id -> node.
std::map<std::string, std::string> running_processes(const messages::workmap& work) {
  std::map<std::string, std::string> out;
  for (const auto& w : work.work)
    for (const auto& p : w.processes)
      if (p.state != messages::process_state::ended) out.emplace(p.id, p.node);
  return out;
}

}  // namespace

void run_restart(const options& o, zmq::context_t& ctx, const load_cluster& c, restart_figures& f) {
  if (o.keys) throw std::runtime_error("the restart phase does not run with --curve");
  const auto cfg = write_config(o, c, 1000, "restart");
  auto l = start(o, cfg, "restart");
  observer obs{ctx, l.sub_side()};
  stamped_publisher orch{ctx, l.pub_side(), "rmbus-load.orchestrator"};
  if (!wait_ready(ctx, l, obs, 1000)) throw std::runtime_error("rmbus (restart) did not come up");
  heartbeat_loop agents{ctx, l.pub_side(), c.nodes, 1000ms};
  const std::string topic{messages::topics::workmap};
  auto work = c.work;
  without_node_sizes(work);
  for (int i = 0; i < 20; ++i) {  // served until the schedule settles (no process started or stopped)
    const auto seq = orch.publish(topic, work);
    obs.wait([&] { return obs.state_for_map.count(seq) > 0; }, 120s);
    if (!obs.last_state || follow_schedule(work, obs.last_state->state) == 0) break;
    obs.wait([] { return false; }, 1000ms);
  }
  without_node_sizes(work);
  const auto running = running_processes(work);

  // The restart: the same command line, the same ports; the agents and the orchestrator reconnect by themselves.
  ::kill(l.procs.front()->pid(), SIGKILL);  // as a crash would
  l.procs.front().reset();                  // reaped
  const auto restarted_at = clock_type::now();
  l.procs.front() = std::make_unique<rm_process>(o.rmbus, l.args.front(), o.work_dir + "/rmbus-restart-2.log");
  obs.last_state.reset();
  bool whole = false;
  std::size_t states = 0;
  std::set<std::string> refused_jobs, taken;
  auto next_map = clock_type::now();
  while (seconds_since(restarted_at) < 60 && states < 15) {
    if (clock_type::now() >= next_map) {
      orch.publish(topic, work);  // at once, then every second, as the orchestrator's period
      next_map += whole ? 1000ms : 200ms;
    }
    const auto seen = obs.last_state ? obs.last_state->at : clock_type::time_point{};
    obs.wait([&] { return obs.last_state && obs.last_state->at != seen; },
             std::chrono::duration_cast<std::chrono::milliseconds>(next_map - clock_type::now()) + 1ms);
    if (!obs.last_state || obs.last_state->at == seen) continue;
    ++states;
    std::size_t listed = 0;
    for (const auto& j : obs.last_state->state.jobs) {
      if (j.status == messages::job_status::refused) refused_jobs.insert(j.id);
      for (const auto& sh : j.shares) {
        if (!running.count(sh.id)) continue;
        if (sh.status == messages::share_status::running) ++listed;
        if (sh.status == messages::share_status::preempt || sh.status == messages::share_status::evict) taken.insert(sh.id);
      }
    }
    if (!whole && listed == running.size()) {
      whole = true;
      f.to_whole_ms = std::chrono::duration<double, std::milli>(obs.last_state->at - restarted_at).count();
    }
  }
  f.running = running.size();
  f.refused_jobs = refused_jobs.size();
  f.taken = taken.size();
  std::printf("restart (%zu nodes, %zu work items, %zu processes running, maps without node sizes): refused %zu "
              "work items, preempted or evicted %zu running processes; restart -> first rm.state listing every "
              "running process: %s (heartbeats every 1 s)\n",
              c.nodes.size(), work.work.size(), running.size(), f.refused_jobs, f.taken,
              whole ? (std::to_string(static_cast<long long>(f.to_whole_ms)) + " ms").c_str() : "never, within 60 s");
}

}  // namespace rmbus::load
