// Heartbeat intake: agent.heartbeat -> the node's pool scheduler, and the heartbeat watchdog.
//
// Each heartbeat is decoded (a bad one becomes a bad_message event), placed in its nodepool by the
// configuration (config::node_placement: a node named nowhere goes to the first top-level pool), and handed to
// the scheduler of its top-level pool as an `update` (the core turns MB into an order per the pool's
// quantum). The watchdog (core::node_liveness) ticks every heartbeat interval; its transitions (up, missing
// after one missed heartbeat, down after node_stability) become rm.events and an rm.internal.nodestate
// message, from which eviction evicts dead nodes and publication reports rm.nodes.
#include <map>
#include <optional>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "config/node_placement.hpp"
#include "core/node_liveness.hpp"
#include "messages/heartbeat.hpp"
#include "messages/rm_event.hpp"
#include "messages/topics.hpp"

namespace rmbus::actors {

namespace {

struct node_info {
  std::string ip;
  std::uint64_t memory_mb = 0;
  bool quiesced = false;
  config::placement where;
};

struct intake_state {
  actor_env env;
  std::optional<config::node_placement> placement;
  std::optional<core::node_liveness> liveness;
  std::map<std::string, node_info> nodes;  // ordered: reports come out by name
  envelope_stamper stamper{"intake"};
  messages::decode_limits limits;
  static inline const char* name = "rmbus.heartbeat_intake";
};

using intake_actor = caf::stateful_actor<intake_state>;

void configure(intake_actor* self, config_ptr cfg) {
  auto& st = self->state;
  st.env.cfg = std::move(cfg);
  st.limits = limits_of(*st.env.cfg);
  st.placement.emplace(st.env.cfg->scheduling);
  core::liveness_config lc;
  lc.heartbeat_interval_ms = st.env.cfg->runtime.heartbeat_interval_ms;
  lc.node_stability = st.env.cfg->runtime.node_stability;
  if (!st.liveness) st.liveness.emplace(lc);
}

void publish_event(intake_actor* self, std::string_view kind, const std::string& node) {
  messages::rm_event ev{std::string{kind}, {{"node", node}}};
  auto topic = std::string{messages::topics::rm_events};
  route(self, self->state.env.router, topic, messages::encode(self->state.stamper.next(topic), ev));
}

void send_update(intake_actor* self, const std::string& node, const node_info& n) {
  value::map m;
  m["op"] = value{"update"};
  m["node"] = value{node};
  m["ip"] = value{n.ip};
  m["memory_mb"] = value{n.memory_mb};
  m["quiesced"] = value{n.quiesced};
  m["nodepool"] = value{n.where.nodepool};
  route_internal(self, self->state.env.router, self->state.stamper, node_topic(n.where.top_level), std::move(m));
}

// The whole node table (so a late or restarted reader is whole at once) and the transitions just seen.
void send_node_state(intake_actor* self, const std::vector<core::liveness_transition>& changes) {
  auto& st = self->state;
  value::array nodes;
  for (const auto& [name, n] : st.nodes) {
    const core::machine_id id{name};
    value::map m;
    m["node"] = value{name};
    m["pool"] = value{n.where.top_level};
    m["nodepool"] = value{n.where.nodepool};
    m["state"] = value{core::to_string(st.liveness->status(id))};
    m["missed"] = value{static_cast<std::uint64_t>(st.liveness->missed(id))};
    m["memory_mb"] = value{n.memory_mb};
    m["quiesced"] = value{n.quiesced};
    nodes.emplace_back(std::move(m));
  }
  value::array ch;
  for (const auto& t : changes) {
    value::map m;
    m["node"] = value{t.node.str()};
    m["to"] = value{core::to_string(t.to)};
    auto it = st.nodes.find(t.node.str());
    m["pool"] = value{it != st.nodes.end() ? it->second.where.top_level : std::string{}};
    ch.emplace_back(std::move(m));
  }
  value::map fields;
  fields["nodes"] = value{std::move(nodes)};
  fields["changes"] = value{std::move(ch)};
  route_internal(self, st.env.router, st.stamper, std::string{topics::node_state}, std::move(fields));
}

void on_heartbeat(intake_actor* self, const std::string& topic, const std::string& body) {
  auto& st = self->state;
  auto hb = messages::decode_heartbeat(topic, body, st.limits);
  if (!hb) {
    auto ev = messages::make_bad_message_event(hb.error());
    auto t = std::string{messages::topics::rm_events};
    route(self, st.env.router, t, messages::encode(st.stamper.next(t), ev));
    return;
  }
  const auto& h = hb.value();
  if (h.node.empty()) return;
  node_info n;
  n.ip = h.ip;
  n.memory_mb = h.memory_mb;
  n.quiesced = h.quiesced.value_or(false);
  n.where = st.placement->place(h.node, h.ip);
  auto old = st.nodes.find(h.node);
  const bool changed = old == st.nodes.end() || old->second.memory_mb != n.memory_mb ||
                       old->second.quiesced != n.quiesced;
  st.nodes[h.node] = n;
  send_update(self, h.node, n);
  auto t = st.liveness->heartbeat(core::machine_id{h.node}, wall_clock_ms());
  if (t) {
    spdlog::info("node {} up in pool {} ({} MB)", h.node, n.where.top_level, n.memory_mb);
    publish_event(self, messages::event_kinds::node_up, h.node);
    send_node_state(self, {*t});
  } else if (changed) {
    send_node_state(self, {});
  }
}

// Nodes a recovered work map names before their first heartbeat: watched from now on, as if heard once, so
// a node that never comes back goes missing and down like any other.
void on_recovered(intake_actor* self, const std::string& topic, const std::string& body) {
  auto& st = self->state;
  auto msg = decode_internal(topic, body, st.limits);
  if (!msg) return;
  const auto* nodes = array_of(msg.value().fields, "nodes");
  if (nodes == nullptr) return;
  std::vector<core::liveness_transition> changes;
  for (const auto& v : *nodes) {
    const auto* m = v.as_map();
    if (m == nullptr) continue;
    const auto name = str_of(*m, "node");
    if (name.empty() || st.liveness->known(core::machine_id{name})) continue;
    node_info n;
    n.memory_mb = uint_of(*m, "memory_mb");
    n.where = st.placement->place(name, "");
    st.nodes[name] = n;
    if (n.memory_mb > 0) send_update(self, name, n);
    if (auto t = st.liveness->heartbeat(core::machine_id{name}, wall_clock_ms())) changes.push_back(*t);
  }
  if (!changes.empty()) send_node_state(self, changes);
}

caf::behavior heartbeat_intake(intake_actor* self, actor_env env) {
  self->state.stamper = envelope_stamper{env.src("intake")};
  self->state.env = env;
  configure(self, env.cfg);
  const auto interval = std::chrono::milliseconds(env.cfg->runtime.heartbeat_interval_ms);
  self->delayed_send(self, interval, atoms::tick::value);
  return {
      [self](atoms::deliver, const std::string& topic, const std::string& body) {
        if (topic == topics::recovered) on_recovered(self, topic, body);
        else on_heartbeat(self, topic, body);
      },
      [self](atoms::tick) {
        auto& st = self->state;
        auto changes = st.liveness->tick(wall_clock_ms());
        for (const auto& t : changes) {
          const auto kind = t.to == core::node_status::down      ? messages::event_kinds::node_down
                            : t.to == core::node_status::missing ? messages::event_kinds::node_missing
                                                                 : messages::event_kinds::node_up;
          spdlog::info("node {} {} ({} missed)", t.node.str(), core::to_string(t.to), t.missed);
          publish_event(self, kind, t.node.str());
        }
        // Every tick: the missed counters moved even without a transition.
        send_node_state(self, changes);
        self->delayed_send(self, std::chrono::milliseconds(st.env.cfg->runtime.heartbeat_interval_ms),
                           atoms::tick::value);
      },
      [self](atoms::reset, config_ptr cfg) {
        // Reconfiguration: place every node again and re-announce the live ones to their (new) pools.
        configure(self, std::move(cfg));
        auto& st = self->state;
        for (auto& [name, n] : st.nodes) {
          n.where = st.placement->place(name, n.ip);
          if (st.liveness->status(core::machine_id{name}) != core::node_status::down) send_update(self, name, n);
        }
        send_node_state(self, {});
      },
  };
}

}  // namespace

caf::actor spawn_heartbeat_intake(caf::actor_system& sys, actor_env env) {
  auto router = env.router;
  const std::vector<std::string> subscriptions{std::string{messages::topics::heartbeat}, std::string{topics::recovered}};
  auto self = sys.spawn(heartbeat_intake, std::move(env));
  // Subscribed from the spawning thread, so the subscriptions are in place before anything this
  // thread routes next (an actor's own start-up runs later, on a scheduler thread).
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  return self;
}

}  // namespace rmbus::actors
