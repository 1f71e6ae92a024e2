// Phase events: changes published as delta work maps, each timed to the rm.state that answers it.
#include <algorithm>
#include <cmath>
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

#include "bus/publisher.hpp"
#include "messages/topics.hpp"
#include "tools/load/load_run.hpp"
#include "tools/load/stats.hpp"

#include "messages/workmap_delta.hpp"

namespace rmbus::load {

using namespace std::chrono_literals;

void run_events(const options& o, zmq::context_t& ctx, const load_cluster& c, events_figures& f) {
  const auto cfg = write_config(o, c, o.events_heartbeat_ms, "events");
  auto l = start(o, cfg, "events");
  const auto schedule = o.schedule_changes > 0 ? observer::schedule_topic::changes : observer::schedule_topic::state;
  observer obs{ctx, l.sub_side(), {std::string{messages::topics::rm_events}}, schedule};
  obs.orchestrator_src = "rmbus-load.orchestrator";
  stamped_publisher orch{ctx, l.pub_side(), "rmbus-load.orchestrator"};
  if (!wait_ready(ctx, l, obs, 1000)) throw std::runtime_error("rmbus (events) did not come up");
  heartbeat_loop agents{ctx, l.pub_side(), c.nodes, std::chrono::milliseconds(o.events_heartbeat_ms)};
  obs.wait([&] { return obs.last_nodes && obs.last_nodes->up >= c.nodes.size(); }, 60s);
  const std::string topic{messages::topics::workmap};
  auto work = c.work;
  work.rm_epoch = obs.fence.echo();
  work.rm_cycle = obs.fence.echo_cycle();
  auto base = orch.publish(topic, work);
  if (!obs.wait([&] { return obs.state_for_map.count(base) > 0; }, 120s))
    throw std::runtime_error("rmbus (events) did not answer the first map");
  if (obs.last_state) follow_schedule(work, obs.last_state->state);
  // A restarted RM's settle window (the first map named running processes): its rounds only report. The
  // changes are timed after it, on rounds that schedule.
  if (obs.wait([&] { return obs.settling; }, 2s)) obs.wait([&] { return obs.settled; }, 120s);
  base = orch.publish(topic, work);  // the map the first delta builds on, with the recovered processes
  obs.wait([&] { return obs.state_for_map.count(base) > 0; }, 60s);
  std::map<std::string, messages::work_item> items;
  std::vector<std::string> running;  // jobs with processes: completions take them from the back
  const messages::work_item* waiting_template = nullptr;
  for (const auto& w : work.work) {
    items.emplace(w.id, w);
    if (w.kind == messages::work_kind::job && !w.processes.empty()) running.push_back(w.id);
    if (w.kind == messages::work_kind::job && w.processes.empty() && waiting_template == nullptr) waiting_template = &w;
  }
  if (waiting_template == nullptr && !work.work.empty()) waiting_template = &work.work.front();
  obs.peek_states = true;
  obs.state_for_map.clear();
  obs.round_total_ms.clear();
  obs.round_stage_ms.clear();
  obs.changes_listed.clear();
  std::vector<std::pair<std::uint64_t, clock_type::time_point>> sent;  // (seq, when) per change
  std::vector<const char*> kinds;                                        // and what it was
  const auto t0 = clock_type::now();
  const auto cpu_before = l.sample();
  for (int i = 0; i < o.events; ++i) {
    std::this_thread::sleep_until(t0 + std::chrono::milliseconds(static_cast<std::int64_t>(i) * o.event_ms));
    messages::workmap_delta d;
    d.base_seq = base;
    d.rm_epoch = obs.fence.echo();
    d.rm_cycle = obs.fence.echo_cycle();
    if (i % 2 == 0 || running.empty()) {
      auto w = *waiting_template;
      w.id = "event-" + std::to_string(i);
      w.processes.clear();
      w.state = messages::work_state::waiting;
      w.submitted_ms = bus::wall_clock_ms();
      items.emplace(w.id, w);
      d.added.push_back(std::move(w));
      ++f.arrivals;
      kinds.push_back("arrival");
    } else {
      d.removed.push_back(running.back());
      items.erase(running.back());
      running.pop_back();
      ++f.completions;
      kinds.push_back("completion");
    }
    const auto at = clock_type::now();
    base = orch.publish(topic, d);
    sent.emplace_back(base, at);
    obs.wait([] { return true; }, 0ms);  // take what arrived; never blocks
    if (obs.full_map_requests > f.resyncs) {
      // The RM lost a delta (the bus dropped it) or refused one: it waits for a full map; send it now.
      f.resyncs = obs.full_map_requests;
      messages::workmap full;
      full.rm_epoch = obs.fence.echo();
      full.rm_cycle = obs.fence.echo_cycle();
      for (const auto& [id, w] : items) full.work.push_back(w);
      base = orch.publish(topic, full);
    }
  }
  obs.wait([&] { return !obs.state_for_map.empty() && obs.state_for_map.rbegin()->first >= base; }, 60s);
  f.rm_cpu = (l.sample().cpu_s - cpu_before.cpu_s) / seconds_since(t0);
  std::vector<std::string> detail;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    const auto& [seq, at] = sent[i];
    auto answer = obs.state_for_map.lower_bound(seq);
    if (answer == obs.state_for_map.end()) {
      ++f.unanswered;
      detail.push_back("events: change " + std::to_string(i) + " (" + kinds[i] + "): unanswered");
      continue;
    }
    f.ms.push_back(std::chrono::duration<double, std::milli>(answer->second - at).count());
    char line[128];
    std::snprintf(line, sizeof line, "events: change %zu (%s, map %llu): %.1f ms", i, kinds[i],
                  static_cast<unsigned long long>(seq), f.ms.back());
    detail.emplace_back(line);
  }
  f.rounds = obs.state_for_map.size();
  // The pools' own part of the path (rm.cycle total: apply_work + schedule) in the rounds of the changes.
  f.round_ms = obs.round_total_ms;
  f.round_stages = obs.round_stage_ms;
  f.changes_listed = obs.changes_listed;
  f.rss_mb = l.sample().rss_kb / 1024.0;
  // The baseline of the same run: the same cluster's map, now sent whole, a few times.
  messages::workmap now;
  now.rm_epoch = obs.fence.echo();
  now.rm_cycle = obs.fence.echo_cycle();
  for (const auto& [id, w] : items) now.work.push_back(w);
  for (int k = 0; k < 5; ++k) {
    obs.wait([] { return false; }, 500ms);
    const auto at = clock_type::now();
    const auto seq = orch.publish(topic, now);
    if (obs.wait([&] { return obs.state_for_map.count(seq) > 0; }, 60s))
      f.full_ms.push_back(std::chrono::duration<double, std::milli>(obs.state_for_map[seq] - at).count());
  }
  std::printf("events: %zu changes as deltas every %d ms (%zu arrivals, %zu completions) -> %s: median %.1f ms, "
              "p99 %.1f ms, max %.1f ms; %zu rounds answered them, %d unanswered; full map of the same cluster "
              "(median of %zu): %.1f ms; resident %.0f MB; full maps the RM asked for: %llu\n",
              sent.size(), o.event_ms, f.arrivals, f.completions,
              o.schedule_changes > 0 ? "rm.schedule.changes" : "rm.state", median(f.ms), percentile(f.ms, 99),
              percentile(f.ms, 100), f.rounds, f.unanswered, f.full_ms.size(), median(f.full_ms), f.rss_mb,
              static_cast<unsigned long long>(f.resyncs));
  // The whole process, heartbeats included: what a change costs beside its round shows here, not in latency.
  std::printf("events: the RM's CPU while the changes ran: %.1f%% of one core (heartbeats included)\n",
              100 * f.rm_cpu);
  std::printf("events: the pool's round (rm.cycle total) in those rounds: median %.1f ms, p99 %.1f ms (%zu rounds)\n",
              median(f.round_ms), percentile(f.round_ms, 99), f.round_ms.size());
  auto stage_median = [&](double observer::round_stages::*stage) {
    std::vector<double> ms;
    for (const auto& r : f.round_stages) ms.push_back(r.*stage);
    return median(ms);
  };
  std::printf("events: of which (medians) How Much with the job caps %.1f ms, What Of %.1f ms, preemption %.1f ms, "
              "defragmentation %.1f ms, the rest (the work's apply, the plan) %.1f ms\n",
              stage_median(&observer::round_stages::how_much), stage_median(&observer::round_stages::what_of),
              stage_median(&observer::round_stages::preempt), stage_median(&observer::round_stages::defrag),
              stage_median(&observer::round_stages::rest));
  if (o.events_detail) {
    for (const auto& line : detail) std::printf("%s\n", line.c_str());
    // In the order they were seen; a round's jobs listed are those of the rm.schedule.changes seen in its place.
    for (std::size_t i = 0; i < f.round_stages.size() && i < f.round_ms.size(); ++i) {
      const auto& r = f.round_stages[i];
      std::string listed;
      if (i < f.changes_listed.size())
        listed = ", " + std::to_string(std::lround(f.changes_listed[i])) + " jobs listed";
      std::printf("events: round %zu: %.1f ms (How Much %.1f, What Of %.1f, preemption %.1f, defragmentation %.1f, "
                  "the rest %.1f)%s\n",
                  i, f.round_ms[i], r.how_much, r.what_of, r.preempt, r.defrag, r.rest, listed.c_str());
    }
  }
  if (!f.changes_listed.empty())
    std::printf("events: jobs each rm.schedule.changes listed (changed, new or removed): median %.0f, max %.0f "
                "(%zu messages)\n",
                median(f.changes_listed), percentile(f.changes_listed, 100), f.changes_listed.size());
}

}  // namespace rmbus::load
