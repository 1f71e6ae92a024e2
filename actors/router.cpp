// The router: how an actor reaches another without knowing where it runs.
//
// Actors send typed messages here (route, routed_message). The router hands the shared payload to every
// LOCAL actor subscribed to a prefix of its topic (nothing is encoded), and passes it to the bus publisher
// when the topic leaves the process: always for the RM's public outputs (rm.state, rm.nodes, rm.cycle,
// rm.events, rm.marks), and for rm.internal.* topics when this process runs only some roles (`split`). The encoding
// happens on the publisher's own thread, with the sender's envelope, so the router never pays for it.
//
// From the bus (inbound): an rm.internal.* message of another process is decoded once, straight into its
// struct (messages::decode_payload, chosen by topic), and delivered like a local one; our own echoes (src
// starting with this process's instance name) are dropped. Public inputs (agent.heartbeat,
// orchestrator.workmap) are delivered as their bytes, which their one consumer decodes; heartbeats come from
// the bridge in batches (one per drain of the socket, bus::bus_batch) and go on as such. With HA, the RM outputs
// of OTHER processes (rm.ha, rm.state, rm.marks) arrive as bytes too, only to the actors that asked with
// `listen` (the HA actor, eviction): this process's own actors read its own outputs typed, and never another
// RM's.
//
// HA (actors/ha_gate.hpp): the fence is checked here, where every message leaves for the bus. While the
// process may not publish (a standby, a deposed or paused active), nothing of rm.state, rm.nodes, rm.cycle,
// rm.events, rm.marks or rm.internal.* leaves it, except rm.events of kind ha_* (a standby says it stepped down); rm.ha
// always does. What leaves carries the active's epoch in its envelope. A standby also takes no rm.internal.*
// from the bus: its state is its own actors', and another head's internal messages are not for it.
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
  std::vector<std::pair<std::string, caf::actor>> listeners;  // RM outputs of other processes, as bytes
  std::shared_ptr<ha_gate> ha;
  std::uint64_t fenced = 0;  // messages kept off the bus by the HA gate (logged now and then)
  caf::actor outbound;
  std::string instance;
  bool split = false;
  messages::decode_limits limits;
  envelope_stamper stamper{"router"};
  static inline const char* name = "rmbus.router";
};

using router_actor = caf::stateful_actor<router_state>;

bool is_internal(std::string_view topic) { return topic.rfind(messages::topics::rm_internal_prefix, 0) == 0; }

bool has_prefix(std::string_view topic, std::string_view prefix) { return topic.rfind(prefix, 0) == 0; }

void deliver_locally(router_actor* self, const messages::routed_message& m) {
  for (const auto& [prefix, who] : self->state.subs)
    if (has_prefix(m.topic, prefix)) self->send(who, atoms::deliver::value, m);
}

bool is_rm_output(std::string_view topic) {
  using namespace messages::topics;
  return topic == rm_state || topic == rm_nodes || topic == rm_cycle || topic == rm_events ||
         topic == rm_schedule_changes || topic == rm_marks;
}

bool is_ha_event(const messages::routed_message& m) {
  const auto* e = m.as<messages::rm_event>();
  return e != nullptr && e->kind.rfind("ha_", 0) == 0;
}

void to_bus(router_actor* self, const messages::routed_message& m) {
  auto& st = self->state;
  if (!st.outbound) return;
  auto env = m.env;
  if (st.ha && m.topic != messages::topics::rm_ha) {
    if (!st.ha->may_publish() && !(m.topic == messages::topics::rm_events && is_ha_event(m))) {
      if (is_rm_output(m.topic) && (st.fenced++ % 1000) == 0)
        spdlog::debug("HA: not the active RM (or its lease ran out): {} kept off the bus ({} so far)", m.topic,
                      st.fenced);
      return;
    }
    if (is_rm_output(m.topic)) env.epoch = st.ha->epoch();
  }
  // The body was stamped by its sender (src "<instance>:<role>", per-topic seq): the publisher sends it as is.
  self->send(st.outbound, bus::outbound_message{m.topic, [env = std::move(env), body = m.body](const messages::envelope&) {
                                                  return messages::encode_payload(env, *body);
                                                }});
}

void route(router_actor* self, const messages::routed_message& m) {
  deliver_locally(self, m);
  if (!is_internal(m.topic) || self->state.split) to_bus(self, m);
}

// A batch of public inputs of one topic (heartbeats) goes on whole, moved to its last consumer.
void on_inbound_batch(router_actor* self, bus::bus_batch& b) {
  const caf::actor* last = nullptr;
  for (const auto& [prefix, who] : self->state.subs) {
    if (!has_prefix(b.topic, prefix)) continue;
    if (last != nullptr) self->send(*last, atoms::deliver::value, b);
    last = &who;
  }
  if (last != nullptr) self->send(*last, atoms::deliver::value, std::move(b));
}

void on_inbound(router_actor* self, bus::bus_message& m) {
  auto& st = self->state;
  if (!is_internal(m.topic)) {
    // Public inputs go to their consumers; RM outputs (another RM's, with HA) only to those listening.
    // The last consumer gets the bytes moved, not copied (a heartbeat has one: the intake).
    const auto& targets = has_prefix(m.topic, "rm.") ? st.listeners : st.subs;
    const caf::actor* last = nullptr;
    for (const auto& [prefix, who] : targets) {
      if (!has_prefix(m.topic, prefix)) continue;
      if (last != nullptr) self->send(*last, atoms::deliver::value, m.topic, m.body);
      last = &who;
    }
    if (last != nullptr) self->send(*last, atoms::deliver::value, std::move(m.topic), std::move(m.body));
    return;
  }
  if (m.env.src.rfind(st.instance + ":", 0) == 0) return;  // our own echo
  if (st.ha && !st.ha->active()) return;  // a standby keeps its own state; another head's is not for it
  if (m.topic == messages::internal_topics::flush) return;  // another process stopping: nothing to deliver
  messages::envelope env;
  auto p = messages::decode_payload(m.topic, m.body, st.limits, &env);
  if (!p) {
    // Another process of the RM sent what this one cannot read (another version, or damage on the way):
    // reported like any bad message, never delivered half-read.
    spdlog::warn("router: {}", p.error().message());
    route(self, messages::routed_message{std::string{messages::topics::rm_events},
                                         st.stamper.next(messages::topics::rm_events),
                                         std::make_shared<const messages::payload>(
                                             messages::make_bad_message_event(p.error()))});
    return;
  }
  deliver_locally(self, messages::routed_message{std::move(m.topic), std::move(env),
                                                 std::make_shared<messages::payload>(std::move(p.value()))});
}

caf::behavior router(router_actor* self, caf::actor outbound, std::string instance, bool split,
                     messages::decode_limits limits, std::shared_ptr<ha_gate> ha) {
  auto& st = self->state;
  st.ha = std::move(ha);
  st.outbound = std::move(outbound);
  st.stamper = envelope_stamper{instance + ":router"};
  st.instance = std::move(instance);
  st.split = split;
  st.limits = limits;
  self->set_down_handler([self](const caf::down_msg& dm) {
    auto& subs = self->state.subs;
    for (auto* list : {&subs, &self->state.listeners})
      list->erase(std::remove_if(list->begin(), list->end(),
                                 [&](const auto& s) { return s.second.address() == dm.source; }),
                  list->end());
  });
  return {
      [self](atoms::probe) { return static_cast<std::uint64_t>(self->mailbox().size()); },  // health
      [self](atoms::publish, caf::actor outbound) { self->state.outbound = std::move(outbound); },
      [self](atoms::subscribe, std::string prefix, caf::actor who) {
        self->monitor(who);
        self->state.subs.emplace_back(std::move(prefix), std::move(who));
      },
      [self](atoms::listen, std::string prefix, caf::actor who) {
        self->monitor(who);
        self->state.listeners.emplace_back(std::move(prefix), std::move(who));
      },
      [self](atoms::route, const messages::routed_message& m) { route(self, m); },
      [self](bus::outbound_message& m) {
        // A ready-made outbound message (the runtime's flush marker at shutdown): in order with the rest.
        if (self->state.outbound) self->send(self->state.outbound, std::move(m));
      },
      [self](bus::bus_message& m) { on_inbound(self, m); },
      [self](bus::bus_batch& b) { on_inbound_batch(self, b); },
      [](const bus::bad_message& m) {
        // The bridge counts it and publishes the bad_message event itself; log it here.
        spdlog::warn("bad message on the bus: {}", m.error.message());
      },
  };
}

}  // namespace

caf::actor spawn_router(caf::actor_system& sys, caf::actor outbound, std::string instance, bool split,
                        messages::decode_limits limits, std::shared_ptr<ha_gate> ha) {
  return sys.spawn(router, std::move(outbound), std::move(instance), split, limits, std::move(ha));
}

}  // namespace rmbus::actors
