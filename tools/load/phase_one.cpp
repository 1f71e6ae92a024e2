// Phases startup, intake and latency against one rmbus running every role, and latency alone in another layout.
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

void run_one(const options& o, zmq::context_t& ctx, const load_cluster& c, run_figures& f) {
  const auto cfg = write_config(o, c, 1000, "one");
  auto l = start(o, cfg, "one");
  // The raw ceiling's topic: one the RM does not read; under CURVE an rm.* one, which the forwarder's role
  // check passes for rmbus-load's key (role rm).
  const std::string raw_topic = o.keys ? "rm.load.raw" : "load.raw";
  // rm.events only to see the settle window (its node_up events would load the observer in the intake phase).
  std::vector<std::string> extra{raw_topic};
  if (o.latency_after_settle) extra.push_back(std::string{messages::topics::rm_events});
  observer obs{ctx, l.sub_side(), extra};
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
    f.one = measure_latency(orch, obs, c, o.maps, o.latency_after_settle);
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
    // The RM: raise the rate a quarter at a time until heartbeats are late (not all counted within 250 ms of the
    // step's end): the last step on time is the RM's own ceiling. Should rmbus-load's one sending thread fall
    // short of the rate offered first (its own ceiling), the RM kept up with all it could be given, and that
    // is said instead of a ceiling. Bounded: at most 30 steps, none above 5,000,000 a second.
    bool late = false, sender_short = false;
    double rate = 25'000;
    for (int step_no = 0; step_no < 30 && rate <= 5'000'000 && !late && !sender_short; ++step_no, rate *= 1.25) {
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
      sender_short = sent_s > 1.2 * step;
      std::printf("intake step %7.0f/s offered (sent in %.2f s): %.0f of %zu counted in %.2f s = %.0f/s%s%s\n", rate,
                  sent_s, counted, n, done_s, absorbed, on_time ? "" : "  (late)",
                  sender_short ? "  (the sender could not offer this rate)" : "");
      f.intake_peak = std::max(f.intake_peak, absorbed);
      late = !on_time;
      if (on_time) f.intake_sustained = std::max(f.intake_sustained, n / sent_s);
    }
    f.intake_ceiling_reached = late;
    std::printf("intake: %.0f heartbeats/s absorbed on time (peak %.0f/s); %s; raw cppzmq PUB/SUB ceiling through "
                "the same forwarder: %.0f/s; ratio %.2f\n",
                f.intake_sustained, f.intake_peak,
                late ? "the RM's own ceiling (the next step was late)"
                     : "the RM kept up with every step rmbus-load could offer (its ceiling lies above)",
                f.raw_ceiling, f.raw_ceiling > 0 ? f.intake_sustained / f.raw_ceiling : 0);
    obs.decode_states = true;
  }
}

latency_result run_latency_only(const options& o, zmq::context_t& ctx, const load_cluster& c, const std::string& how) {
  const auto cfg = write_config(o, c, 1000, how);
  auto l = start(o, cfg, how);
  observer obs{ctx, l.sub_side(),
               o.latency_after_settle ? std::vector<std::string>{std::string{messages::topics::rm_events}}
                                      : std::vector<std::string>{}};
  stamped_publisher orch{ctx, l.pub_side(), "rmbus-load.orchestrator"};
  if (!wait_ready(ctx, l, obs, 1000)) throw std::runtime_error("rmbus (" + how + ") did not come up");
  heartbeat_loop agents{ctx, l.pub_side(), c.nodes, 1000ms};
  obs.wait([&] { return obs.last_nodes && obs.last_nodes->up >= c.nodes.size(); }, 60s);
  return measure_latency(orch, obs, c, o.maps, o.latency_after_settle);
}

}  // namespace rmbus::load
