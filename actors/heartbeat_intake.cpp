// Heartbeat intake: agent.heartbeat -> node liveness, the node table's numbered changes, and machine
// operations for the pool schedulers.
//
// Each heartbeat is decoded straight into its struct (a bad one becomes a bad_message event) and placed in
// its nodepool by the configuration (config::node_placement: a node named nowhere goes to the first
// top-level pool). Per heartbeat the intake does only what the heartbeat changes:
//   - liveness is refreshed (core::node_liveness) and lateness counted;
//   - the node's entry (state, missed, memory, quanta, quiesce, placement) is marked changed only when one
//     of those differs from what was last reported;
//   - the node's scheduler gets an `update` only when the node is new or back from down, or its memory,
//     quiesce flag or nodepool changed.
// Changes are sent batched, at most every `batch_window` and at every watchdog tick, as numbered
// node_changes (readers: eviction, publication, metrics); machine operations go out with the same flush, one
// node_ops per pool. A reader out of step asks for a snapshot (node_sync_request) and gets the whole table
// once (node_snapshot), never after every change. The watchdog ticks every heartbeat interval; its
// transitions (up, missing after one missed heartbeat, down after node_stability) become rm.events too.
//
// Forgetting ([limits] forget_down_ms): at each tick, nodes down for longer than that are offered to their
// pool's scheduler as `forget` operations. Only the scheduler knows whether a machine still holds shares (an
// unmanaged reservation on a down node, an eviction not yet confirmed), so it answers (machines_forgotten):
// the intake drops from its table only those the scheduler forgot and that are still down, names them in the
// next batch (`forgotten`), and reports them in one `node_forgotten` event per tick however many there were.
// A kept node is offered again after another forget_down_ms. Placement comes from the configuration, never
// from the table, so a forgotten node named in a nodefile returns to its configured pool, as a new node.
//
// The bus subscriber hands heartbeats on through an in-flight bound ([limits] max_heartbeats_queued): the
// intake releases one per heartbeat it takes, and reports what was shed in a `limit` event once per tick.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <absl/container/flat_hash_map.h>
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "bus/bus_message.hpp"
#include "bus/keyed_hash.hpp"
#include "config/node_placement.hpp"
#include "core/node_liveness.hpp"
#include "core/nodepool_scheduler.hpp"
#include "core/quanta.hpp"
#include "messages/heartbeat.hpp"
#include "messages/topics.hpp"

namespace rmbus::actors {

namespace {

// How long changes (and the counts of heartbeats received) wait to be sent together. Short against any
// heartbeat interval, long enough that the thousands of first heartbeats of a starting cluster leave as a
// handful of batches, not thousands of messages; an idle cluster costs at most 20 small batches a second.
constexpr std::chrono::milliseconds batch_window{50};

// Node names offered for forgetting per tick, at most: a storm's 100,000 are offered over a few ticks, each
// node_ops (and the answer, and the batch naming them) well inside max_body_bytes when roles are split.
constexpr std::size_t max_forget_bytes_per_tick = 4u * 1024u * 1024u;
// Names a node_forgotten event lists (the count says how many there were).
constexpr std::size_t forgotten_examples = 5;

struct node_info {
  core::node_liveness::slot slot = 0;  // its place in the watchdog's table (set with the node's first beat)
  std::string ip;
  config::placement where;
  messages::node_entry entry;  // as last reported (or about to be)
  bool dirty = false;          // changed since the last batch
  std::int64_t forget_asked_ms = 0;  // when its scheduler was last asked to forget it (0: not since it spoke)
};

struct intake_state {
  actor_env env;
  std::optional<config::node_placement> placement;
  std::optional<core::node_liveness> liveness;
  // Names come off the bus: hashed under a key, so a storm of crafted names cannot share a bucket. An open
  // table (abseil's): a heartbeat's lookup reads the table's control bytes and then the node's own slot, where
  // std::unordered_map's chains cost three dependent cache misses (bucket, the node before, the node) at every
  // one of 50,000 heartbeats a second. Elements move when the table grows: no reference is kept across an
  // insertion.
  absl::flat_hash_map<std::string, node_info, bus::keyed_hash, std::equal_to<>> nodes;
  std::vector<std::string> dirty;                        // names whose entry changed since the last batch
  std::map<std::string, messages::node_ops> pending_ops;  // top-level pool -> operations not yet sent
  std::uint64_t batch_seq = 0;
  std::uint64_t heartbeats = 0;
  std::uint64_t late = 0;
  std::uint64_t refused_nodes = 0;  // heartbeats from new names beyond max_nodes since the last tick
  std::string refused_example;
  std::vector<std::string> forgotten;           // names removed from the table since the last batch
  std::uint64_t forgotten_since_tick = 0;        // for the node_forgotten event
  std::vector<std::string> forgotten_example;    // its first few names
  std::uint64_t shed_reported = 0;               // heartbeats shed by the bus, as of the last limit event
  bool flush_scheduled = false;
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
  lc.name_hash = [hash = bus::keyed_hash{}](std::string_view name) { return hash(name); };
  if (!st.liveness) st.liveness.emplace(lc);
}

void schedule_flush(intake_actor* self) {
  auto& st = self->state;
  if (st.flush_scheduled) return;
  st.flush_scheduled = true;
  self->delayed_send(self, batch_window, atoms::flush::value);
}

void publish_event(intake_actor* self, messages::rm_event ev) {
  route(self, self->state.env.router, self->state.stamper, std::string{messages::topics::rm_events}, std::move(ev));
}

messages::node_liveness to_wire(core::node_status s) {
  return s == core::node_status::down      ? messages::node_liveness::down
         : s == core::node_status::missing ? messages::node_liveness::missing
                                           : messages::node_liveness::up;
}

// Heartbeats missed in a row: the watchdog's first count is forgiven as jitter (core/node_liveness.hpp).
std::uint64_t missed_of(const core::node_liveness& l, core::node_liveness::slot at) {
  return static_cast<std::uint64_t>(std::max(0, l.missed_at(at) - 1));
}

// Brings node `n`'s reported entry up to date (liveness, missed count, placement, quanta) and marks it
// changed when anything differs from what was reported. `changed`: the caller already changed its memory
// or quiesce flag. Compares before it copies anything: after a reconfiguration this runs for every node.
void refresh_entry(intake_actor* self, const std::string& name, node_info& n, bool changed = false) {
  auto& st = self->state;
  const auto state = to_wire(st.liveness->status_at(n.slot));
  const auto missed = missed_of(*st.liveness, n.slot);
  const auto& sc = st.env.cfg->scheduling;
  const auto quanta = static_cast<std::uint64_t>(core::usable_machine_order(
      n.entry.memory_mb, sc.settings.reserved_dram_mb, core::quantum_of(sc, n.where.top_level)));
  auto& e = n.entry;
  if (!changed && !e.node.empty() && e.state == state && e.missed == missed && e.quanta == quanta &&
      e.pool == n.where.top_level && e.nodepool == n.where.nodepool)
    return;
  if (e.node.empty()) e.node = name;
  e.pool = n.where.top_level;
  e.nodepool = n.where.nodepool;
  e.state = state;
  e.missed = missed;
  e.quanta = quanta;
  if (!n.dirty) {
    n.dirty = true;
    st.dirty.push_back(name);
  }
  schedule_flush(self);
}

void queue_update(intake_actor* self, const std::string& name, const node_info& n) {
  messages::node_op op;
  op.op = messages::node_op_kind::update;
  op.node = name;
  op.ip = n.ip;
  op.memory_mb = n.entry.memory_mb;
  op.quiesced = n.entry.quiesced;
  op.nodepool = n.where.nodepool;
  self->state.pending_ops[n.where.top_level].ops.push_back(std::move(op));
  schedule_flush(self);
}

// Sends the machine operations and the numbered batch of changes gathered since the last flush.
void flush_changes(intake_actor* self) {
  auto& st = self->state;
  for (auto& [pool, ops] : st.pending_ops)
    if (!ops.ops.empty()) route(self, st.env.router, st.stamper, topics::node_topic(pool), std::move(ops));
  st.pending_ops.clear();
  if (st.dirty.empty() && st.heartbeats == 0 && st.forgotten.empty()) return;
  messages::node_changes batch;
  batch.seq = ++st.batch_seq;
  batch.heartbeats = st.heartbeats;
  batch.late_heartbeats = st.late;
  std::sort(st.dirty.begin(), st.dirty.end());
  batch.changed.reserve(st.dirty.size());
  for (const auto& name : st.dirty) {
    auto& n = st.nodes.at(name);
    n.dirty = false;
    batch.changed.push_back(n.entry);
  }
  st.dirty.clear();
  batch.forgotten = std::move(st.forgotten);
  st.forgotten.clear();
  st.heartbeats = 0;
  st.late = 0;
  route(self, st.env.router, st.stamper, std::string{topics::node_changes}, std::move(batch));
}

void on_heartbeat(intake_actor* self, const std::string& topic, const std::string& body) {
  auto& st = self->state;
  auto hb = messages::decode_heartbeat(topic, body, st.limits);
  if (!hb) {
    publish_event(self, messages::make_bad_message_event(hb.error()));
    return;
  }
  const auto& h = hb.value();
  if (st.nodes.size() >= st.env.cfg->runtime.limits.max_nodes && st.nodes.find(h.node) == st.nodes.end()) {
    // Bounded: a storm of invented names is counted and reported once per tick, never kept.
    if (st.refused_nodes++ == 0) st.refused_example = h.node;
    return;
  }
  const auto now = wall_clock_ms();
  ++st.heartbeats;
  schedule_flush(self);  // the counts reach metrics within one batch window
  // One lookup by name per heartbeat, in the intake's table; the watchdog's record is reached by its slot.
  auto [it, fresh] = st.nodes.try_emplace(h.node);
  auto& n = it->second;
  std::int64_t last = 0;
  const auto t = fresh ? st.liveness->heartbeat(core::machine_id{h.node}, now, &last, &n.slot)
                       : st.liveness->heartbeat_at(n.slot, now, &last);
  const auto interval = st.env.cfg->runtime.heartbeat_interval_ms;
  if (last > 0 && core::heartbeat_late(now - last, interval)) ++st.late;

  n.forget_asked_ms = 0;  // it spoke: an answer to an earlier offer no longer applies
  const bool ip_moved = fresh || n.ip != h.ip;
  const auto where = ip_moved ? st.placement->place(h.node, h.ip) : n.where;
  const bool quiesced = h.quiesced.value_or(false);
  const bool sched_changed = fresh || n.entry.memory_mb != h.memory_mb || n.entry.quiesced != quiesced ||
                             !(n.where == where) || n.ip != h.ip;
  n.ip = h.ip;
  n.where = where;
  n.entry.memory_mb = h.memory_mb;
  n.entry.quiesced = quiesced;
  const bool back_from_down = t && !t->first_heard && t->from == core::node_status::down;
  if (sched_changed || back_from_down) queue_update(self, h.node, n);
  if (t) {
    spdlog::info("node {} up in pool {} ({} MB)", h.node, n.where.top_level, h.memory_mb);
    publish_event(self, messages::rm_event{std::string{messages::event_kinds::node_up}, {{"node", h.node}}});
  }
  // A heartbeat resets the missed count; only a node that had missed one, or whose report changed, has
  // anything to tell its readers.
  if (t || sched_changed || n.entry.missed != 0) refresh_entry(self, h.node, n, sched_changed);
}

// Nodes a recovered work map names before their first heartbeat: watched from now on, as if heard once, so
// a node that never comes back goes missing and down like any other.
// A node without a size (the map carried no node_memory_mb) is not announced: its pool's scheduler keeps it
// unsized, its recovered work where it runs, until its first heartbeat (core::machine_rec::unheard).
void on_recovered(intake_actor* self, const messages::recovered_nodes& msg) {
  auto& st = self->state;
  std::size_t unsized = 0, watched = 0;
  for (const auto& r : msg.nodes) {
    const core::machine_id id{r.node};
    if (r.node.empty() || st.liveness->known(id)) continue;
    auto& n = st.nodes[r.node];
    n.entry.memory_mb = r.memory_mb;
    n.where = st.placement->place(r.node, "");
    if (r.memory_mb > 0) queue_update(self, r.node, n);
    else ++unsized;
    ++watched;
    st.liveness->heartbeat(id, wall_clock_ms(), nullptr, &n.slot);
    refresh_entry(self, r.node, n, true);
  }
  if (watched == 0) return;
  const auto& rt = st.env.cfg->runtime;
  spdlog::info("recovered work runs on {} node(s) not heard yet ({} without a size in the work map): their work is "
               "kept where it runs and nothing new goes there until each heartbeats; one silent for {} ms is down "
               "and its work evicted",
               watched, unsized, rt.heartbeat_interval_ms * rt.node_stability);
}

// Offers the nodes down for longer than forget_down_ms to their schedulers (bounded per tick), each again
// only after another forget_down_ms when it was kept or no answer came.
void offer_forgotten(intake_actor* self, std::int64_t now) {
  auto& st = self->state;
  const auto forget_ms = st.env.cfg->runtime.limits.forget_down_ms;
  if (forget_ms <= 0) return;
  std::size_t bytes = 0;
  for (const auto& id : st.liveness->down_since(now - forget_ms)) {
    auto it = st.nodes.find(id.str());
    if (it == st.nodes.end()) continue;
    auto& n = it->second;
    if (n.forget_asked_ms > 0 && now - n.forget_asked_ms < forget_ms) continue;
    if (bytes > 0 && bytes + it->first.size() > max_forget_bytes_per_tick) break;
    bytes += it->first.size();
    n.forget_asked_ms = now;
    messages::node_op op;
    op.op = messages::node_op_kind::forget;
    op.node = it->first;
    st.pending_ops[n.where.top_level].ops.push_back(std::move(op));
  }
}

// A scheduler's answer: the nodes it forgot leave the table, unless they spoke since they were offered.
void on_forgotten(intake_actor* self, const messages::machines_forgotten& answer) {
  auto& st = self->state;
  std::set<std::string> gone;
  for (const auto& name : answer.forgotten) {
    auto it = st.nodes.find(name);
    if (it == st.nodes.end()) continue;
    if (it->second.forget_asked_ms == 0 || it->second.where.top_level != answer.pool ||
        st.liveness->status_at(it->second.slot) != core::node_status::down)
      continue;
    st.nodes.erase(it);
    st.liveness->forget(core::machine_id{name});
    st.forgotten.push_back(name);
    if (st.forgotten_example.size() < forgotten_examples) st.forgotten_example.push_back(name);
    ++st.forgotten_since_tick;
    gone.insert(name);
  }
  if (gone.empty()) return;
  st.dirty.erase(std::remove_if(st.dirty.begin(), st.dirty.end(), [&](const auto& n) { return gone.count(n) != 0; }),
                 st.dirty.end());
  schedule_flush(self);
}

// Once per tick: what was forgotten, and heartbeats the bus shed, each as one event however many.
void report_forgotten_and_shed(intake_actor* self) {
  auto& st = self->state;
  const auto& limits = st.env.cfg->runtime.limits;
  if (st.forgotten_since_tick > 0) {
    std::string names;
    for (const auto& n : st.forgotten_example) names += (names.empty() ? "" : ",") + n;
    spdlog::info("{} nodes forgotten: down longer than {} ms with nothing held on them ([limits] forget_down_ms); "
                 "e.g. {}",
                 st.forgotten_since_tick, limits.forget_down_ms, names);
    publish_event(self, messages::rm_event{std::string{messages::event_kinds::node_forgotten},
                                           {{"count", std::to_string(st.forgotten_since_tick)},
                                            {"nodes", names},
                                            {"forget_down_ms", std::to_string(limits.forget_down_ms)}}});
    st.forgotten_since_tick = 0;
    st.forgotten_example.clear();
  }
  const auto& bound = st.env.heartbeats_in_flight;
  if (bound && bound->shed() > st.shed_reported) {
    const auto shed = bound->shed() - st.shed_reported;
    st.shed_reported += shed;
    spdlog::warn("{} heartbeats shed by the bus subscriber: {} were already waiting for the intake ([limits] "
                 "max_heartbeats_queued)",
                 shed, bound->limit());
    publish_event(self, messages::rm_event{std::string{messages::event_kinds::limit},
                                           {{"what", "max_heartbeats_queued"},
                                            {"limit", std::to_string(bound->limit())},
                                            {"refused", std::to_string(shed)}}});
  }
}

void on_tick(intake_actor* self) {
  auto& st = self->state;
  std::vector<core::machine_id> missed_more;  // the silent nodes: only their status or missed count moved
  for (const auto& t : st.liveness->tick(wall_clock_ms(), &missed_more)) {
    const auto kind = t.to == core::node_status::down      ? messages::event_kinds::node_down
                      : t.to == core::node_status::missing ? messages::event_kinds::node_missing
                                                           : messages::event_kinds::node_up;
    spdlog::info("node {} {} ({} missed)", t.node.str(), core::to_string(t.to), t.missed);
    publish_event(self, messages::rm_event{std::string{kind}, {{"node", t.node.str()}}});
  }
  if (st.refused_nodes > 0) {
    spdlog::warn("{} heartbeats from new node names refused: the intake keeps at most {} nodes ([limits] max_nodes)",
                 st.refused_nodes, st.env.cfg->runtime.limits.max_nodes);
    publish_event(self, messages::rm_event{std::string{messages::event_kinds::limit},
                                           {{"what", "max_nodes"},
                                            {"limit", std::to_string(st.env.cfg->runtime.limits.max_nodes)},
                                            {"refused", std::to_string(st.refused_nodes)},
                                            {"node", st.refused_example}}});
    st.refused_nodes = 0;
  }
  report_forgotten_and_shed(self);
  // A tick moves the status and missed count of silent nodes only (the transitions are among them), so only
  // those are looked at, not all 50,000 of a healthy cluster.
  for (const auto& id : missed_more)
    if (auto it = st.nodes.find(id.str()); it != st.nodes.end()) refresh_entry(self, it->first, it->second);
  offer_forgotten(self, wall_clock_ms());
  flush_changes(self);
}

void on_sync_request(intake_actor* self, const messages::node_sync_request& req) {
  auto& st = self->state;
  if (!req.pool.empty()) {
    // A replaced pool scheduler knows no machine: announce its pool's live ones again.
    std::size_t n = 0;
    for (auto& [name, node] : st.nodes)
      if (node.where.top_level == req.pool && node.entry.memory_mb > 0 &&
          st.liveness->status_at(node.slot) != core::node_status::down) {
        queue_update(self, name, node);
        ++n;
      }
    spdlog::info("pool {}: {} live machines announced again to {}", req.pool, n, req.reader);
    flush_changes(self);
    // Last, so it arrives after every batch of the answer: the asker's machines are complete (even when none).
    route(self, st.env.router, st.stamper, topics::node_topic(req.pool), messages::node_ops{{}, req.reader});
    return;
  }
  flush_changes(self);  // the snapshot then covers every batch sent so far
  messages::node_snapshot snap;
  snap.seq = st.batch_seq;
  snap.nodes.reserve(st.nodes.size());
  for (const auto& [name, n] : st.nodes) snap.nodes.push_back(n.entry);
  std::sort(snap.nodes.begin(), snap.nodes.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  spdlog::info("node table snapshot for {}: {} nodes as of batch {}", req.reader, snap.nodes.size(), snap.seq);
  route(self, st.env.router, st.stamper, std::string{topics::node_snapshot}, std::move(snap));
}

caf::behavior heartbeat_intake(intake_actor* self, actor_env env) {
  self->state.stamper = envelope_stamper{env.src("intake")};
  self->state.env = env;
  configure(self, env.cfg);
  const auto interval = std::chrono::milliseconds(env.cfg->runtime.heartbeat_interval_ms);
  self->delayed_send(self, interval, atoms::tick::value);
  return {
      [self](atoms::probe) { return static_cast<std::uint64_t>(self->mailbox().size()); },  // health
      [self](atoms::deliver, const std::string& topic, const std::string& body) {
        if (self->state.env.heartbeats_in_flight) self->state.env.heartbeats_in_flight->leave();
        on_heartbeat(self, topic, body);
      },
      [self](atoms::deliver, const bus::bus_batch& batch) {
        for (const auto& m : batch.messages) {
          if (self->state.env.heartbeats_in_flight) self->state.env.heartbeats_in_flight->leave();
          on_heartbeat(self, m.topic, m.body);
        }
      },
      [self](atoms::deliver, const messages::routed_message& m) {
        if (const auto* r = m.as<messages::recovered_nodes>()) on_recovered(self, *r);
        else if (const auto* s = m.as<messages::node_sync_request>()) on_sync_request(self, *s);
        else if (const auto* f = m.as<messages::machines_forgotten>()) on_forgotten(self, *f);
      },
      [self](atoms::flush) {
        self->state.flush_scheduled = false;
        flush_changes(self);
      },
      [self](atoms::tick) {
        on_tick(self);
        self->delayed_send(self, std::chrono::milliseconds(self->state.env.cfg->runtime.heartbeat_interval_ms),
                           atoms::tick::value);
      },
      [self](atoms::reset, config_ptr cfg) {
        // Reconfiguration: place every node again and re-announce the live ones to their (fresh) pools.
        configure(self, std::move(cfg));
        auto& st = self->state;
        if (st.env.heartbeats_in_flight) {
          st.env.heartbeats_in_flight->set_limit(st.env.cfg->runtime.limits.max_heartbeats_queued);
          st.env.heartbeats_in_flight->set_known_window(known_node_window(st.env.cfg->runtime));
        }
        for (auto& [name, n] : st.nodes) {
          n.where = st.placement->place(name, n.ip);
          if (st.liveness->status_at(n.slot) != core::node_status::down && n.entry.memory_mb > 0)
            queue_update(self, name, n);
          refresh_entry(self, name, n);
        }
        flush_changes(self);
      },
  };
}

}  // namespace

caf::actor spawn_heartbeat_intake(caf::actor_system& sys, actor_env env) {
  auto router = env.router;
  const std::vector<std::string> subscriptions{std::string{messages::topics::heartbeat}, std::string{topics::recovered},
                                               std::string{topics::node_sync}, std::string{topics::forgotten}};
  auto self = sys.spawn(heartbeat_intake, std::move(env));
  // Subscribed from the spawning thread, so the subscriptions are in place before anything this
  // thread routes next (an actor's own start-up runs later, on a scheduler thread).
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  return self;
}

}  // namespace rmbus::actors
