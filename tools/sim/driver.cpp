#include "tools/sim/driver.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <zmq.hpp>

#include "bus/publisher.hpp"
#include "bus/subscriber.hpp"
#include "messages/heartbeat.hpp"
#include "messages/not_scheduling.hpp"
#include "messages/rm_event.hpp"
#include "messages/rm_nodes.hpp"
#include "messages/epoch_fence.hpp"
#include "messages/rm_state.hpp"
#include "messages/topics.hpp"
#include "messages/workmap_delta.hpp"
#include "tools/sim/agent_model.hpp"
#include "tools/sim/orchestrator_model.hpp"
#include "tools/sim/plot.hpp"

namespace rmbus::sim {

namespace {

using steady = std::chrono::steady_clock;

// What the subscriber thread hands to the driver thread. Snapshots are kept newest-only; events are queued
// up to a bound (past it they are counted as dropped: the report's event counts then say less).
struct inbox {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<messages::rm_state> state;
  bool fresh_state = false;
  std::optional<messages::rm_nodes> nodes;
  std::deque<messages::rm_event> events;
  std::uint64_t dropped_events = 0;
  std::uint64_t bad = 0;
  bool resync = false;  // the RM asked this orchestrator for a full map
  std::string name;     // this orchestrator's src
  messages::epoch_fence fence;  // HA: act only on the highest epoch's schedules, echo it in the map
};

void on_bus_message(inbox& in, bus::bus_message&& msg) {
  if (msg.topic == messages::topics::rm_state) {
    messages::envelope env;
    auto s = messages::decode_rm_state(msg.topic, msg.body, {}, &env);
    std::lock_guard<std::mutex> lock(in.mu);
    if (!s) {
      if (in.bad++ < 5) spdlog::warn("ignoring an rm.state that does not decode: {}", s.error().message());
      return;
    }
    if (!in.fence.accept(env.epoch, s.value().cycle)) {
      spdlog::warn("ignoring an rm.state of epoch {} from {}: epoch {} was accepted already (a deposed RM)",
                   env.epoch.value_or(0), env.src, in.fence.echo().value_or(0));
      return;
    }
    in.state = std::move(s.value());
    in.fresh_state = true;
    in.cv.notify_all();
  } else if (msg.topic == messages::topics::rm_nodes) {
    auto n = messages::decode_rm_nodes(msg.topic, msg.body);
    std::lock_guard<std::mutex> lock(in.mu);
    if (!n) {
      if (in.bad++ < 5) spdlog::warn("ignoring an rm.nodes that does not decode: {}", n.error().message());
      return;
    }
    in.nodes = std::move(n.value());
    in.cv.notify_all();
  } else if (msg.topic == messages::topics::rm_events) {
    auto e = messages::decode_rm_event(msg.topic, msg.body);
    std::lock_guard<std::mutex> lock(in.mu);
    if (!e) return;
    if (e.value().kind == messages::event_kinds::workmap_resync || e.value().kind == messages::event_kinds::workmap_delta_refused) {
      auto src = e.value().detail.find("src");
      if (src != e.value().detail.end() && src->second == in.name) in.resync = true;
    }
    if (in.events.size() >= 100000)
      ++in.dropped_events;
    else
      in.events.push_back(std::move(e.value()));
  }
}

messages::heartbeat heartbeat_of(const node_def& n) {
  messages::heartbeat hb;
  hb.node = n.name;
  hb.ip = "127.0.0.1";  // informational; simulated agents all live in this process
  hb.memory_mb = n.memory_mb;
  hb.memory_total_mb = n.memory_mb;
  return hb;
}

std::vector<std::string> users_of(const scenario& sc) {
  std::set<std::string> users;
  for (const auto& j : sc.jobs) users.insert(j.user);
  return {users.begin(), users.end()};
}

}  // namespace

driver_outcome run_simulation(const scenario& sc, const driver_options& options, std::ostream& progress,
                              const std::function<bool()>& interrupted) {
  driver_outcome out;
  zmq::context_t ctx;  // declared first, destroyed last: its destructor waits for every socket to close
  inbox in;
  in.name = options.name;

  bus::publisher_options po;
  po.name = options.name;
  po.endpoint = options.bus_pub;
  po.curve = options.curve;
  bus::publisher pub{ctx, po};
  bus::subscriber_options so;
  so.name = options.name;
  so.endpoint = options.bus_sub;
  so.curve = options.curve;
  so.topics = {std::string{messages::topics::rm_state}, std::string{messages::topics::rm_nodes},
               std::string{messages::topics::rm_events}};
  bus::subscriber_handlers handlers;
  handlers.on_message = [&in](bus::bus_message&& m) { on_bus_message(in, std::move(m)); };
  bus::subscriber sub{ctx, so, handlers};
  sub.start();

  const auto& nodes = sc.cluster.nodes;
  const auto hb_period = std::chrono::milliseconds(sc.cluster.heartbeat_ms);
  const auto publish_period = std::chrono::milliseconds(sc.orchestrator.publish_ms);

  // ---- warm-up: make the nodes known and wait for the RM's first schedule, with every node of the scenario
  // up in its view. (An RM that ran an earlier simulation still counts that run's nodes for a while; they
  // are not waited for: shares placed on them fail to launch, see orchestrator_model.)
  std::set<std::string> our_nodes;
  for (const auto& n : nodes) our_nodes.insert(n.name);
  const auto nodes_up_in_rm = [&]() {  // REQUIRES: in.mu held
    std::size_t up = 0;
    if (in.nodes)
      for (const auto& n : in.nodes->nodes)
        if (n.state == messages::node_state::up && our_nodes.count(n.node) != 0) ++up;
    return up;
  };
  const auto warm_start = steady::now();
  const auto ready_deadline = warm_start + options.ready_timeout;
  // Jobs (kind job) are what the progress line's `done D/N` counts; services, APs and reservations have no
  // natural end and are named apart, so the two counts agree.
  std::size_t job_count = 0;
  for (const auto& j : sc.jobs) job_count += j.kind == messages::work_kind::job ? 1 : 0;
  progress << "rmbus-sim: " << sc.name << ": " << nodes.size() << " nodes (" << sc.cluster.nodes_description
           << "), " << job_count << " jobs";
  if (sc.jobs.size() > job_count)
    progress << " and " << sc.jobs.size() - job_count << " services / APs / reservations";
  progress << "; publishing to " << options.bus_pub << ", subscribed at " << options.bus_sub
           << "; waiting for the RM's first rm.state\n"
           << std::flush;
  {
    auto next_beat = warm_start;
    auto next_map = warm_start;
    // While it waits, the RM's own word on why it does not schedule yet (rm.events not_scheduling: its
    // start-up window and the time left, or no work map), said when it changes and every 5 s, so a person
    // watching the embedded default's minute-long window sees it count down rather than one silent line.
    std::string said_reason;
    auto said_at = warm_start;
    for (std::uint64_t guard = 0; guard < 10'000'000; ++guard) {
      const auto now = steady::now();
      std::optional<messages::not_scheduling> why;
      {
        std::lock_guard<std::mutex> lock(in.mu);
        if (in.state && nodes_up_in_rm() == nodes.size()) break;
        for (const auto& e : in.events)
          if (auto n = messages::not_scheduling_of(e)) why = std::move(n);
        in.events.clear();
      }
      if (why && (why->reason != said_reason || now - said_at >= std::chrono::seconds(5))) {
        progress << "rmbus-sim: the RM says: " << messages::describe(*why) << "\n" << std::flush;
        said_reason = why->reason;
        said_at = now;
      }
      if (now >= ready_deadline || interrupted()) break;
      if (now >= next_beat) {
        for (const auto& n : nodes) pub.publish(messages::topics::heartbeat, heartbeat_of(n));
        next_beat = now + hb_period;
      }
      if (now >= next_map) {
        pub.publish(messages::topics::workmap, messages::workmap{});
        next_map = now + publish_period;
      }
      std::unique_lock<std::mutex> lock(in.mu);
      in.cv.wait_until(lock, std::min({next_beat, next_map, ready_deadline}),
                       [&] { return in.state.has_value() && nodes_up_in_rm() == nodes.size(); });
    }
  }
  std::size_t up_at_start = 0;
  {
    std::lock_guard<std::mutex> lock(in.mu);
    out.ready = in.state.has_value();
    up_at_start = nodes_up_in_rm();
    in.fresh_state = false;  // the warm-up schedule knows none of our work
    in.state.reset();
    in.events.clear();
  }
  if (!out.ready) {
    sub.stop();
    return out;
  }
  progress << "rmbus-sim: the RM answered after "
           << std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - warm_start).count()
           << " ms with " << up_at_start << " of " << nodes.size()
           << " nodes up; scenario time starts now (speed " << options.speed << ")\n"
           << std::flush;
  if (up_at_start < nodes.size())
    spdlog::warn("only {} of the scenario's {} nodes were up in the RM's view when the ready timeout ended",
                 up_at_start, nodes.size());

  // ---- the scenario.
  const auto t0 = steady::now();
  const auto scen_ms = [&](steady::time_point t) {
    const double wall =
        static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(t - t0).count()) / 1000.0;
    return static_cast<std::int64_t>(std::floor(wall * options.speed));
  };
  const auto wall_of = [&](std::int64_t scenario_ms) {
    const double wall_ms = static_cast<double>(scenario_ms) / options.speed;
    if (wall_ms > 1e12) return steady::time_point::max();
    return t0 + std::chrono::microseconds(static_cast<std::int64_t>(std::ceil(wall_ms * 1000.0)));
  };
  // The bus-facing periods are wall clock; the models run in scenario time, so scale them by the speed.
  heartbeat_timing hbt;
  hbt.period_ms =
      std::max<std::int64_t>(1, std::llround(static_cast<double>(sc.cluster.heartbeat_ms) * options.speed));
  hbt.jitter_ms = std::min<std::int64_t>(
      hbt.period_ms - 1, std::llround(static_cast<double>(sc.cluster.jitter_ms) * options.speed));
  agent_model agents{nodes, sc.failures, hbt, sc.seed};
  std::map<std::string, std::uint64_t> node_memory;
  for (const auto& n : nodes) node_memory[n.name] = n.memory_mb;
  const auto epoch_ms = static_cast<std::int64_t>(bus::wall_clock_ms());
  orchestrator_model orch{sc.jobs, sc.orchestrator, epoch_ms, node_memory, options.drain_on_reclaim};
  std::set<std::string> job_ids;
  for (const auto& j : sc.jobs) job_ids.insert(j.id);
  recorder rec{users_of(sc), sc.classes, sc.cluster.quantum_mb, job_ids};

  std::optional<messages::rm_state> state;
  std::optional<messages::rm_nodes> rm_nodes;
  std::size_t jobs_total = 0;
  for (const auto& j : sc.jobs) jobs_total += j.kind == messages::work_kind::job ? 1 : 0;
  // A refused job ends without running: it is counted as refused, never as done.
  auto jobs_done = [&] {
    std::size_t n = 0;
    for (const auto& j : orch.jobs())
      n += j.kind == messages::work_kind::job && j.completed_ms && !j.refused ? 1 : 0;
    return n;
  };
  auto jobs_refused = [&] {
    std::size_t n = 0;
    for (const auto& j : orch.jobs()) n += j.kind == messages::work_kind::job && j.refused ? 1 : 0;
    return n;
  };

  const auto end_of_run = t0 + options.run_limit;
  auto next_publish = t0;
  // Delta mode: the map as published last (full or delta) and its seq, the base of the next delta.
  std::map<std::string, messages::work_item> published;
  std::uint64_t published_seq = 0;
  auto next_summary = t0 + options.summary_every;
  std::string end_reason = "time limit (--seconds)";
  std::int64_t now = 0;
  for (std::uint64_t guard = 0; guard < 100'000'000; ++guard) {
    const auto wall_now = steady::now();
    now = scen_ms(wall_now);

    // Node failures first: they happened at their own times, before whatever the RM says now.
    const agent_step step = agents.advance(now);
    for (const auto& tr : step.transitions) {
      const auto& name = nodes[tr.node].name;
      if (tr.up)
        orch.node_up(name, tr.at_ms);
      else
        orch.node_down(name, tr.at_ms);
      char when[32];
      std::snprintf(when, sizeof when, "[%8.1f s] ", static_cast<double>(tr.at_ms) / 1000.0);
      progress << when << "node " << name << (tr.up ? " is back up" : " goes down") << "\n";
    }
    for (std::size_t i : step.heartbeats) pub.publish(messages::topics::heartbeat, heartbeat_of(nodes[i]));

    // What the RM said since the last step.
    std::vector<messages::rm_event> events;
    bool fresh = false;
    {
      std::lock_guard<std::mutex> lock(in.mu);
      if (in.fresh_state) {
        state = in.state;
        fresh = true;
        in.fresh_state = false;
      }
      if (in.nodes) rm_nodes = in.nodes;
      events.assign(in.events.begin(), in.events.end());
      in.events.clear();
    }
    for (const auto& e : events) {
      rec.observe_event(e);
      if (spdlog::should_log(spdlog::level::debug)) {
        std::string detail;
        for (const auto& [k, v] : e.detail) detail += " " + k + "=" + v;
        spdlog::debug("[{:.1f} s] rm.events {}:{}", static_cast<double>(now) / 1000.0, e.kind, detail);
      }
    }
    if (fresh) {
      rec.observe_state(*state);
      orch.on_state(*state, now);
    }

    bool resync = false;
    if (options.deltas) {
      std::lock_guard<std::mutex> lock(in.mu);
      resync = std::exchange(in.resync, false);
    }
    if (wall_now >= next_publish || resync) {
      auto map = orch.workmap(now);
      {
        std::lock_guard<std::mutex> lock(in.mu);
        map.rm_epoch = in.fence.echo();  // HA: the highest epoch acted on; absent with HA off
        map.rm_cycle = in.fence.echo_cycle();
      }
      published_seq = pub.publish(messages::topics::workmap, map).seq;
      ++out.full_maps;
      out.resyncs += resync ? 1 : 0;
      if (options.deltas) {
        published.clear();
        for (auto& w : map.work) published.emplace(w.id, std::move(w));
      }
      rec.sample_now(now, orch.jobs(), state ? &*state : nullptr, rm_nodes ? &*rm_nodes : nullptr,
                     agents.nodes_up(now));
      next_publish = std::max(next_publish + publish_period, wall_now);
    } else if (options.deltas && published_seq != 0) {
      // Between full maps: what changed since the map published last, if anything, as a delta on it.
      auto map = orch.workmap(now);
      std::map<std::string, messages::work_item> current;
      for (auto& w : map.work) current.emplace(w.id, std::move(w));
      auto delta = messages::make_workmap_delta(published_seq, published, current);
      if (!delta.added.empty() || !delta.changed.empty() || !delta.removed.empty()) {
        {
          std::lock_guard<std::mutex> lock(in.mu);
          delta.rm_epoch = in.fence.echo();
          delta.rm_cycle = in.fence.echo_cycle();
        }
        published_seq = pub.publish(messages::topics::workmap, delta).seq;
        ++out.deltas;
        published = std::move(current);
      }
    }
    if (options.summary_every.count() > 0 && wall_now >= next_summary && !rec.samples().empty()) {
      progress << progress_line(rec.samples().back(), rec.users(), nodes.size(), jobs_done(), jobs_total,
                                jobs_refused())
               << "\n"
               << std::flush;
      next_summary = std::max(next_summary + options.summary_every, wall_now);
    }

    if (sc.duration_ms ? now >= *sc.duration_ms : orch.finished()) {
      end_reason = sc.duration_ms ? "duration reached" : "all work done";
      break;
    }
    if (wall_now >= end_of_run) break;
    if (interrupted()) {
      end_reason = "interrupted";
      break;
    }

    auto wake = std::min({next_publish, end_of_run, wall_of(agents.next_due_ms())});
    if (options.summary_every.count() > 0) wake = std::min(wake, next_summary);
    if (sc.duration_ms) wake = std::min(wake, wall_of(*sc.duration_ms));
    // Never sleep long: an interrupt is noticed within a quarter second.
    wake = std::min(wake, steady::now() + std::chrono::milliseconds(250));
    std::unique_lock<std::mutex> lock(in.mu);
    in.cv.wait_until(lock, wake, [&] { return in.fresh_state; });
  }
  // A last sample at the very end, so the time series covers the whole run.
  rec.sample_now(now, orch.jobs(), state ? &*state : nullptr, rm_nodes ? &*rm_nodes : nullptr,
                 agents.nodes_up(now));
  sub.stop();
  {
    std::lock_guard<std::mutex> lock(in.mu);
    if (in.dropped_events > 0) spdlog::warn("{} rm.events were not counted (queue full)", in.dropped_events);
  }

  run_info info;
  info.scenario = sc.name;
  info.speed = options.speed;
  info.wall_s =
      static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t0).count()) /
      1000.0;
  info.simulated_ms = now;
  info.end_reason = end_reason;
  out.figures = compute_report(rec, orch.jobs(), info);
  out.csv = render_csv(rec);
  out.svg = render_svg(rec, "rmbus-sim: " + sc.name);
  return out;
}

}  // namespace rmbus::sim
