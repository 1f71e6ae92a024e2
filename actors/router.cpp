// The router: how an actor reaches another without knowing where it runs.
//
// Actors send (route, topic, body) here. The router hands the bytes to every LOCAL actor subscribed to a
// prefix of the topic, and, when the process runs only some roles (`split`), also publishes rm.internal.*
// topics on the bus so the actors of other processes receive them. External topics (rm.state, rm.nodes,
// rm.cycle, rm.events) always go to the bus. What arrives from the bus (inbound) is delivered locally,
// except our own echoes: an internal message whose `src` starts with this process's instance name.
#include <algorithm>
#include <vector>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "bus/bridge.hpp"
#include "messages/topics.hpp"

namespace rmbus::actors {

namespace {

struct router_state {
  std::vector<std::pair<std::string, caf::actor>> subs;
  caf::actor outbound;
  std::string instance;
  bool split = false;
  static inline const char* name = "rmbus.router";
};

bool is_internal(const std::string& topic) { return topic.rfind(messages::topics::rm_internal_prefix, 0) == 0; }

void deliver_locally(caf::stateful_actor<router_state>* self, const std::string& topic, const std::string& body) {
  for (const auto& [prefix, who] : self->state.subs)
    if (topic.rfind(prefix, 0) == 0) self->send(who, atoms::deliver::value, topic, body);
}

caf::behavior router(caf::stateful_actor<router_state>* self, caf::actor outbound, std::string instance, bool split) {
  self->state.outbound = std::move(outbound);
  self->state.instance = instance;
  self->state.split = split;
  self->set_down_handler([self](const caf::down_msg& dm) {
    auto& subs = self->state.subs;
    subs.erase(std::remove_if(subs.begin(), subs.end(), [&](const auto& s) { return s.second.address() == dm.source; }),
               subs.end());
  });
  return {
      [self](atoms::publish, caf::actor outbound) { self->state.outbound = std::move(outbound); },
      [self](atoms::subscribe, std::string prefix, caf::actor who) {
        self->monitor(who);
        self->state.subs.emplace_back(std::move(prefix), std::move(who));
      },
      [self](atoms::route, std::string topic, std::string body) {
        deliver_locally(self, topic, body);
        const bool to_bus = !is_internal(topic) || self->state.split;
        // The body is already encoded with its sender's own envelope (src "<instance>:<role>", per-topic
        // seq): the bridge's publisher sends it as is.
        if (to_bus && self->state.outbound)
          self->send(self->state.outbound,
                     bus::outbound_message{topic, [body](const messages::envelope&) { return body; }});
      },
      [self](bus::outbound_message& m) {
        // A ready-made outbound message (the runtime's flush marker at shutdown): in order with the rest.
        if (self->state.outbound) self->send(self->state.outbound, std::move(m));
      },
      [self](bus::bus_message& m) {
        if (is_internal(m.topic) && m.env.src.rfind(self->state.instance + ":", 0) == 0) return;  // our echo
        deliver_locally(self, m.topic, m.body);
      },
      [](const bus::bad_message& m) {
        // The bridge counts it and publishes the bad_message event itself; log it here.
        spdlog::warn("bad message on the bus: {}", m.error.message());
      },
  };
}

}  // namespace

caf::actor spawn_router(caf::actor_system& sys, caf::actor outbound, std::string instance, bool split) {
  return sys.spawn(router, std::move(outbound), std::move(instance), split);
}

}  // namespace rmbus::actors
