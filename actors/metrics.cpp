// Metrics: what this process does, recorded in the process's Prometheus registry.
//
// A thin shell over rm_metrics (actors/rm_metrics.hpp). It subscribes at the router to the typed messages
// the other actors of this process already hold (rm.state, rm.cycle, rm.nodes, rm.events as published, and
// the intake's node changes) and makes one call for each; it decodes nothing, and it never sends anything.
// The bus subscriber's statistics are not its business: the runtime copies them at scrape time
// (bus_metrics).
//
// Only messages stamped by this very process count (their src starts with this process's instance name):
// in a split layout the process running `publisher` reports the schedule, the one running `intake` the
// heartbeats, and every process its own bus.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "actors/rm_metrics.hpp"
#include "messages/topics.hpp"

namespace rmbus::actors {

namespace {

struct metrics_state {
  actor_env env;
  std::optional<rm_metrics> model;
  static inline const char* name = "rmbus.metrics";
};

using metrics_actor = caf::stateful_actor<metrics_state>;

void on_message(metrics_actor* self, const messages::routed_message& msg) {
  auto& st = self->state;
  if (!st.env.is_local(msg.env.src)) return;
  auto& m = *st.model;
  if (const auto* s = msg.as<messages::rm_state>()) m.on_state(*s, msg.env.seq);
  else if (const auto* c = msg.as<messages::rm_cycle>()) m.on_cycle(*c);
  else if (const auto* n = msg.as<messages::rm_nodes>()) m.on_nodes(*n);
  else if (const auto* e = msg.as<messages::rm_event>()) m.on_event(*e);
  else if (const auto* b = msg.as<messages::node_changes>()) m.on_node_changes(*b);
}

caf::behavior metrics(metrics_actor* self, actor_env env, std::shared_ptr<const rm_metric_families> families) {
  auto& st = self->state;
  st.env = env;
  st.model.emplace(std::move(families), rm_metrics_settings_of(*env.cfg));
  return {
      [self](atoms::probe) { return static_cast<std::uint64_t>(self->mailbox().size()); },  // health
      [self](atoms::deliver, const messages::routed_message& m) { on_message(self, m); },
      [self](atoms::reset, config_ptr cfg) {
        auto& st = self->state;
        st.env.cfg = cfg;
        st.model->reconfigure(rm_metrics_settings_of(*cfg));
      },
  };
}

}  // namespace

caf::actor spawn_metrics(caf::actor_system& sys, actor_env env, std::shared_ptr<const rm_metric_families> families) {
  auto router = env.router;
  const std::vector<std::string> subscriptions{
      std::string{messages::topics::rm_state}, std::string{messages::topics::rm_cycle},
      std::string{messages::topics::rm_nodes}, std::string{messages::topics::rm_events},
      std::string{topics::node_changes}};
  auto self = sys.spawn(metrics, std::move(env), std::move(families));
  // Subscribed from the spawning thread, before the role actors exist, so it sees their first messages.
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  return self;
}

}  // namespace rmbus::actors
