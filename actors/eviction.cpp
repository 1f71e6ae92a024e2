// Eviction: node deaths and administrative vary-off / vary-on -> the scheduler of the node's pool.
//
// The DUCC rules themselves live in the core (core::nodepool_scheduler::machine_down evicts everything but
// unmanaged reservations; vary_off evicts fair-share work only and keeps fixed work and reservations; a node
// is unschedulable until the condition clears; blacklisting after a reconfiguration is decided when the
// fresh scheduler recovers work whose class no longer exists). This actor decides WHEN and WHERE: it learns
// each node's pool and liveness from rm.internal.nodestate, turns a transition to `down` into a `down`
// operation, answers the admin's vary requests (naming nodes it does not know), and remembers which nodes
// are varied off so the marks survive a reconfiguration, as in DUCC.
#include <map>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"

namespace rmbus::actors {

namespace {

struct eviction_state {
  actor_env env;
  envelope_stamper stamper{"eviction"};
  std::map<std::string, std::string> pool_of;  // node -> top-level pool
  std::set<std::string> offline;               // varied off
  bool reapply = false;                        // re-send vary-offs after a reconfiguration
  static inline const char* name = "rmbus.eviction";
};

using eviction_actor = caf::stateful_actor<eviction_state>;

void node_op(eviction_actor* self, const std::string& node, const char* op) {
  auto& st = self->state;
  value::map m;
  m["op"] = value{op};
  m["node"] = value{node};
  route_internal(self, st.env.router, st.stamper, node_topic(st.pool_of[node]), std::move(m));
}

void on_node_state(eviction_actor* self, const value::map& f) {
  auto& st = self->state;
  if (const auto* nodes = array_of(f, "nodes"))
    for (const auto& n : *nodes)
      if (const auto* m = n.as_map()) st.pool_of[str_of(*m, "node")] = str_of(*m, "pool");
  if (const auto* changes = array_of(f, "changes")) {
    for (const auto& c : *changes) {
      const auto* m = c.as_map();
      if (m == nullptr || str_of(*m, "to") != "down") continue;
      spdlog::info("evicting from dead node {}", str_of(*m, "node"));
      node_op(self, str_of(*m, "node"), "down");
    }
  }
  if (st.reapply) {
    st.reapply = false;
    for (const auto& n : st.offline)
      if (st.pool_of.count(n)) node_op(self, n, "vary_off");
  }
}

void on_vary(eviction_actor* self, const value::map& f) {
  auto& st = self->state;
  const bool off = str_of(f, "op") == "vary_off";
  value::array done, unknown;
  if (const auto* nodes = array_of(f, "nodes")) {
    for (const auto& n : *nodes) {
      const auto* name = n.as_string();
      if (name == nullptr) continue;
      if (!st.pool_of.count(*name)) {
        unknown.emplace_back(*name);
        continue;
      }
      if (off) st.offline.insert(*name);
      else st.offline.erase(*name);
      node_op(self, *name, off ? "vary_off" : "vary_on");
      done.emplace_back(*name);
    }
  }
  value::map result;
  result["nodes"] = value{std::move(done)};
  result["unknown"] = value{std::move(unknown)};
  value::map out;
  out["qid"] = value{uint_of(f, "qid")};
  out["from"] = value{"eviction"};
  out["result"] = value{std::move(result)};
  route_internal(self, st.env.router, st.stamper, std::string{topics::answer}, std::move(out));
}

caf::behavior eviction(eviction_actor* self, actor_env env) {
  self->state.env = env;
  self->state.stamper = envelope_stamper{env.src("eviction")};
  return {
      [self](atoms::deliver, const std::string& topic, const std::string& body) {
        auto msg = decode_internal(topic, body, limits_of(*self->state.env.cfg));
        if (!msg) {
          spdlog::warn("eviction: {}", msg.error().message());
          return;
        }
        if (topic == topics::node_state) on_node_state(self, msg.value().fields);
        else if (topic == topics::vary) on_vary(self, msg.value().fields);
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
  const std::vector<std::string> subscriptions{std::string{topics::node_state}, std::string{topics::vary}};
  auto self = sys.spawn(eviction, std::move(env));
  // Subscribed from the spawning thread, so the subscriptions are in place before anything this
  // thread routes next (an actor's own start-up runs later, on a scheduler thread).
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  return self;
}

}  // namespace rmbus::actors
