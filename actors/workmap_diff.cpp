// Work-map differencing: orchestrator.workmap -> one round, each pool given its slice of the work.
//
// The orchestrator sends its FULL map every time. This actor decodes it with partial errors (a malformed item
// keeps its last good state, or is ignored while new, and becomes a bad_message event; it is never taken as
// finished), routes every item to the scheduler of the top-level pool owning its class, and starts one round:
// rm.internal.work.<pool> to every pool, rm.internal.round to publication. Slices carry only the items that
// changed since the pool's last slice (actors/work_slicer.hpp); each scheduler keeps its pool's map
// (actors/slice_chain.hpp) and asks for a full slice when it cannot apply one (rm.internal.worksync). The core
// schedulers difference each pool's map against what they hold (core::nodepool_scheduler::apply_work): new work arrives, gone
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
// Such a map means the RM restarted under running work: its rounds then settle (they report what is held and
// give nothing new, round_input::settling) until settle_ms after start, so that every live agent has been
// heard before anything is given or taken on a partial picture of the cluster.
// This actor also owns the cross-pool allotment partition (actors/allotment_partition.hpp).
// While it runs no rounds it says why every report period (rm.events `not_scheduling`,
// actors/not_scheduling_watch.hpp): its start-up window, no work map, or a round overdue; the reason is
// logged when it changes, so an idle RM reads as idle in its log, its status and its monitors.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/allotment_partition.hpp"
#include "actors/departed_jobs.hpp"
#include "actors/echo_wait.hpp"
#include "actors/not_scheduling_watch.hpp"
#include "actors/workmap_bytes.hpp"
#include "actors/workmap_chain.hpp"
#include "actors/workmap_gate.hpp"
#include "actors/work_slicer.hpp"
#include "actors/detail/spawn.hpp"
#include "config/node_placement.hpp"
#include "core/nodepool_scheduler.hpp"
#include "messages/rm_event.hpp"
#include "messages/topics.hpp"
#include "messages/workmap.hpp"
#include "messages/workmap_delta.hpp"

namespace rmbus::actors {

namespace {

struct diff_state {
  actor_env env;
  envelope_stamper stamper{"diff"};
  messages::decode_limits limits;
  std::optional<config::node_placement> placement;
  // Node -> its top-level pool, by name as the work map gives it: placement runs regular expressions, and
  // every live process of every round is looked up. Cleared on reconfiguration and when it outgrows
  // twice max_nodes (names come from the orchestrator).
  std::unordered_map<std::string, std::string> top_level_of_node;
  std::optional<workmap_gate> gate;
  std::vector<std::string> pools;                    // top-level pools, configuration order
  // The last map taken (every item in its last good version), shared with the round waiting for it: a map of
  // 20,000 items is not copied to be kept. A delta changes it in place: the round waiting for it (if any)
  // holds this same map and wants the newest version of it; a round that started has copied its slices.
  using item_map = workmap_chain::item_map;
  std::shared_ptr<item_map> last = std::make_shared<item_map>();
  std::optional<workmap_chain> chain;  // which map `last` is at, for deltas (docs/protocol.md 4.2.1)
  // Which items changed since the last round, and the pools' slices cut from them (actors/work_slicer.hpp).
  work_slicer slicer;
  // Each pool's slice of the round in flight without its items: a scheduler that asks for a full slice
  // in the middle of the round gets one with this header (cycle, clock, allotment), once per round.
  std::map<std::string, messages::work_slice> round_header;
  // When workmap_resync last asked for a full map: the ask is repeated at most once a second while deltas keep
  // coming without one (an event can be missed, and a standby's events never leave its process).
  std::int64_t resync_asked_ms = 0;
  std::shared_ptr<const item_map> pending;  // newest map waiting for its round (null: none)
  bool ready = false;
  bool first_map = true;  // the next map is the first since start or reconfiguration
  bool in_flight = false;
  std::uint64_t cycle = 0;
  std::map<std::string, std::map<std::string, std::uint64_t>> held;  // pool -> user -> np MB (last answers)
  std::map<std::string, bool> wants_more;                            // job -> pending or short, last round
  std::int64_t started_ms = 0;       // wall clock at spawn: the settle window counts from it
  std::int64_t settle_until_ms = 0;  // rounds before this time only report (0: no window)
  // Why no round runs (actors/not_scheduling_watch.hpp): the last map taken, the round in flight's start,
  // and the reason last reported (logged when it changes; "" while scheduling).
  std::optional<std::int64_t> map_taken_ms;
  std::int64_t round_started_ms = 0;
  std::string idle_reason;
  std::uint64_t pending_seq = 0;  // envelope seq and src of the map waiting for its round
  std::string pending_src;
  // That map's rm_cycle: the last schedule its orchestrator acted on. The schedulers drop a removed share the
  // map never showed only once the orchestrator has acted on the round that published the removal.
  std::optional<std::uint64_t> pending_acted;
  // HA: that map's rm_epoch (the highest epoch its orchestrator accepted), and what the maps say of whether the
  // orchestrator echoes at all. A new active grants nothing until a map echoes its own epoch (echo_wait.hpp).
  std::optional<std::uint64_t> pending_echo;
  echo_wait echoes;
  std::uint64_t holding_epoch = 0;   // the epoch whose rounds wait for the echo now (0: none)
  std::int64_t holding_since_ms = 0;
  std::uint64_t granting_epoch = 0;  // the last epoch whose rounds were let grant (so it is said once)
  // The encoded `work` of the last map taken when it decoded without a damaged item, by item: a map repeating
  // these bytes decodes to `last` again, and a map repeating most items decodes only the others (on_workmap).
  // Nothing held: the next map is decoded in full.
  workmap_bytes last_bytes;
  static inline const char* name = "rmbus.workmap_diff";
};

using diff_actor = caf::stateful_actor<diff_state>;

void configure(diff_actor* self, config_ptr cfg) {
  auto& st = self->state;
  st.env.cfg = std::move(cfg);
  st.limits = limits_of(*st.env.cfg);
  if (!st.chain) st.chain.emplace(st.limits.max_array_len);
  st.chain->set_max_items(st.limits.max_array_len);
  st.chain->reset();  // after start or reconfiguration the next map must be a full one
  st.placement.emplace(st.env.cfg->scheduling);
  st.top_level_of_node.clear();
  if (!st.gate)
    st.gate.emplace(st.env.cfg->runtime.accept_any_orchestrator, 3 * st.env.cfg->runtime.orchestrator_publish_ms);
  st.pools.clear();
  for (const auto& p : st.env.cfg->scheduling.nodepools)
    if (p.parent.empty()) st.pools.push_back(p.name);
  st.slicer.configure(st.env.cfg->scheduling, st.pools);
  st.round_header.clear();
}

void publish_event(diff_actor* self, messages::rm_event ev) {
  route(self, self->state.env.router, self->state.stamper, std::string{messages::topics::rm_events}, std::move(ev));
}

// Whether the map of envelope `env` is the one to act on (actors/workmap_gate.hpp has the rules); what is
// not taken is logged and, but for a duplicate, reported as an event.
bool take_map(diff_actor* self, const messages::envelope& env) {
  auto& st = self->state;
  const auto previous = st.gate->owner();
  const auto last = st.gate->last_seq(env.src);
  switch (st.gate->judge(env.src, env.seq, env.ts_ms, wall_clock_ms())) {
    case workmap_gate::verdict::take: return true;
    case workmap_gate::verdict::takeover:
      if (!previous.empty()) {
        spdlog::warn("work map: orchestrator {} takes over from {}, silent for 3 periods", env.src, previous);
        publish_event(self, {"orchestrator_takeover", {{"src", env.src}, {"previous", previous}}});
      }
      return true;
    case workmap_gate::verdict::duplicate:
      spdlog::debug("work map {} from {} seen before: ignored", env.seq, env.src);
      return false;
    case workmap_gate::verdict::stale:
      spdlog::warn("work map {} from {} is older than map {}: ignored", env.seq, env.src, last);
      publish_event(self, {"workmap_ignored",
                           {{"src", env.src}, {"seq", std::to_string(env.seq)}, {"reason", "older than map " + std::to_string(last)}}});
      return false;
    case workmap_gate::verdict::foreign:
      spdlog::warn("work map from {} refused: {} owns the work map", env.src, previous);
      publish_event(self, {"workmap_refused", {{"src", env.src}, {"owner", previous}}});
      return false;
  }
  return false;
}

const std::string& top_level_of(diff_state& st, const std::string& node) {
  auto it = st.top_level_of_node.find(node);
  if (it != st.top_level_of_node.end()) return it->second;
  if (st.top_level_of_node.size() >= 2 * st.env.cfg->runtime.limits.max_nodes) st.top_level_of_node.clear();
  return st.top_level_of_node.emplace(node, st.placement->place(node, "").top_level).first->second;
}

// A map taken: HA hears its echo (actors/ha.cpp), and the takeover handshake learns whether this orchestrator
// echoes at all.
void note_echo(diff_state& st, std::optional<std::uint64_t> rm_epoch, std::optional<std::uint64_t> rm_cycle) {
  if (!st.env.ha) return;
  st.env.ha->note_workmap(rm_epoch, rm_cycle);
  st.echoes.note_map(rm_epoch, st.env.ha->epoch());
}

// HA: whether this active's round grants nothing new yet, waiting for the orchestrator to accept its epoch
// (actors/echo_wait.hpp). The wait's start and end are logged and published once per epoch.
echo_wait::verdict echo_hold(diff_actor* self) {
  auto& st = self->state;
  if (!st.env.ha || !st.env.ha->active()) return {};
  const auto epoch = st.env.ha->epoch();
  auto v = st.echoes.judge(epoch, st.pending_echo);
  const auto now = wall_clock_ms();
  if (v.hold) {
    if (st.holding_epoch != epoch) {
      st.holding_epoch = epoch;
      st.holding_since_ms = now;
      spdlog::info("HA: epoch {} grants nothing new until the orchestrator accepts it: {}", epoch, v.reason);
      publish_event(self, {"ha_echo_wait", {{"epoch", std::to_string(epoch)}, {"reason", v.reason}}});
    }
    return v;
  }
  if (st.granting_epoch == epoch) return v;
  st.granting_epoch = epoch;
  if (st.holding_epoch == epoch) {
    const auto waited = now - st.holding_since_ms;
    spdlog::info("HA: the orchestrator accepted epoch {} after {} ms: granting", epoch, waited);
    publish_event(self, {"ha_echo_accepted", {{"epoch", std::to_string(epoch)}, {"waited_ms", std::to_string(waited)}}});
  } else if (st.echoes.orchestrator() == echo_wait::echo::silent) {
    spdlog::warn("HA: the orchestrator echoes no rm_epoch: epoch {} grants without waiting for its acceptance, so two "
                 "actives cut off from each other could both be acted on (docs/protocol.md 4.8)",
                 epoch);
    publish_event(self, {"ha_echo_absent", {{"epoch", std::to_string(epoch)}}});
  }
  st.holding_epoch = 0;
  return v;
}

void start_round(diff_actor* self, const std::map<std::string, messages::work_item>& items) {
  auto& st = self->state;
  const auto& cfg = st.env.cfg->scheduling;
  ++st.cycle;
  messages::round_start round;
  round.cycle = st.cycle;
  round.workmap_seq = st.pending_seq;
  round.workmap_src = st.pending_src;
  auto cut = st.slicer.cut(items, [self](const std::string& node) -> const std::string& {
    return top_level_of(self->state, node);
  });
  round.refused = std::move(cut.refused);
  forget_departed_jobs(st.wants_more, items);
  // The waiting non-preemptable work is gathered only when an allotment is there to partition: it lists
  // every FIXED_SHARE and RESERVE item, a lookup each, on the path of every change.
  std::map<std::string, std::map<core::user_id, std::uint64_t>> budgets;
  if (any_allotment_limit(cfg)) {
    std::vector<waiting_np_work> waiting;
    for (auto& n : st.slicer.non_preemptable_work()) {
      auto it = st.wants_more.find(n.job);
      if (it == st.wants_more.end() || it->second) waiting.push_back(std::move(n));
    }
    budgets = partition_allotments(cfg, st.pools, st.held, waiting);
  }
  const auto now = static_cast<std::uint64_t>(wall_clock_ms());
  const bool restart_settling = static_cast<std::int64_t>(now) < st.settle_until_ms;
  const auto echo = echo_hold(self);
  const bool settling = restart_settling || echo.hold;
  const std::string hold = restart_settling ? std::string{} : echo.reason;
  round.hold = restart_settling ? std::string{"settling after a restart"} : echo.reason;
  st.round_header.clear();
  for (auto& [pool, slice] : cut.slices) {
    slice.cycle = st.cycle;
    slice.now_ms = now;
    slice.settling = settling;
    slice.hold = hold;
    slice.other_np_mb = by_user_name(budgets[pool]);
    slice.acted_cycle = st.pending_acted;
    auto& header = st.round_header[pool];
    header.cycle = slice.cycle;
    header.now_ms = slice.now_ms;
    header.settling = slice.settling;
    header.hold = slice.hold;
    header.other_np_mb = slice.other_np_mb;
    header.acted_cycle = slice.acted_cycle;
    route(self, st.env.router, st.stamper, topics::work_topic(pool), std::move(slice));
    round.pools.push_back(pool);
  }
  route(self, st.env.router, st.stamper, std::string{topics::round}, std::move(round));
  st.in_flight = true;
  st.round_started_ms = wall_clock_ms();
  // Guard: should publication never report the round done (its process died), do not stall forever.
  const auto guard = std::chrono::milliseconds(2 * st.env.cfg->runtime.round_timeout_ms + 1000);
  self->delayed_send(self, guard, atoms::timeout::value, st.cycle);
}

// A scheduler could not apply its slice (one was lost between processes, or it is fresh): its next slice is
// full, and if the round it could not schedule is still in flight, a full slice for that round goes now, so
// the round is not lost to a timeout.
void on_work_sync(diff_actor* self, const messages::work_sync_request& r) {
  auto& st = self->state;
  st.slicer.resync(r.pool);
  auto header = st.round_header.find(r.pool);
  if (!st.in_flight || r.cycle != st.cycle || header == st.round_header.end()) {
    spdlog::info("pool {}: its scheduler asks for a full slice (round {}); the next round sends one", r.pool, r.cycle);
    return;
  }
  auto slice = st.slicer.full_slice(r.pool, *st.last);
  slice.cycle = header->second.cycle;
  slice.now_ms = header->second.now_ms;
  slice.settling = header->second.settling;
  slice.hold = header->second.hold;
  slice.other_np_mb = std::move(header->second.other_np_mb);
  slice.acted_cycle = header->second.acted_cycle;
  st.round_header.erase(header);  // once per round
  spdlog::info("pool {}: its scheduler asks for a full slice; round {} sends one now ({} items)", r.pool, r.cycle,
               slice.work.size());
  route(self, st.env.router, st.stamper, topics::work_topic(r.pool), std::move(slice));
}

void next_round(diff_actor* self) {
  auto& st = self->state;
  if (!st.ready || st.in_flight || !st.pending) return;
  // HA: a standby takes every map (the newest waits in `pending`) and runs no round; it starts one from that
  // map the moment it becomes the active RM (atoms::ha_active).
  if (st.env.ha && !st.env.ha->active()) return;
  auto items = std::move(st.pending);
  start_round(self, *items);
}

// The first map since start names live processes on `nodes` nodes: the RM restarted under running work.
// Until settle_ms after start, its rounds only report (round_input::settling); a timer ends the window.
void begin_settling(diff_actor* self, std::size_t nodes) {
  auto& st = self->state;
  const std::int64_t until = st.started_ms + st.env.cfg->runtime.settle_ms;
  const std::int64_t now = wall_clock_ms();
  if (now >= until) return;  // a heartbeat interval has passed already: nothing to wait for
  st.settle_until_ms = until;
  spdlog::info("work map names live processes on {} nodes: the RM restarted; it settles for {} ms, giving nothing new",
               nodes, until - now);
  publish_event(self, {"settling", {{"until_ms", std::to_string(until)}, {"nodes", std::to_string(nodes)}}});
  self->delayed_send(self, std::chrono::milliseconds(until - now), atoms::settled::value);
}

void end_settling(diff_actor* self) {
  auto& st = self->state;
  if (st.settle_until_ms == 0) return;
  st.settle_until_ms = 0;
  spdlog::info("settle window over: scheduling as usual");
  publish_event(self, {"settled", {}});
  // The last map is complete: schedule it now rather than wait for the orchestrator's next one.
  if (!st.pending && !st.last->empty()) st.pending = st.last;
  next_round(self);
}

bool names_live_process(const messages::work_item& w) {
  if (w.state == messages::work_state::completed) return false;
  for (const auto& p : w.processes)
    if (p.state != messages::process_state::ended) return true;
  return false;
}

// Fast recovery: scheduling starts at once on a map that names a live process (`live`).
void start_on_live_work(diff_state& st, bool live) {
  if (st.ready || !live || !st.env.cfg->runtime.fast_recovery) return;
  st.ready = true;
  spdlog::info("work map names live processes: scheduling starts now (fast recovery)");
}

// Takes a map whose items are read (`head`: the rest of the map, `env` its envelope) as the last map now.
void take_as_last(diff_actor* self, messages::envelope&& env, const messages::workmap& head) {
  auto& st = self->state;
  note_echo(st, head.rm_epoch, head.rm_cycle);
  st.chain->full_map(env.src, env.seq);
  st.map_taken_ms = wall_clock_ms();
  st.pending = st.last;
  st.pending_seq = env.seq;
  st.pending_src = std::move(env.src);
  st.pending_acted = head.rm_cycle;
  st.pending_echo = head.rm_epoch;
}

// An orchestrator republishes its whole map every period, and from one map to the next most of its items are
// the same bytes (all of them in a quiet cluster). When the last map taken decoded without a damaged item and
// was not the first since start or reconfiguration, only this map's head and the items whose bytes differ
// are decoded (actors/workmap_bytes.hpp), and the change is applied to the last map's items. True when the
// map was handled so (taken or not); false: decode it whole.
bool change_of_last(diff_actor* self, const std::string& topic, const std::shared_ptr<const std::string>& map) {
  auto& st = self->state;
  if (!st.last_bytes.holds() || st.first_map) return false;
  const auto& body = *map;
  const auto work = messages::peek_workmap_work(body);
  if (!work) return false;
  messages::envelope env;
  auto head = messages::decode_workmap_head(topic, body, *work, st.limits, &env);
  if (!head) return false;  // the full decode reports it
  if (*work == st.last_bytes.bytes()) {
    // The same items: the last ones are scheduled again. A fifth of what an idle RM does.
    if (!take_map(self, env)) return true;
    take_as_last(self, std::move(env), head.value());
    next_round(self);
    return true;
  }
  auto change = st.last_bytes.compare(topic, {map, *work}, *st.last, st.limits);
  if (!change) return false;
  if (!take_map(self, env)) return true;
  workmap_bytes::apply(*change, *st.last);
  for (const auto& w : change->added) st.slicer.touch(w.id);
  for (const auto& w : change->changed) st.slicer.touch(w.id);
  for (const auto& id : change->removed) st.slicer.touch(id);
  spdlog::debug("work map {} from {}: {} of {} items decoded; {} added, {} changed, {} removed", env.seq, env.src,
                change->decoded, change->items, change->added.size(), change->changed.size(), change->removed.size());
  start_on_live_work(st, std::any_of(change->added.begin(), change->added.end(), names_live_process) ||
                             std::any_of(change->changed.begin(), change->changed.end(), names_live_process));
  st.last_bytes.adopt(std::move(*change));
  take_as_last(self, std::move(env), head.value());
  next_round(self);
  return true;
}

// A delta (docs/protocol.md 4.2.1): taken by the same rules as a full map (its envelope through the gate, its
// rm_epoch to HA), then applied to the last map when it builds on it (actors/workmap_chain.hpp); otherwise
// nothing changes and the RM waits for the next full map, saying so once.
void on_delta(diff_actor* self, const std::string& topic, const std::string& body) {
  auto& st = self->state;
  messages::envelope env;
  auto d = messages::decode_workmap_delta(topic, body, st.limits, &env);
  if (!d) {
    auto head = messages::decode_envelope(topic, body, st.limits);
    if (!head) {
      publish_event(self, messages::make_bad_message_event(d.error()));
      return;
    }
    const auto& src = head.value().src;
    spdlog::warn("work map delta {} from {} refused: {}", head.value().seq, src, d.error().message());
    messages::rm_event ev{"workmap_delta_refused",
                          {{"src", src}, {"seq", std::to_string(head.value().seq)}, {"error", d.error().message()}}};
    if (!d.error().field.empty()) ev.detail["field"] = d.error().field;
    publish_event(self, std::move(ev));
    // A change of the map's owner was lost: its later deltas cannot be applied.
    if (src == st.chain->last_src()) st.chain->break_chain();
    return;
  }
  if (!take_map(self, env)) return;
  note_echo(st, d.value().rm_epoch, d.value().rm_cycle);
  const auto v = st.chain->apply(env.src, env.seq, d.value(), *st.last);
  const std::string seq = std::to_string(env.seq), base = std::to_string(d.value().base_seq);
  switch (v.what) {
    case workmap_chain::outcome::applied:
      st.last_bytes.forget();  // `last` changed: the next full map is decoded whole
      for (const auto& w : d.value().added) st.slicer.touch(w.id);
      for (const auto& w : d.value().changed) st.slicer.touch(w.id);
      for (const auto& id : d.value().removed) st.slicer.touch(id);
      st.map_taken_ms = wall_clock_ms();
      st.pending = st.last;
      st.pending_seq = env.seq;
      st.pending_src = std::move(env.src);
      st.pending_acted = d.value().rm_cycle;
      st.pending_echo = d.value().rm_epoch;
      next_round(self);
      return;
    case workmap_chain::outcome::waiting:
      spdlog::debug("work map delta {} from {} ignored: waiting for a full map", env.seq, env.src);
      if (wall_clock_ms() - st.resync_asked_ms >= 1000) {
        st.resync_asked_ms = wall_clock_ms();
        publish_event(self, {"workmap_resync",
                             {{"src", env.src}, {"seq", seq}, {"base_seq", base}, {"reason", "still waiting for a full map"}}});
      }
      return;
    case workmap_chain::outcome::gap:
      spdlog::warn("work map delta {} from {} cannot be applied ({}): waiting for a full map", env.seq, env.src, v.reason);
      st.resync_asked_ms = wall_clock_ms();
      publish_event(self, {"workmap_resync", {{"src", env.src}, {"seq", seq}, {"base_seq", base}, {"reason", v.reason}}});
      return;
    case workmap_chain::outcome::refused:
      spdlog::warn("work map delta {} from {} refused ({}): nothing of it applied; waiting for a full map", env.seq,
                   env.src, v.reason);
      st.resync_asked_ms = wall_clock_ms();
      publish_event(self, {"workmap_delta_refused", {{"src", env.src}, {"seq", seq}, {"base_seq", base}, {"error", v.reason}}});
      return;
  }
}

// `body` is taken: the map's bytes are kept as they came, not copied (workmap_bytes).
void on_workmap(diff_actor* self, const std::string& topic, std::string& body) {
  auto& st = self->state;
  if (messages::is_workmap_delta(body)) {
    on_delta(self, topic, body);
    return;
  }
  const auto map = std::make_shared<const std::string>(std::move(body));
  if (change_of_last(self, topic, map)) return;
  st.last_bytes.forget();
  messages::envelope env;
  auto wm = messages::decode_workmap(topic, *map, st.limits, &env);
  if (!wm) {
    publish_event(self, messages::make_bad_message_event(wm.error()));
    return;
  }
  if (!take_map(self, env)) return;
  note_echo(st, wm.value().rm_epoch, wm.value().rm_cycle);
  st.chain->full_map(env.src, env.seq);
  auto fresh = std::make_shared<diff_state::item_map>();
  auto& items = *fresh;
  for (auto& w : wm.value().work) {
    auto id = w.id;
    items.insert_or_assign(std::move(id), std::move(w));
  }
  bool keep_missing = false;
  for (const auto& bad : wm.value().bad_items) {
    auto ev = messages::make_bad_message_event(bad.error);
    if (!bad.id.empty()) ev.detail["job"] = bad.id;
    publish_event(self, ev);
    if (bad.id.empty()) {
      keep_missing = true;  // cannot tell which item it was: retire nothing this time
    } else if (auto it = st.last->find(bad.id); it != st.last->end()) {
      items[bad.id] = it->second;  // keeps its last good state; a new bad item is ignored
    }
  }
  if (keep_missing)
    for (const auto& [id, w] : *st.last)
      if (!items.count(id)) items[id] = w;
  st.slicer.compare(*st.last, items);
  st.last = fresh;
  if (wm.value().bad_items.empty())
    if (const auto work = messages::peek_workmap_work(*map)) st.last_bytes.remember({map, *work});
  if (st.first_map) {
    st.first_map = false;
    std::map<std::string, std::uint64_t> nodes;
    for (const auto& [id, w] : items)
      for (const auto& p : w.processes)
        if (p.state != messages::process_state::ended && w.state != messages::work_state::completed)
          nodes[p.node] = std::max(nodes[p.node], p.node_memory_mb.value_or(0));
    if (!nodes.empty()) {
      const std::size_t node_count = nodes.size();
      messages::recovered_nodes r;
      for (const auto& [n, mb] : nodes) r.nodes.push_back({n, mb});
      route(self, st.env.router, st.stamper, std::string{topics::recovered}, std::move(r));
      begin_settling(self, node_count);
    }
  }

  if (!st.ready)
    start_on_live_work(st, std::any_of(items.begin(), items.end(), [](const auto& i) { return names_live_process(i.second); }));
  st.map_taken_ms = wall_clock_ms();
  st.pending = std::move(fresh);
  st.pending_seq = env.seq;
  st.pending_src = std::move(env.src);
  st.pending_acted = wm.value().rm_cycle;
  st.pending_echo = wm.value().rm_epoch;
  next_round(self);
}

void on_plan(diff_actor* self, const messages::pool_plan& plan) {
  auto& st = self->state;
  st.held[plan.pool] = plan.np_mb;
  // A change plan lists only the jobs whose schedule changed, and those gone; the others are as before. A
  // plan that does not follow the last one (lost between processes) is still right for the jobs it lists.
  for (const auto& id : plan.removed_jobs) st.wants_more.erase(id);
  for (const auto& j : plan.jobs)
    st.wants_more[j.id] = j.status != messages::job_status::scheduled || !j.reason.empty();
}

// Every report period: why no round runs, published and logged when the reason changes; nothing while rounds
// run. A standby runs no rounds by design and says nothing (the active speaks for the RM).
void report_not_scheduling(diff_actor* self) {
  auto& st = self->state;
  const auto& rt = st.env.cfg->runtime;
  if (st.env.ha && !st.env.ha->active()) {
    st.idle_reason.clear();
    return;
  }
  scheduling_facts f;
  f.now_ms = wall_clock_ms();
  f.started_ms = st.started_ms;
  f.window_ms = rt.heartbeat_interval_ms * std::max(0, rt.init_stability);
  f.ready = st.ready;
  f.last_map_ms = st.map_taken_ms;
  if (st.in_flight) f.round_started_ms = st.round_started_ms;
  f.cycle = st.cycle;
  f.workmap_period_ms = rt.orchestrator_publish_ms;
  f.round_timeout_ms = rt.round_timeout_ms;
  const auto why = why_not_scheduling(f);
  if (!why) {
    if (!st.idle_reason.empty()) spdlog::info("scheduling again (round {})", st.cycle);
    st.idle_reason.clear();
    return;
  }
  auto text = messages::describe(*why);
  if (why->reason != st.idle_reason) {
    if (why->reason == messages::not_scheduling_reasons::round_overdue)
      spdlog::warn("not scheduling: {}", text);
    else
      spdlog::info("not scheduling: {}", text);
  }
  st.idle_reason = why->reason;
  publish_event(self, messages::to_event(*why));
}

caf::behavior workmap_diff(diff_actor* self, actor_env env) {
  auto& st = self->state;
  st.env = env;
  st.stamper = envelope_stamper{env.src("diff")};
  st.started_ms = wall_clock_ms();
  configure(self, env.cfg);
  const auto rt = env.cfg->runtime;
  self->delayed_send(self, std::chrono::milliseconds(rt.heartbeat_interval_ms * std::max(0, rt.init_stability)),
                     atoms::ready::value);
  self->send(self, atoms::tick::value);  // the first report at once: a monitor started with the RM hears why
  return {
      [self](atoms::probe) { return static_cast<std::uint64_t>(self->mailbox().size()); },  // health
      // The body by reference: the router sends each consumer a message of its own, so CAF hands its bytes over
      // without a copy (actors/router.cpp).
      [self](atoms::deliver, const std::string& topic, std::string& body) { on_workmap(self, topic, body); },
      [self](atoms::deliver, const messages::routed_message& m) {
        auto& st = self->state;
        if (const auto* p = m.as<messages::pool_plan>()) {
          on_plan(self, *p);
        } else if (const auto* r = m.as<messages::work_sync_request>()) {
          on_work_sync(self, *r);
        } else if (const auto* d = m.as<messages::round_done>(); d != nullptr && d->cycle == st.cycle) {
          st.in_flight = false;
          next_round(self);
        }
      },
      [self](atoms::ready) {
        if (!self->state.ready) spdlog::info("init stability reached: scheduling starts");
        self->state.ready = true;
        next_round(self);
        report_not_scheduling(self);  // at once: the window's report would otherwise stand for a period
      },
      [self](atoms::settled) { end_settling(self); },
      [self](atoms::tick) {
        report_not_scheduling(self);
        const auto period = not_scheduling_period_ms(self->state.env.cfg->runtime.orchestrator_publish_ms);
        self->delayed_send(self, std::chrono::milliseconds(period), atoms::tick::value);
      },
      [self](atoms::ha_active) {
        // HA: this process is the active RM now. The last map is complete: schedule it at once rather than
        // wait for the orchestrator's next one.
        auto& st = self->state;
        st.in_flight = false;
        st.slicer.resync_all();  // this process's schedulers start from full slices
        if (!st.pending && !st.last->empty()) st.pending = st.last;
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
        self->state.last_bytes.forget();
      },
  };
}

}  // namespace

caf::actor spawn_workmap_diff(caf::actor_system& sys, actor_env env) {
  auto router = env.router;
  const std::vector<std::string> subscriptions{std::string{messages::topics::workmap}, std::string{topics::plan}, std::string{topics::done},
                                               std::string{topics::work_sync}};
  auto self = sys.spawn(workmap_diff, std::move(env));
  // Subscribed from the spawning thread, so the subscriptions are in place before anything this
  // thread routes next (an actor's own start-up runs later, on a scheduler thread).
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  return self;
}

}  // namespace rmbus::actors
