// Eviction: node deaths and administrative vary-off / vary-on -> the scheduler of the node's pool.
//
// The DUCC rules themselves live in the core (core::nodepool_scheduler::machine_down evicts everything but
// unmanaged reservations; vary_off evicts fair-share work only and keeps fixed work and reservations; a node
// is unschedulable until the condition clears; blacklisting after a reconfiguration is decided when the
// fresh scheduler recovers work whose class no longer exists). This actor decides WHEN and WHERE: it keeps
// a replica of the intake's node table from its numbered changes (actors/node_replica.hpp; a snapshot only
// when out of step), turns a node's change to `down` into a `down` operation, answers the admin's vary
// requests (naming nodes it does not know), and remembers which nodes are varied off so the marks survive
// a reconfiguration, as in DUCC.
#include <map>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "actors/node_replica.hpp"

namespace rmbus::actors {

namespace {

struct eviction_state {
  actor_env env;
  envelope_stamper stamper{"eviction"};
  node_replica nodes;
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
  route(self, st.env.router, st.stamper, std::string{topics::node_sync}, messages::node_sync_request{st.stamper.src()});
}

void after_apply(eviction_actor* self, node_replica::outcome outcome, const std::vector<liveness_change>& changes) {
  auto& st = self->state;
  if (outcome == node_replica::outcome::need_snapshot) ask_snapshot(self);
  for (const auto& c : changes) {
    if (c.after != messages::node_liveness::down || c.before == messages::node_liveness::down) continue;
    spdlog::info("evicting from dead node {}", c.node);
    node_op(self, c.node, messages::node_op_kind::down);
  }
  if (st.reapply && st.nodes.in_step()) {
    st.reapply = false;
    for (const auto& n : st.offline) node_op(self, n, messages::node_op_kind::vary_off);
  }
}

void on_vary(eviction_actor* self, const messages::vary_request& req) {
  auto& st = self->state;
  messages::value::array done, unknown;
  for (const auto& name : req.nodes) {
    if (st.nodes.find(name) == nullptr) {
      unknown.emplace_back(name);
      continue;
    }
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
  route(self, st.env.router, st.stamper, std::string{topics::answer}, std::move(a));
}

caf::behavior eviction(eviction_actor* self, actor_env env) {
  self->state.env = env;
  self->state.stamper = envelope_stamper{env.src("eviction")};
  return {
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
      [self](atoms::reset, config_ptr cfg) {
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
