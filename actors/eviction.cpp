// Eviction: node deaths and administrative vary-off / vary-on -> the scheduler of the node's pool.
//
// The DUCC rules themselves live in the core (core::nodepool_scheduler::machine_down evicts everything but
// unmanaged reservations; vary_off evicts fair-share work only and keeps fixed work and reservations; a node
// is unschedulable until the condition clears; blacklisting after a reconfiguration is decided when the
// fresh scheduler recovers work whose class no longer exists). This actor decides WHEN and WHERE: it keeps
// a replica of the intake's node table from its numbered changes (actors/node_replica.hpp; a snapshot only
// when out of step), turns a node's change to `down` into a `down` operation, answers the admin's vary
// requests (naming nodes it does not know), and remembers which nodes are varied off so the marks survive
// a reconfiguration, as in DUCC. A node the intake forgets (down too long, holding nothing) leaves the
// guard's queues with it. When a large part of a pool goes silent together, its evictions are paced
// (actors/mass_loss_guard.hpp) and announced with an rm.events `mass_loss` event.
#include <map>
#include <optional>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "actors/mass_loss_guard.hpp"
#include "actors/node_replica.hpp"
#include "messages/topics.hpp"

namespace rmbus::actors {

namespace {

struct eviction_state {
  actor_env env;
  envelope_stamper stamper{"eviction"};
  node_replica nodes;
  std::optional<mass_loss_guard> guard;
  std::set<std::string> offline;  // varied off
  bool reapply = false;           // re-send vary-offs after a reconfiguration
  static inline const char* name = "rmbus.eviction";
};

using eviction_actor = caf::stateful_actor<eviction_state>;

void node_op(eviction_actor* self, const std::string& node, messages::node_op_kind kind) {
  auto& st = self->state;
  const auto* e = st.nodes.find(node);
  if (e == nullptr) return;
  messages::node_ops ops;
  ops.ops.push_back({kind, node, {}, 0, false, {}});
  route(self, st.env.router, st.stamper, topics::node_topic(e->pool), std::move(ops));
}

void ask_snapshot(eviction_actor* self) {
  auto& st = self->state;
  route(self, st.env.router, st.stamper, std::string{topics::node_sync}, messages::node_sync_request{st.stamper.src(), {}});
}

// Carries out what the guard decided: evictions, and the events of mass losses that began or ended.
void act(eviction_actor* self, const mass_loss_guard::actions& a) {
  auto& st = self->state;
  const auto& sizes = st.nodes.pool_sizes();
  for (const auto& pool : a.entered) {
    const auto size = sizes.count(pool) ? sizes.at(pool) : 0;
    const auto& rt = st.env.cfg->runtime;
    spdlog::warn("pool {}: more than {}% of its {} nodes went silent within one heartbeat interval: evictions "
                 "paced to {}% of the pool per interval",
                 pool, rt.mass_loss_percent, size, rt.mass_loss_evict_percent);
    route(self, st.env.router, st.stamper, std::string{messages::topics::rm_events},
          messages::rm_event{"mass_loss",
                             {{"pool", pool},
                              {"nodes", std::to_string(size)},
                              {"reason", "more than " + std::to_string(rt.mass_loss_percent) +
                                             "% of the pool silent within one heartbeat interval: a network fault "
                                             "is likelier than dead nodes; evictions paced to " +
                                             std::to_string(rt.mass_loss_evict_percent) + "% per interval"}}});
  }
  for (const auto& pool : a.ended) {
    spdlog::info("pool {}: mass loss over", pool);
    route(self, st.env.router, st.stamper, std::string{messages::topics::rm_events},
          messages::rm_event{"mass_loss_over", {{"pool", pool}}});
  }
  for (const auto& node : a.evict) {
    spdlog::info("evicting from dead node {}", node);
    node_op(self, node, messages::node_op_kind::down);
  }
}

void after_apply(eviction_actor* self, node_replica::outcome outcome, const std::vector<liveness_change>& changes) {
  auto& st = self->state;
  if (outcome == node_replica::outcome::need_snapshot) ask_snapshot(self);
  mass_loss_guard::actions a;
  const auto now = wall_clock_ms();
  // Forgotten nodes (down too long, holding nothing) leave the guard too, in one pass per pool.
  std::map<std::string, std::set<std::string>> forgotten;
  for (const auto& c : changes)
    if (c.forgotten) forgotten[c.pool].insert(c.node);
  for (const auto& [pool, names] : forgotten) st.guard->forget(pool, names);
  for (const auto& c : changes) {
    if (c.forgotten) continue;
    const auto* e = st.nodes.find(c.node);
    if (e == nullptr) continue;
    const bool was_silent = c.before == messages::node_liveness::missing || c.before == messages::node_liveness::down;
    if (c.after == messages::node_liveness::missing && !was_silent) {
      const auto& sizes = st.nodes.pool_sizes();  // e is in the table, so its pool is counted
      const auto size = sizes.find(e->pool);
      st.guard->missing(e->pool, c.node, size == sizes.end() ? 1 : size->second, now, a);
    } else if (c.after == messages::node_liveness::down && c.before != messages::node_liveness::down) {
      st.guard->down(e->pool, c.node, now, a);
    } else if (c.after == messages::node_liveness::up && was_silent) {
      st.guard->back(e->pool, c.node);
    }
  }
  act(self, a);
  if (st.reapply && st.nodes.in_step()) {
    st.reapply = false;
    for (const auto& n : st.offline) node_op(self, n, messages::node_op_kind::vary_off);
  }
}

void on_vary(eviction_actor* self, const messages::vary_request& req) {
  auto& st = self->state;
  messages::value::array done, unknown, already;
  for (const auto& name : req.nodes) {
    if (st.nodes.find(name) == nullptr) {
      unknown.emplace_back(name);
      continue;
    }
    // Already so (varied off twice, or on while not off): listed, so that the operator knows nothing changed.
    const bool was_off = st.offline.count(name) > 0;
    if (was_off == req.off) already.emplace_back(name);
    if (req.off) st.offline.insert(name);
    else st.offline.erase(name);
    node_op(self, name, req.off ? messages::node_op_kind::vary_off : messages::node_op_kind::vary_on);
    done.emplace_back(name);
  }
  messages::admin_answer a;
  a.qid = req.qid;
  a.from = "eviction";
  a.result["nodes"] = messages::value{std::move(done)};
  a.result["unknown"] = messages::value{std::move(unknown)};
  a.result["already"] = messages::value{std::move(already)};
  route(self, st.env.router, st.stamper, std::string{topics::answer}, std::move(a));
}

mass_loss_settings guard_settings(const config::rm_config& cfg) {
  return {cfg.runtime.mass_loss_percent, cfg.runtime.mass_loss_evict_percent, cfg.runtime.heartbeat_interval_ms};
}

caf::behavior eviction(eviction_actor* self, actor_env env) {
  self->state.env = env;
  self->state.stamper = envelope_stamper{env.src("eviction")};
  self->state.guard.emplace(guard_settings(*env.cfg));
  self->delayed_send(self, std::chrono::milliseconds(env.cfg->runtime.heartbeat_interval_ms), atoms::tick::value);
  return {
      [self](atoms::probe) { return static_cast<std::uint64_t>(self->mailbox().size()); },  // health
      [self](atoms::deliver, const messages::routed_message& m) {
        auto& st = self->state;
        std::vector<liveness_change> changes;
        if (const auto* c = m.as<messages::node_changes>()) {
          after_apply(self, st.nodes.apply(m.env.src, *c, changes), changes);
        } else if (const auto* s = m.as<messages::node_snapshot>()) {
          after_apply(self, st.nodes.apply(m.env.src, *s, changes), changes);
        } else if (const auto* v = m.as<messages::vary_request>()) {
          on_vary(self, *v);
        }
      },
      [self](atoms::tick) {
        auto& st = self->state;
        mass_loss_guard::actions a;
        st.guard->tick(st.nodes.pool_sizes(), wall_clock_ms(), a);
        act(self, a);
        self->delayed_send(self, std::chrono::milliseconds(st.env.cfg->runtime.heartbeat_interval_ms),
                           atoms::tick::value);
      },
      [self](atoms::reset, config_ptr cfg) {
        self->state.guard->reconfigure(guard_settings(*cfg));
        self->state.env.cfg = std::move(cfg);
        self->state.reapply = true;
      },
  };
}

}  // namespace

caf::actor spawn_eviction(caf::actor_system& sys, actor_env env) {
  auto router = env.router;
  const std::vector<std::string> subscriptions{std::string{topics::node_changes}, std::string{topics::node_snapshot},
                                               std::string{topics::vary}};
  auto self = sys.spawn(eviction, std::move(env));
  // Subscribed from the spawning thread, so the subscriptions are in place before anything this
  // thread routes next (an actor's own start-up runs later, on a scheduler thread).
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  return self;
}

}  // namespace rmbus::actors
