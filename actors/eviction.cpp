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
//
// The marks are the operator's decisions, not soft state, so they go to rm.marks whenever they change (and,
// with HA, every takeover_ms): a standby's eviction makes them its own (varying its schedulers' machines off
// and on as the active's did), so the standby that takes over, after a kill or a handover, keeps every node
// out that the operator took out.
#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "actors/mass_loss_guard.hpp"
#include "actors/node_replica.hpp"
#include "messages/rm_marks.hpp"
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
  std::uint64_t bad_marks = 0;    // rm.marks of another RM that could not be read
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

void publish_marks(eviction_actor* self) {
  auto& st = self->state;
  route(self, st.env.router, st.stamper, std::string{messages::topics::rm_marks},
        messages::rm_marks{std::vector<std::string>(st.offline.begin(), st.offline.end())});
}

// A standby takes the active's marks as its own: the nodes it varied off or on since are varied off or on here
// too, so the schedulers of this process hold the same machines out when it takes over.
void adopt_marks(eviction_actor* self, const messages::rm_marks& m) {
  auto& st = self->state;
  const std::set<std::string> theirs(m.offline.begin(), m.offline.end());
  std::vector<std::string> off, on;
  std::set_difference(theirs.begin(), theirs.end(), st.offline.begin(), st.offline.end(), std::back_inserter(off));
  std::set_difference(st.offline.begin(), st.offline.end(), theirs.begin(), theirs.end(), std::back_inserter(on));
  if (off.empty() && on.empty()) return;
  for (const auto& n : off) node_op(self, n, messages::node_op_kind::vary_off);
  for (const auto& n : on) node_op(self, n, messages::node_op_kind::vary_on);
  st.offline = theirs;
  spdlog::info("HA: the active's marks taken: {} node(s) varied off ({} more, {} fewer)", st.offline.size(), off.size(),
               on.size());
}

// rm.marks of another RM (bytes, through `listen`): a standby adopts those of the active it follows, an
// epoch at least the highest it heard; the active keeps its own.
void on_marks(eviction_actor* self, const std::string& topic, const std::string& body) {
  auto& st = self->state;
  messages::envelope env;
  auto m = messages::decode_rm_marks(topic, body, limits_of(*st.env.cfg), &env);
  if (!m) {
    if (st.bad_marks++ % 100 == 0) spdlog::warn("HA: {} ({} so far)", m.error().message(), st.bad_marks);
    route(self, st.env.router, st.stamper, std::string{messages::topics::rm_events},
          messages::make_bad_message_event(m.error()));
    return;
  }
  if (st.env.is_local(env.src) || !st.env.ha || st.env.ha->active()) return;
  if (!env.epoch || *env.epoch < st.env.ha->epoch()) return;  // a deposed active's, late
  adopt_marks(self, m.value());
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
    // A node first heard after its mark was set (a standby adopting the active's marks, say): out at once.
    if (!c.before && st.offline.count(c.node) > 0) node_op(self, c.node, messages::node_op_kind::vary_off);
    const bool was_silent = c.before == messages::node_liveness::missing || c.before == messages::node_liveness::down;
    if (c.after == messages::node_liveness::missing && !was_silent) {
      const auto& sizes = st.nodes.pool_sizes();  // e is in the table, so its pool is counted
      const auto size = sizes.find(e->pool);
      st.guard->missing(e->pool, c.node, size == sizes.end() ? 1 : size->second, now, a);
    } else if (c.after == messages::node_liveness::down && c.before != messages::node_liveness::down) {
      // Out of placement at once, whatever the brake does to its work: a node reported down never looks free.
      node_op(self, c.node, messages::node_op_kind::unreachable);
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
  if (!done.empty()) publish_marks(self);
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
  if (env.ha) self->delayed_send(self, std::chrono::milliseconds(env.cfg->runtime.ha.takeover_ms), atoms::marks::value);
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
      [self](atoms::deliver, const std::string& topic, const std::string& body) { on_marks(self, topic, body); },
      [self](atoms::marks) {
        // HA: the active says its marks again, for a standby that started since.
        auto& st = self->state;
        if (st.env.ha->active()) publish_marks(self);
        self->delayed_send(self, std::chrono::milliseconds(st.env.cfg->runtime.ha.takeover_ms), atoms::marks::value);
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
  const bool ha = env.ha != nullptr;
  auto self = sys.spawn(eviction, std::move(env));
  // Subscribed from the spawning thread, so the subscriptions are in place before anything this
  // thread routes next (an actor's own start-up runs later, on a scheduler thread).
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  if (ha) caf::anon_send(router, atoms::listen::value, std::string{messages::topics::rm_marks}, self);
  return self;
}

}  // namespace rmbus::actors
