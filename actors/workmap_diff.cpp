// Work-map differencing: orchestrator.workmap -> one round, each pool given its slice of the work.
//
// The orchestrator sends its FULL map every time. This actor decodes it with partial errors (a malformed item
// keeps its last good state, or is ignored while new, and becomes a bad_message event; it is never taken as
// finished), routes every item to the scheduler of the top-level pool owning its class, and starts one round:
// rm.internal.work.<pool> to every pool, rm.internal.round to publication. The core schedulers difference
// each pool's snapshot against what they hold (core::nodepool_scheduler::apply_work): new work arrives, gone
// or completed work frees its shares, and a live process the pool does not know is RECOVERED (after a restart
// or a reconfiguration the first map recovers everything, so nothing is double-booked or forgotten).
//
// Work that names an unknown class (and runs nowhere) cannot reach any pool: it is refused here, with the
// reason carried in rm.state. Work of an unknown class that still has live processes goes to the pool of its
// first process's node, whose scheduler refuses it and blacklists its space (DUCC's reconfiguration rule).
//
// One round at a time: a map arriving while a round runs is kept (the newest wins; maps are complete, so
// nothing is lost) and starts the next round when publication reports this one done. Readiness as DUCC:
// rounds start after init_stability heartbeat intervals, or at once on the first map naming live processes.
// This actor also owns the cross-pool allotment partition (actors/allotment_partition.hpp).
#include <map>
#include <optional>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/allotment_partition.hpp"
#include "actors/detail/spawn.hpp"
#include "config/node_placement.hpp"
#include "core/nodepool_scheduler.hpp"
#include "messages/rm_event.hpp"
#include "messages/topics.hpp"
#include "messages/workmap.hpp"

namespace rmbus::actors {

namespace {

struct diff_state {
  actor_env env;
  envelope_stamper stamper{"diff"};
  messages::decode_limits limits;
  std::optional<config::node_placement> placement;
  std::vector<std::string> pools;                    // top-level pools, configuration order
  std::map<std::string, messages::work_item> last;   // last good version of every item
  std::optional<std::map<std::string, messages::work_item>> pending;  // newest map waiting for its round
  bool ready = false;
  bool first_map = true;  // the next map is the first since start or reconfiguration
  bool in_flight = false;
  std::uint64_t cycle = 0;
  std::map<std::string, std::map<std::string, std::uint64_t>> held;  // pool -> user -> np MB (last answers)
  std::map<std::string, bool> wants_more;                            // job -> pending or short, last round
  static inline const char* name = "rmbus.workmap_diff";
};

using diff_actor = caf::stateful_actor<diff_state>;

void configure(diff_actor* self, config_ptr cfg) {
  auto& st = self->state;
  st.env.cfg = std::move(cfg);
  st.limits = limits_of(*st.env.cfg);
  st.placement.emplace(st.env.cfg->scheduling);
  st.pools.clear();
  for (const auto& p : st.env.cfg->scheduling.nodepools)
    if (p.parent.empty()) st.pools.push_back(p.name);
}

const core::resource_class* class_of(const core::scheduler_config& cfg, const messages::work_item& w) {
  if (!w.class_name.empty()) {
    for (const auto& c : cfg.classes)
      if (c.name == w.class_name) return &c;
    return nullptr;
  }
  const std::vector<core::policy> prefs = w.kind == messages::work_kind::job
                                              ? std::vector<core::policy>{core::policy::fair_share}
                                              : std::vector<core::policy>{core::policy::reserve, core::policy::fixed_share};
  for (auto p : prefs)
    for (const auto& c : cfg.classes)
      if (c.is_default && c.policy == p) return &c;
  return nullptr;
}

void publish_event(diff_actor* self, const messages::rm_event& ev) {
  auto t = std::string{messages::topics::rm_events};
  route(self, self->state.env.router, t, messages::encode(self->state.stamper.next(t), ev));
}

void start_round(diff_actor* self, const std::map<std::string, messages::work_item>& items) {
  auto& st = self->state;
  const auto& cfg = st.env.cfg->scheduling;
  ++st.cycle;
  std::map<std::string, value::array> slices;
  for (const auto& p : st.pools) slices[p];
  value::array refused;
  std::vector<waiting_np_work> waiting;
  for (const auto& [id, w] : items) {
    std::string pool;
    const auto* rc = class_of(cfg, w);
    if (rc != nullptr) {
      pool = core::top_level_of(cfg, rc->nodepool);
    } else {
      for (const auto& p : w.processes)
        if (p.state != messages::process_state::ended) {
          pool = st.placement->place(p.node, "").top_level;
          break;
        }
    }
    if (pool.empty() || !slices.count(pool)) {
      if (w.state == messages::work_state::completed) continue;
      value::map r;
      r["id"] = value{id};
      r["user"] = value{w.user};
      r["reason"] = value{w.class_name.empty() ? std::string{"No scheduling class defined and no default class configured."}
                                               : "Cannot find class " + w.class_name + " for the work"};
      refused.emplace_back(std::move(r));
      continue;
    }
    if (rc != nullptr && rc->policy != core::policy::fair_share && w.state != messages::work_state::completed) {
      auto it = st.wants_more.find(id);
      if (it == st.wants_more.end() || it->second) waiting.push_back({w.user, pool, static_cast<std::int64_t>(w.submitted_ms), id});
    }
    slices[pool].push_back(to_value(w));
  }
  auto budgets = partition_allotments(cfg, st.pools, st.held, waiting);
  const auto now = wall_clock_ms();
  value::array pool_names;
  for (auto& [pool, work] : slices) {
    value::map m;
    m["cycle"] = value{st.cycle};
    m["now_ms"] = value{static_cast<std::uint64_t>(now)};
    m["other_np"] = to_value(budgets[pool]);
    m["work"] = value{std::move(work)};
    route_internal(self, st.env.router, st.stamper, work_topic(pool), std::move(m));
    pool_names.emplace_back(pool);
  }
  value::map r;
  r["cycle"] = value{st.cycle};
  r["pools"] = value{std::move(pool_names)};
  r["refused"] = value{std::move(refused)};
  route_internal(self, st.env.router, st.stamper, std::string{topics::round}, std::move(r));
  st.in_flight = true;
  // Guard: should publication never report the round done (its process died), do not stall forever.
  const auto guard = std::chrono::milliseconds(2 * st.env.cfg->runtime.round_timeout_ms + 1000);
  self->delayed_send(self, guard, atoms::timeout::value, st.cycle);
}

void next_round(diff_actor* self) {
  auto& st = self->state;
  if (!st.ready || st.in_flight || !st.pending) return;
  auto items = std::move(*st.pending);
  st.pending.reset();
  start_round(self, items);
}

void on_workmap(diff_actor* self, const std::string& topic, const std::string& body) {
  auto& st = self->state;
  auto wm = messages::decode_workmap(topic, body, st.limits);
  if (!wm) {
    publish_event(self, messages::make_bad_message_event(wm.error()));
    return;
  }
  std::map<std::string, messages::work_item> items;
  for (auto& w : wm.value().work) items[w.id] = std::move(w);
  bool keep_missing = false;
  for (const auto& bad : wm.value().bad_items) {
    auto ev = messages::make_bad_message_event(bad.error);
    if (!bad.id.empty()) ev.detail["job"] = bad.id;
    publish_event(self, ev);
    if (bad.id.empty()) {
      keep_missing = true;  // cannot tell which item it was: retire nothing this time
    } else if (auto it = st.last.find(bad.id); it != st.last.end()) {
      items[bad.id] = it->second;  // keeps its last good state; a new bad item is ignored
    }
  }
  if (keep_missing)
    for (const auto& [id, w] : st.last)
      if (!items.count(id)) items[id] = w;
  st.last = items;
  if (st.first_map) {
    st.first_map = false;
    std::map<std::string, std::uint64_t> nodes;
    for (const auto& [id, w] : items)
      for (const auto& p : w.processes)
        if (p.state != messages::process_state::ended && w.state != messages::work_state::completed)
          nodes[p.node] = std::max(nodes[p.node], p.node_memory_mb.value_or(0));
    if (!nodes.empty()) {
      value::array list;
      for (const auto& [n, mb] : nodes) {
        value::map e;
        e["node"] = value{n};
        e["memory_mb"] = value{mb};
        list.emplace_back(std::move(e));
      }
      value::map f;
      f["nodes"] = value{std::move(list)};
      route_internal(self, st.env.router, st.stamper, std::string{topics::recovered}, std::move(f));
    }
  }

  if (!st.ready && st.env.cfg->runtime.fast_recovery) {
    for (const auto& [id, w] : items)
      for (const auto& p : w.processes)
        if (p.state != messages::process_state::ended && w.state != messages::work_state::completed) st.ready = true;
    if (st.ready) spdlog::info("work map names live processes: scheduling starts now (fast recovery)");
  }
  st.pending = std::move(items);
  next_round(self);
}

void on_plan(diff_actor* self, const value::map& f) {
  auto& st = self->state;
  const auto pool = str_of(f, "pool");
  auto np = f.find("np");
  st.held[pool] = user_mb_of(np == f.end() ? nullptr : &np->second);
  if (const auto* jobs = array_of(f, "jobs")) {
    for (const auto& j : *jobs) {
      const auto* m = j.as_map();
      if (m == nullptr) continue;
      st.wants_more[str_of(*m, "id")] = str_of(*m, "status") != "scheduled" || !str_of(*m, "reason").empty();
    }
  }
}

caf::behavior workmap_diff(diff_actor* self, actor_env env) {
  auto& st = self->state;
  st.env = env;
  st.stamper = envelope_stamper{env.src("diff")};
  configure(self, env.cfg);
  const auto rt = env.cfg->runtime;
  self->delayed_send(self, std::chrono::milliseconds(rt.heartbeat_interval_ms * std::max(0, rt.init_stability)),
                     atoms::ready::value);
  return {
      [self](atoms::deliver, const std::string& topic, const std::string& body) {
        auto& st = self->state;
        if (topic == messages::topics::workmap) {
          on_workmap(self, topic, body);
          return;
        }
        auto msg = decode_internal(topic, body, st.limits);
        if (!msg) {
          spdlog::warn("diff: {}", msg.error().message());
          return;
        }
        if (topic == topics::plan) {
          on_plan(self, msg.value().fields);
        } else if (topic == topics::done && uint_of(msg.value().fields, "cycle") == st.cycle) {
          st.in_flight = false;
          next_round(self);
        }
      },
      [self](atoms::ready) {
        if (!self->state.ready) spdlog::info("init stability reached: scheduling starts");
        self->state.ready = true;
        next_round(self);
      },
      [self](atoms::timeout, std::uint64_t cycle) {
        auto& st = self->state;
        if (cycle != st.cycle || !st.in_flight) return;
        spdlog::warn("round {} was never reported done; starting the next one", cycle);
        st.in_flight = false;
        next_round(self);
      },
      [self](atoms::reset, config_ptr cfg) {
        // Reconfiguration: the next map is a first map again (the fresh schedulers recover all of it).
        configure(self, std::move(cfg));
        self->state.held.clear();
        self->state.wants_more.clear();
        self->state.first_map = true;
      },
  };
}

}  // namespace

caf::actor spawn_workmap_diff(caf::actor_system& sys, actor_env env) {
  auto router = env.router;
  const std::vector<std::string> subscriptions{std::string{messages::topics::workmap}, std::string{topics::plan}, std::string{topics::done}};
  auto self = sys.spawn(workmap_diff, std::move(env));
  // Subscribed from the spawning thread, so the subscriptions are in place before anything this
  // thread routes next (an actor's own start-up runs later, on a scheduler thread).
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  return self;
}

}  // namespace rmbus::actors
