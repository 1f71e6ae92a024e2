// Metrics: what this process sees on its router, recorded in the process's Prometheus registry.
//
// A thin shell over rm_metrics (actors/rm_metrics.hpp): it subscribes at the router to the topics this process
// publishes or receives (rm.state, rm.cycle, rm.nodes, rm.events, rm.internal.nodestate, agent.heartbeat),
// decodes each with its codec and makes one call. It never sends anything. The bus subscriber's statistics are
// not its business: the runtime copies them at scrape time (bus_metrics).
//
// Only rm.state published by this very process counts towards rounds and rmbus_state_last_seq (its src starts
// with this process's instance name); in a split layout the process running `publisher` reports the schedule,
// the one running `intake` the heartbeats, and every process its own bus.
#include <chrono>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "actors/rm_metrics.hpp"
#include "messages/heartbeat.hpp"
#include "messages/topics.hpp"

namespace rmbus::actors {

namespace {

struct metrics_state {
  actor_env env;
  messages::decode_limits limits;
  std::optional<rm_metrics> model;
  static inline const char* name = "rmbus.metrics";
};

using metrics_actor = caf::stateful_actor<metrics_state>;

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void on_message(metrics_actor* self, const std::string& topic, const std::string& body) {
  auto& st = self->state;
  auto& m = *st.model;
  // Decode failures are not ours to report (the consuming actor publishes the bad_message event, which is
  // counted when it comes back through the router); they are skipped here.
  if (topic == messages::topics::heartbeat) {
    auto hb = messages::decode_heartbeat(topic, body, st.limits);
    if (hb && !hb.value().node.empty()) m.on_heartbeat(hb.value().node, steady_ms());
  } else if (topic == messages::topics::rm_state) {
    messages::envelope env;
    auto s = messages::decode_rm_state(topic, body, st.limits, &env);
    if (s && env.src.rfind(st.env.instance + ":", 0) == 0) m.on_state(s.value(), env.seq);
  } else if (topic == messages::topics::rm_cycle) {
    if (auto c = messages::decode_rm_cycle(topic, body, st.limits)) m.on_cycle(c.value());
  } else if (topic == messages::topics::rm_nodes) {
    if (auto n = messages::decode_rm_nodes(topic, body, st.limits)) m.on_nodes(n.value());
  } else if (topic == messages::topics::rm_events) {
    if (auto e = messages::decode_rm_event(topic, body, st.limits)) m.on_event(e.value());
  } else if (topic == topics::node_state) {
    auto msg = decode_internal(topic, body, st.limits);
    if (!msg) return;
    std::vector<std::pair<std::string, std::uint64_t>> counters;
    if (const auto* nodes = array_of(msg.value().fields, "nodes")) {
      for (const auto& v : *nodes)
        if (const auto* n = v.as_map()) counters.emplace_back(str_of(*n, "node"), uint_of(*n, "missed"));
    }
    m.on_watchdog(counters);
  }
}

caf::behavior metrics(metrics_actor* self, actor_env env, std::shared_ptr<const rm_metric_families> families) {
  auto& st = self->state;
  st.env = env;
  st.limits = limits_of(*env.cfg);
  st.model.emplace(std::move(families), rm_metrics_settings_of(*env.cfg));
  return {
      [self](atoms::deliver, const std::string& topic, const std::string& body) { on_message(self, topic, body); },
      [self](atoms::reset, config_ptr cfg) {
        auto& st = self->state;
        st.env.cfg = cfg;
        st.limits = limits_of(*cfg);
        st.model->reconfigure(rm_metrics_settings_of(*cfg));
      },
  };
}

}  // namespace

caf::actor spawn_metrics(caf::actor_system& sys, actor_env env, std::shared_ptr<const rm_metric_families> families) {
  auto router = env.router;
  const std::vector<std::string> subscriptions{
      std::string{messages::topics::rm_state},  std::string{messages::topics::rm_cycle},
      std::string{messages::topics::rm_nodes},  std::string{messages::topics::rm_events},
      std::string{topics::node_state},          std::string{messages::topics::heartbeat}};
  auto self = sys.spawn(metrics, std::move(env), std::move(families));
  // Subscribed from the spawning thread, before the role actors exist, so it sees their first messages.
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  return self;
}

}  // namespace rmbus::actors
