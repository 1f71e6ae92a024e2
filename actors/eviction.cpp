// Eviction: node deaths and the admin's marks on nodes (vary-off / vary-on, drain / undrain) -> the scheduler
// of the node's pool.
//
// The DUCC rules themselves live in the core (core::nodepool_scheduler::machine_down evicts everything but
// unmanaged reservations; vary_off evicts fair-share work only and keeps fixed work and reservations; a node
// is unschedulable until the condition clears; blacklisting after a reconfiguration is decided when the
// fresh scheduler recovers work whose class no longer exists). This actor decides WHEN and WHERE: it keeps
// a replica of the intake's node table from its numbered changes (actors/node_replica.hpp; a snapshot only
// when out of step), turns a node's change to `down` into a `down` operation, answers the admin's vary and
// drain requests (naming nodes it does not know), and holds the admin's marks (actors/admin_marks.hpp), so
// that they survive a reconfiguration, as in DUCC. A node the configuration names that has not reported yet
// (actors/expected_nodes.hpp) may be marked too: the mark goes to its pool's scheduler at once, which applies
// it when the node first reports, before any round could place work there. Eviction answers admin's queries
// about the nodes (rm.internal.marks): the counts for `status`, and the nodes never seen for `qoccupancy`.
// A node the intake forgets (down too long, holding nothing) leaves the guard's queues with it. When a large
// part of a pool goes silent together, its evictions are paced (actors/mass_loss_guard.hpp) and announced with
// an rm.events `mass_loss` event.
//
// The marks are the operator's decisions, not soft state, so they go to rm.marks whenever they change (and,
// with HA, every takeover_ms): a standby's eviction makes them its own (marking its schedulers' machines as
// the active's are), so the standby that takes over, after a kill or a handover, keeps every node out that the
// operator took out.
#include <fnmatch.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/admin_marks.hpp"
#include "actors/admin_values.hpp"
#include "actors/detail/spawn.hpp"
#include "actors/expected_nodes.hpp"
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
  admin_marks marks;
  expected_nodes expected;     // the nodes the configuration names
  std::set<std::string> seen;  // of those, the ones that reported since this process started (as named there)
  bool reapply = false;        // re-send the marks after a reconfiguration
  std::uint64_t bad_marks = 0;  // rm.marks of another RM that could not be read
  static inline const char* name = "rmbus.eviction";
};

using eviction_actor = caf::stateful_actor<eviction_state>;

// The top-level pool of a node: from the intake's table, else from the configuration (a node not seen yet).
std::string pool_of(const eviction_state& st, const std::string& node) {
  if (const auto* e = st.nodes.find(node)) return e->pool;
  if (const auto* x = st.expected.find(node)) return x->pool;
  return {};
}

void node_op(eviction_actor* self, const std::string& node, messages::node_op_kind kind) {
  auto& st = self->state;
  const auto pool = pool_of(st, node);
  if (pool.empty()) return;
  messages::node_ops ops;
  ops.ops.push_back({kind, node, {}, 0, false, {}});
  route(self, st.env.router, st.stamper, topics::node_topic(pool), std::move(ops));
}

// Whether a node the configuration names has reported since this process started.
bool seen(const eviction_state& st, const expected_node& x) {
  return st.seen.count(x.node) > 0 || st.nodes.find(x.node) != nullptr;
}

void reapply_marks(eviction_actor* self) {
  auto& st = self->state;
  for (const auto& n : st.marks.nodes(admin_mark::varied_off)) node_op(self, n, messages::node_op_kind::vary_off);
  for (const auto& n : st.marks.nodes(admin_mark::drained)) node_op(self, n, messages::node_op_kind::drain);
}

void publish_marks(eviction_actor* self) {
  auto& st = self->state;
  const auto& off = st.marks.nodes(admin_mark::varied_off);
  const auto& drained = st.marks.nodes(admin_mark::drained);
  route(self, st.env.router, st.stamper, std::string{messages::topics::rm_marks},
        messages::rm_marks{std::vector<std::string>(off.begin(), off.end()),
                           std::vector<std::string>(drained.begin(), drained.end())});
}

// A standby takes the active's marks as its own: the nodes it marked or cleared since are marked or cleared here
// too, so the schedulers of this process hold the same machines out when it takes over.
void adopt_marks(eviction_actor* self, const messages::rm_marks& m) {
  auto& st = self->state;
  using kind = messages::node_op_kind;
  std::size_t changed = 0;
  const auto follow = [&](admin_mark mark, const std::vector<std::string>& listed, kind on, kind off) {
    const std::set<std::string> theirs(listed.begin(), listed.end());
    const auto ours = st.marks.nodes(mark);  // a copy: set() edits it
    for (const auto& n : theirs)
      if (!ours.count(n)) {
        st.marks.set(mark, n, true);
        node_op(self, n, on);
        ++changed;
      }
    for (const auto& n : ours)
      if (!theirs.count(n)) {
        st.marks.set(mark, n, false);
        node_op(self, n, off);
        ++changed;
      }
  };
  follow(admin_mark::varied_off, m.offline, kind::vary_off, kind::vary_on);
  follow(admin_mark::drained, m.drained, kind::drain, kind::undrain);
  if (changed == 0) return;
  spdlog::info("HA: the active's marks taken: {} node(s) varied off, {} drained ({} changed)",
               st.marks.nodes(admin_mark::varied_off).size(), st.marks.nodes(admin_mark::drained).size(), changed);
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
    if (!c.before)
      if (const auto* x = st.expected.find(c.node)) st.seen.insert(x->node);
    const auto* e = st.nodes.find(c.node);
    if (e == nullptr) continue;
    // A node first heard after its marks were set, which neither the intake nor the configuration placed then (a
    // standby adopting the active's marks, say): its scheduler learns them now.
    if (!c.before && st.expected.find(c.node) == nullptr)
      for (auto mk : st.marks.of(c.node))
        node_op(self, c.node, mk == admin_mark::drained ? messages::node_op_kind::drain : messages::node_op_kind::vary_off);
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
    reapply_marks(self);
  }
}

// vary_off / vary_on / drain / undrain: each node named is marked (or cleared) and its scheduler told; a node
// neither the intake nor the configuration knows is named as unknown; one the configuration names that has not
// reported is marked all the same, and named as never seen.
void on_vary(eviction_actor* self, const messages::vary_request& req) {
  auto& st = self->state;
  const auto mark = req.drain ? admin_mark::drained : admin_mark::varied_off;
  using kind = messages::node_op_kind;
  const auto op = req.drain ? (req.off ? kind::drain : kind::undrain) : (req.off ? kind::vary_off : kind::vary_on);
  messages::value::array done, unknown, already, never_seen;
  for (const auto& name : req.nodes) {
    const bool known = st.nodes.find(name) != nullptr;
    const auto* x = known ? nullptr : st.expected.find(name);
    if (!known && x == nullptr) {
      unknown.emplace_back(name);
      continue;
    }
    // Already so (marked twice, or cleared while clear): listed, so that the operator knows nothing changed.
    if (st.marks.set(mark, name, req.off)) already.emplace_back(name);
    node_op(self, name, op);
    done.emplace_back(name);
    if (!known) never_seen.emplace_back(name);
  }
  if (!done.empty()) publish_marks(self);
  messages::admin_answer a;
  a.qid = req.qid;
  a.from = "eviction";
  a.result["nodes"] = messages::value{std::move(done)};
  a.result["unknown"] = messages::value{std::move(unknown)};
  a.result["already"] = messages::value{std::move(already)};
  a.result["never_seen"] = messages::value{std::move(never_seen)};
  route(self, st.env.router, st.stamper, std::string{topics::answer}, std::move(a));
}

// status: the nodes by liveness, the expected ones and those never seen, and the marks. qoccupancy: the
// nodes never seen, filtered as the pools filter theirs (`pool`, `state`, `node`).
messages::value::map nodes_answer(const eviction_state& st, const messages::admin_query& q) {
  using messages::value;
  value::map r;
  if (q.cmd == "status") {
    std::uint64_t up = 0, missing = 0, down = 0, never = 0;
    for (const auto& [name, e] : st.nodes.nodes()) {
      if (e.state == messages::node_liveness::up) ++up;
      else if (e.state == messages::node_liveness::missing) ++missing;
      else ++down;
    }
    for (const auto& x : st.expected.all()) never += seen(st, x) ? 0 : 1;
    value::map n;
    n["up"] = value{up};
    n["missing"] = value{missing};
    n["down"] = value{down};
    n["expected"] = value{static_cast<std::uint64_t>(st.expected.all().size())};
    n["never_seen"] = value{never};
    n["varied_off"] = value{static_cast<std::uint64_t>(st.marks.nodes(admin_mark::varied_off).size())};
    n["drained"] = value{static_cast<std::uint64_t>(st.marks.nodes(admin_mark::drained).size())};
    r["nodes"] = value{std::move(n)};
    return r;
  }
  const auto pool = str_of(q.args, "pool");
  const auto state = str_of(q.args, "state");
  const auto pattern = str_of(q.args, "node");
  value::array rows;
  for (const auto& x : st.expected.all()) {
    if (seen(st, x) || (!pool.empty() && x.pool != pool)) continue;
    const auto marks = st.marks.of(x.node);
    const bool state_ok = state.empty() || state == "never_seen" ||
                          std::any_of(marks.begin(), marks.end(), [&](admin_mark m) { return state == to_string(m); });
    if (!state_ok || (!pattern.empty() && ::fnmatch(pattern.c_str(), x.node.c_str(), 0) != 0)) continue;
    value::map m;
    m["node"] = value{x.node};
    m["pool"] = value{x.pool};
    m["nodepool"] = value{x.nodepool};
    value::array listed;
    for (auto mk : marks) listed.emplace_back(std::string{to_string(mk)});
    m["marks"] = value{std::move(listed)};
    rows.emplace_back(std::move(m));
  }
  r["never_seen"] = value{std::move(rows)};
  return r;
}

mass_loss_settings guard_settings(const config::rm_config& cfg) {
  return {cfg.runtime.mass_loss_percent, cfg.runtime.mass_loss_evict_percent, cfg.runtime.heartbeat_interval_ms};
}

caf::behavior eviction(eviction_actor* self, actor_env env) {
  self->state.env = env;
  self->state.stamper = envelope_stamper{env.src("eviction")};
  self->state.guard.emplace(guard_settings(*env.cfg));
  self->state.expected = expected_nodes{env.cfg->scheduling};
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
        } else if (const auto* q = m.as<messages::admin_query>()) {
          messages::admin_answer a;
          a.qid = q->qid;
          a.from = "eviction";
          a.result = nodes_answer(st, *q);
          route(self, st.env.router, st.stamper, std::string{topics::answer}, std::move(a));
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
        self->state.expected = expected_nodes{cfg->scheduling};
        self->state.env.cfg = std::move(cfg);
        self->state.reapply = true;
      },
  };
}

}  // namespace

caf::actor spawn_eviction(caf::actor_system& sys, actor_env env) {
  auto router = env.router;
  const std::vector<std::string> subscriptions{std::string{topics::node_changes}, std::string{topics::node_snapshot},
                                               std::string{topics::vary}, std::string{topics::marks_query}};
  const bool ha = env.ha != nullptr;
  auto self = sys.spawn(eviction, std::move(env));
  // Subscribed from the spawning thread, so the subscriptions are in place before anything this
  // thread routes next (an actor's own start-up runs later, on a scheduler thread).
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  if (ha) caf::anon_send(router, atoms::listen::value, std::string{messages::topics::rm_marks}, self);
  return self;
}

}  // namespace rmbus::actors
