// Publication: gathers every pool's answer for a round and publishes rm.state, rm.cycle, rm.nodes, rm.events.
//
// A round (round_start from differencing) names the pools that must answer. When every one has answered,
// or round_timeout has passed, the round is published at once, in one handler, so a shutdown never leaves
// half a round on the bus. A pool that did not answer is reported (rm.events `round_timeout`) and its last
// known plan is published in its place: rm.state is always the COMPLETE schedule, so a monitor joining late
// is whole after one round. rm.state names the work map the round answers (workmap_seq, workmap_src).
//
// Pools send full plans and, between them, change plans (the jobs whose schedule changed and the ids of jobs
// gone, numbered: messages/internal/pool_plan.hpp). Publication keeps each pool's table of jobs
// (actors/plan_tables.hpp) and applies the plans received when the round is published. A change plan that
// does not follow the last plan taken of its pool (lost between processes, late, or after a refusal) is not
// taken: publication asks the scheduler for a full plan (rm.internal.plansync), which it sends at once for
// the round in flight. Events for shares that turned preempt or evict, and for newly refused work, come from
// the jobs the round's plans changed, compared with their version before.
// rm.state is kept between rounds too: the round's changes to the listing (actors/round_listing.hpp) are
// applied to the last one, with each job's entry kept packed for the encoder, and the same changes are the
// body of rm.schedule.changes.
//
// rm.nodes merges the intake's node table (a replica kept from numbered changes, actors/node_report_table.hpp)
// with each pool's machines (state, quanta, free quanta; each plan lists the machines that changed). It is
// published with every round, and outside rounds when nodes changed, at most once per heartbeat interval,
// so a cluster of thousands of nodes coming up costs a handful of rm.nodes, not one per node. Finally
// round_done lets the next round start. While no round is published for 2 orchestrator periods (an idle RM:
// actors/not_scheduling_watch.hpp), rm.nodes goes out again every report period, so that a monitor started
// beside an idle RM sees its nodes beside the reason it does not schedule.
//
// Safety (docs/reliability.md, "In-flight grants" and "The last line of defence"):
//  - Plans carry their scheduler's generation. A fresh scheduler asks for the last published schedule
//    (seed_request, with its generation); from then on no plan of an older generation of that pool is taken,
//    so a replaced scheduler that answers late can never have its grants published beside its successor's.
//  - Before a round goes out, no new share may put a node above its order (actors/overbooking.hpp). A pool
//    whose new plan would do that has its last published plan published instead (its table taken back),
//    with an error in the log naming the nodes and shares, an `invariant_violation` event and a metric (the
//    event's count); its next plan must be full. Only the nodes the round's changed jobs have shares on,
//    and those whose order fell, are checked: the others were checked when they last changed.
#include <algorithm>
#include <map>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "actors/node_report_table.hpp"
#include "actors/not_scheduling_watch.hpp"
#include "actors/overbooking.hpp"
#include "actors/plan_tables.hpp"
#include "actors/round_listing.hpp"
#include "actors/takeover_seed.hpp"
#include "messages/detail/peek.hpp"
#include "messages/schedule_tally.hpp"
#include "messages/topics.hpp"

namespace rmbus::actors {

namespace {

using plan_ptr = std::shared_ptr<const messages::payload>;  // holding a pool_plan

struct publication_state {
  actor_env env;
  envelope_stamper stamper{"publisher"};
  std::uint64_t cycle = 0;
  bool published = true;
  std::set<std::string> expected;
  // This round's answers: each pool's figures (rm.cycle). Not the plans themselves, which are freed once
  // applied: a first round's plan holds every job of its pool.
  std::map<std::string, messages::rm_cycle> answers;
  // Each pool's jobs as the last rm.state carried them, and the holdings of the nodes (the guard's).
  plan_tables tables;
  // Plans received and following, not yet applied (in chain order): this round's answers and late ones.
  std::map<std::string, std::vector<plan_ptr>> queued;
  std::set<std::string> order_fell;  // nodes whose order fell since the last round published
  std::map<std::string, std::uint64_t> generation;  // pool -> the newest scheduler generation heard of
  // The last rm.state published (also for fresh schedulers), kept between rounds and changed by what each
  // round changed (actors/round_listing.hpp); copied first only while a reader of the last one (the bus
  // encoder, the metrics actor, a seed on its way) still holds it. `state_in_step`: it is the listing of the
  // tables as committed (not at the start, nor after HA replaced it with the active's schedule).
  std::shared_ptr<messages::payload> last_state;
  bool state_in_step = false;
  // HA, on a standby: the bytes of the last rm.state the active published (the highest epoch heard), decoded
  // only when this process takes over, into last_state, so that its fresh schedulers are seeded from what the
  // active granted a moment before (issue 22's seed request) and give none of it away.
  std::string heard_state;
  std::uint64_t heard_epoch = 0;
  std::vector<messages::refused_work> refused;  // this round's refusals by differencing
  listed_before listed;  // what the last published round listed beyond the tables (rm.schedule.changes, events)
  // rm.schedule.changes (opt-in, [bus] schedule_changes_full_every): the cycle and epoch of its last message
  // (0: none yet), and the rounds since its last full one.
  std::uint64_t changes_cycle = 0;
  std::uint64_t changes_epoch = 0;
  int changes_since_full = 0;
  std::optional<std::uint64_t> workmap_seq;
  std::optional<std::string> workmap_src;
  std::string hold;  // why the round in flight gives nothing new (round_start::hold), for its rm.cycle
  node_report_table nodes;  // the intake's node table and the pools' machines: rm.nodes, each node's order
  // rm.nodes outside rounds: at most once per heartbeat interval.
  std::int64_t nodes_published_ms = 0;
  bool nodes_pending = false;    // changes not yet published
  bool nodes_timer_set = false;  // a delayed publication is scheduled
  std::int64_t round_published_ms = 0;  // the last round published (0: none yet)
  static inline const char* name = "rmbus.publication";
};

using publication_actor = caf::stateful_actor<publication_state>;

const messages::pool_plan& plan_of(const plan_ptr& p) { return std::get<messages::pool_plan>(*p); }

// Applies a queued plan to the tables. A plan the queue alone holds gives its entries up (route and the
// router make every payload non-const, shared read-only while anyone else may read it); one still held
// elsewhere (the bus encoder, a test) is copied. No other holder can appear once the count is 1.
void apply_queued(plan_tables& tables, const plan_ptr& p) {
  if (p.use_count() == 1)
    tables.apply(std::move(const_cast<messages::pool_plan&>(plan_of(p))));
  else
    tables.apply(plan_of(p));
}

template <class T>
void publish(publication_actor* self, std::string_view topic, T msg) {
  route(self, self->state.env.router, self->state.stamper, std::string{topic}, std::move(msg));
}

// The same payload again under another topic (the last rm.state to a fresh scheduler): shared, not copied.
void republish(publication_actor* self, std::string topic, std::shared_ptr<const messages::payload> body) {
  auto& st = self->state;
  auto env = st.stamper.next(topic);
  self->send(st.env.router, atoms::route::value, messages::routed_message{std::move(topic), std::move(env), std::move(body)});
}

void publish_nodes(publication_actor* self) {
  auto& st = self->state;
  st.nodes_pending = false;
  st.nodes_published_ms = wall_clock_ms();
  republish(self, std::string{messages::topics::rm_nodes}, st.nodes.report());
}

// Node changes outside a round: published now when the last rm.nodes is a heartbeat interval old, else
// once when it will be.
void nodes_changed(publication_actor* self) {
  auto& st = self->state;
  // HA: a standby publishes nothing; it keeps its tables current and builds rm.nodes only once active.
  if (st.env.ha && !st.env.ha->may_publish()) return;
  st.nodes_pending = true;
  if (st.nodes_timer_set) return;
  const auto interval = st.env.cfg->runtime.heartbeat_interval_ms;
  const auto wait = st.nodes_published_ms + interval - wall_clock_ms();
  if (wait <= 0) {
    publish_nodes(self);
    return;
  }
  st.nodes_timer_set = true;
  self->delayed_send(self, std::chrono::milliseconds(wait), atoms::nodes_due::value);
}

// Events for what the round changed: shares newly marked preempt or evict in the jobs its plans changed
// (with why: the core evicts on node down, vary-off and blacklisting, which the node's state in the plans
// tells), and work newly refused, by a pool or by differencing.
std::vector<messages::rm_event> changes_since_last_round(publication_state& st) {
  auto evict_reason = [&](const std::string& node) -> std::string {
    if (const auto* m = st.nodes.machine(node)) {
      if (m->state == messages::machine_status::varied_off) return "node varied off";
      if (m->state == messages::machine_status::blacklisted) return "blacklisted after reconfiguration";
    }
    return "node down";
  };
  std::vector<messages::rm_event> events;
  auto refused = [&](const std::string& id, const std::string& user, const std::string& reason) {
    // Once per (job, reason): an operator finds refused work in the log, not only in a counter.
    events.push_back({"refused", {{"job", id}, {"reason", reason}}});
    spdlog::warn("work {} of user {} refused: {}", id, user.empty() ? "?" : user, reason);
  };
  for (const auto& [pool, changed] : st.tables.applied()) {
    for (const auto& [id, applied] : changed) {
      if (applied.now == nullptr) continue;
      const auto& j = *applied.now;
      const auto& old = applied.before;
      if (j.status == messages::job_status::refused &&
          (!old || old->status != messages::job_status::refused || old->reason != j.reason))
        refused(j.id, j.user, j.reason);
      for (const auto* share : shares_newly_removed(j, old.get())) {
        const auto& s = *share;
        const bool pre = s.status == messages::share_status::preempt;
        events.push_back({pre ? "preempt" : "evict",
                          {{"job", j.id}, {"share", s.id}, {"node", s.node}, {"reason", pre ? "fair share" : evict_reason(s.node)}}});
      }
    }
  }
  for (const auto& r : st.refused) {
    auto before = st.listed.refused.find(r.id);
    if (before == st.listed.refused.end() || before->second.reason != r.reason) refused(r.id, r.user, r.reason);
  }
  return events;
}

// A pool's figures of the round its plan answers.
messages::rm_cycle cycle_of(const messages::pool_plan& plan) {
  messages::rm_cycle c;
  c.pool = plan.pool;
  c.cycle = plan.cycle;
  c.jobs = plan.jobs_count;
  c.nodes = plan.nodes;
  c.given = plan.given;
  c.preempted = plan.preempted;
  c.evicted = plan.evicted;
  c.how_much_us = plan.how_much_us;
  c.what_of_us = plan.what_of_us;
  c.preempt_us = plan.preempt_us;
  c.defrag_us = plan.defrag_us;
  c.total_us = plan.total_us;  // apply_work + schedule, measured by the pool's actor
  return c;
}

void publish_cycles(publication_actor* self) {
  for (const auto& [pool, c] : self->state.answers) publish(self, messages::topics::rm_cycle, c);
}

// Asks the pool's scheduler for a full plan (rm.internal.plansync): its change plans do not follow the last
// plan taken of it, or its last one was refused.
void ask_full_plan(publication_actor* self, const std::string& pool) {
  auto& st = self->state;
  publish(self, topics::plan_sync, messages::plan_sync_request{pool, st.generation[pool]});
}

// Nothing is published this round. The plans applied gave their entries to the tables (apply_queued) and
// cannot be applied again: each pool sends a full plan instead, as a culprit does. Returns false.
bool refuse_round(publication_actor* self) {
  auto& st = self->state;
  std::vector<std::string> applied;
  for (const auto& [pool, jobs] : st.tables.applied()) applied.push_back(pool);
  for (const auto& pool : applied) {
    st.tables.rollback(pool);
    st.queued.erase(pool);
    st.tables.break_chain(pool);
    ask_full_plan(self, pool);
  }
  return false;
}

// The last line of defence: a pool whose plan would put a node above its order has its last published plan
// published in its place (its table taken back; this round's changes only: the rest was checked when it went
// out), and its next plan must be full. Returns false when the round still overbooks a node (a node whose
// order fell), or when a refused pool has no good plan of this process to fall back on (its rm.state would
// list none of its work), and then nothing may be published: every table is taken back, and every pool's next
// plan must be full.
bool guard_against_overbooking(publication_actor* self) {
  auto& st = self->state;
  const node_quanta_lookup quanta_of = [&st](std::string_view node) { return st.nodes.order_of(node); };
  auto found = st.tables.overbooked(quanta_of, st.order_fell);
  if (found.empty()) return true;
  std::set<std::string> nodes;
  for (const auto& n : found) nodes.insert(n.node);
  const auto culprits = st.tables.touching(nodes);
  const auto what = describe(found);
  // A pool this process has published nothing good for (a fresh HA active's first round, seeded from its
  // predecessor) has no last good plan: taken back, its table would be empty, and rm.state would list none of
  // its running work. Then nothing is published this round, as when even the last good plans overbook.
  bool nothing_to_fall_back_on = false;
  for (const auto& pool : culprits) {
    spdlog::error("round {}: pool {}'s plan would put nodes above their order: {}; publishing its last good plan instead",
                  st.cycle, pool, what);
    std::string shares;
    for (const auto& n : found)
      for (const auto& s : n.shares) shares += (shares.empty() ? "" : ",") + s;
    std::string names;
    for (const auto& n : nodes) names += (names.empty() ? "" : ",") + n;
    publish(self, messages::topics::rm_events,
            messages::rm_event{std::string{messages::event_kinds::invariant_violation},
                               {{"pool", pool}, {"cycle", std::to_string(st.cycle)}, {"nodes", names}, {"shares", shares}}});
    st.tables.rollback(pool);
    st.queued.erase(pool);
    st.tables.break_chain(pool);
    ask_full_plan(self, pool);
    const auto* left = st.tables.table(pool);
    nothing_to_fall_back_on = nothing_to_fall_back_on || left == nullptr || left->empty();
  }
  if (nothing_to_fall_back_on) {
    spdlog::error("round {}: a refused pool has no good plan published by this process to fall back on; this round "
                  "is not published",
                  st.cycle);
    return refuse_round(self);
  }
  std::set<std::string> again = st.order_fell;
  again.insert(nodes.begin(), nodes.end());
  const auto still = st.tables.overbooked(quanta_of, again);
  if (still.empty()) return true;
  spdlog::error("round {}: even the last good plans put nodes above their order ({}); this round is not published",
                st.cycle, describe(still));
  return refuse_round(self);
}

// Whether rm.state of this round is the last one with the round's changes applied (else the tables' listing).
bool state_follows(const publication_state& st) { return st.state_in_step && st.last_state != nullptr; }

// rm.state of this round: the last one with the round's changes applied (`round`: given when it follows), or
// the whole listing of the tables when the last one is not theirs. Made before the tables are committed.
// `round_read_later`: rm.schedule.changes will send the round's entries; else they are moved into rm.state
// (a full map's round changes thousands of jobs, and each entry was copied once more only to be dropped).
void update_state(publication_state& st, messages::rm_schedule_changes* round, bool round_read_later) {
  if (!state_follows(st)) {
    st.last_state = std::make_shared<messages::payload>(messages::rm_state{});
    auto& fresh = std::get<messages::rm_state>(*st.last_state);
    fresh.jobs = list_round(st.tables, st.expected, st.refused);
    // Each entry packed once here; later rounds pack only the entries they change.
    fresh.encoded_jobs.reserve(fresh.jobs.capacity());
    for (const auto& j : fresh.jobs) fresh.encoded_jobs.push_back(messages::encode_job_entry(j));
    // Counted once here; later rounds count only the entries they change (apply_listing_changes).
    fresh.tally = std::make_shared<const messages::schedule_tally>(messages::tally_of(fresh.jobs));
    st.state_in_step = true;
  } else {
    if (st.last_state.use_count() > 1) st.last_state = std::make_shared<messages::payload>(*st.last_state);
    apply_listing_changes(std::get<messages::rm_state>(*st.last_state),
                          round_read_later ? round->jobs : std::move(round->jobs), round->removed);
  }
  auto& state = std::get<messages::rm_state>(*st.last_state);
  state.cycle = st.cycle;
  state.workmap_seq = st.workmap_seq;
  state.workmap_src = st.workmap_src;
}

std::uint64_t ha_epoch(const publication_state& st) { return st.env.ha ? st.env.ha->epoch() : 0; }

// Whether this round's rm.schedule.changes, when it is on, is the whole schedule: every
// schedule_changes_full_every rounds, first, and under a new epoch (a new active: subscribers start again at a
// full message).
bool changes_due_full(const publication_state& st) {
  return st.changes_cycle == 0 || ha_epoch(st) != st.changes_epoch ||
         st.changes_since_full + 1 >= st.env.cfg->runtime.schedule_changes_full_every;
}

// rm.schedule.changes (docs/protocol.md 4.3.1): this round's changes (`round`), or the whole schedule when
// changes_due_full or the round's changes were not listed (`round` null). Published after rm.state.
std::optional<messages::rm_schedule_changes> schedule_changes_of_round(publication_state& st,
                                                                       messages::rm_schedule_changes* round) {
  const int every = st.env.cfg->runtime.schedule_changes_full_every;
  if (every <= 0) {
    st.changes_cycle = 0;  // should it be turned on again, its stream starts with a full message
    return std::nullopt;
  }
  const std::uint64_t epoch = ha_epoch(st);
  messages::rm_schedule_changes msg;
  if (round == nullptr || changes_due_full(st)) {
    msg.full = true;
    msg.cycle = st.cycle;
    const auto& listed = std::get<messages::rm_state>(*st.last_state).jobs;
    msg.jobs.assign(listed.begin(), listed.end());
    st.changes_since_full = 0;
  } else {
    msg = std::move(*round);
    msg.base_cycle = st.changes_cycle;
    ++st.changes_since_full;
  }
  msg.workmap_seq = st.workmap_seq;
  msg.workmap_src = st.workmap_src;
  st.changes_cycle = st.cycle;
  st.changes_epoch = epoch;
  return msg;
}

// Publishes the whole round in this one handler, so a shutdown never leaves half of it on the bus.
void publish_round(publication_actor* self) {
  auto& st = self->state;
  if (st.published) return;
  st.published = true;
  for (const auto& pool : st.expected) {
    if (st.answers.count(pool)) continue;
    spdlog::warn("round {}: pool {} did not answer in time; keeping its last schedule", st.cycle, pool);
    publish(self, messages::topics::rm_events,
            messages::rm_event{"round_timeout", {{"pool", pool}, {"cycle", std::to_string(st.cycle)}}});
  }
  // A pool removed by reconfiguration: its table goes (a scheduler of it again starts with a full plan). What
  // it listed is kept until a round is published, for rm.schedule.changes to name its jobs gone.
  std::vector<std::string> gone;
  for (const auto& [pool, table] : st.tables.tables())
    if (!st.expected.count(pool)) gone.push_back(pool);
  for (const auto& pool : gone) {
    st.listed.dropped.emplace(pool, *st.tables.table(pool));
    st.tables.drop(pool);
  }
  for (const auto& [pool, plans] : st.queued)
    if (st.expected.count(pool))
      for (const auto& p : plans) apply_queued(st.tables, p);
  if (!guard_against_overbooking(self)) {
    // Even the last good plans would overbook (a node's order fell since): nothing is published this round.
    publish(self, topics::done, messages::round_done{st.cycle});
    return;
  }
  for (auto it = st.queued.begin(); it != st.queued.end();) {
    if (st.expected.count(it->first)) it = st.queued.erase(it);
    else ++it;
  }
  auto events = changes_since_last_round(st);
  // The round's changes to the listing, only where they are used: a first round (or one after HA replaced
  // rm.state) lists every job anew, and a copy of every job is the largest thing publication would hold.
  const bool changes_on = st.env.cfg->runtime.schedule_changes_full_every > 0;
  std::optional<messages::rm_schedule_changes> round;
  const bool changes_sent = changes_on && !changes_due_full(st);
  if (state_follows(st) || changes_sent)
    round = listing_changes(st.tables, st.expected, st.refused, st.listed, st.cycle, st.changes_cycle);
  update_state(st, round ? &*round : nullptr, changes_sent);
  auto changes = schedule_changes_of_round(st, round ? &*round : nullptr);
  st.tables.commit();
  st.order_fell.clear();
  st.listed.pools = st.expected;
  st.listed.refused.clear();
  for (const auto& r : st.refused) st.listed.refused.insert_or_assign(r.id, r);
  st.listed.dropped.clear();
  republish(self, std::string{messages::topics::rm_state}, st.last_state);
  if (changes) publish(self, messages::topics::rm_schedule_changes, std::move(*changes));
  publish_cycles(self);
  publish_nodes(self);
  st.round_published_ms = st.nodes_published_ms;
  for (auto& e : events) publish(self, messages::topics::rm_events, std::move(e));
  publish(self, topics::done, messages::round_done{st.cycle});
}

void on_round(publication_actor* self, const messages::round_start& r) {
  auto& st = self->state;
  publish_round(self);  // a previous round still open: publish what it has
  st.cycle = r.cycle;
  st.published = false;
  st.answers.clear();
  st.expected = std::set<std::string>(r.pools.begin(), r.pools.end());
  st.refused = r.refused;
  st.workmap_seq = r.workmap_seq > 0 ? std::optional<std::uint64_t>{r.workmap_seq} : std::nullopt;
  st.workmap_src = r.workmap_src.empty() ? std::nullopt : std::optional<std::string>{r.workmap_src};
  st.hold = r.hold;
  self->delayed_send(self, std::chrono::milliseconds(st.env.cfg->runtime.round_timeout_ms), atoms::timeout::value,
                     st.cycle);
  if (st.expected.empty()) publish_round(self);
}

void on_plan(publication_actor* self, messages::routed_message& m) {
  auto& st = self->state;
  const auto& plan = *m.as<messages::pool_plan>();
  auto& newest = st.generation[plan.pool];
  if (plan.generation < newest) {
    // A scheduler replaced since (it hung, then answered): its grants were never published and never will be.
    spdlog::warn("pool {}: a plan for round {} came from a replaced scheduler (generation {}, newest {}); ignored",
                 plan.pool, plan.cycle, plan.generation, newest);
    return;
  }
  newest = plan.generation;
  // A node whose order fell is checked by the guard at the next round whatever changed on it.
  for (const auto& mc : plan.machines)
    if (auto order = st.nodes.order_of(mc.node); order && mc.quanta < *order) st.order_fell.insert(mc.node);
  st.nodes.take_machines(plan);
  const auto v = st.tables.receive(plan);
  if (!v.follows) {
    // Not taken (nor counted as the pool's answer): the full plan asked for comes at once for this round.
    spdlog::info("pool {}: round {}'s plan {} does not follow ({}); asking for a full plan", plan.pool, plan.cycle,
                 plan.plan_seq, v.reason);
    st.queued.erase(plan.pool);
    ask_full_plan(self, plan.pool);
    return;
  }
  auto& queue = st.queued[plan.pool];
  if (plan.full()) queue.clear();  // it replaces whatever came before
  const bool answers_round = plan.cycle == st.cycle && !st.published;  // else late: applied with the next round
  if (answers_round) {
    st.answers[plan.pool] = cycle_of(plan);
    st.answers[plan.pool].held = st.hold;
  }
  // Held by the queue alone, not by this message too, so that the plan is freed once applied.
  queue.push_back(std::move(m.body));
  if (answers_round && st.answers.size() >= st.expected.size()) publish_round(self);
}

// A fresh scheduler asks for the last published schedule: from now on, no plan of an older generation of its
// pool is taken, and late plans of one queued for the next round are dropped (its table stays as published).
void on_seed_request(publication_actor* self, const messages::seed_request& r) {
  auto& st = self->state;
  auto& newest = st.generation[r.pool];
  if (r.generation >= newest) {
    newest = r.generation;
    if (auto kept = st.queued.find(r.pool); kept != st.queued.end()) {
      auto& q = kept->second;
      q.erase(std::remove_if(q.begin(), q.end(), [&](const plan_ptr& p) { return plan_of(p).generation < r.generation; }),
              q.end());
    }
  }
  std::shared_ptr<const messages::payload> body = st.last_state;
  if (!body) body = std::make_shared<const messages::payload>(messages::rm_state{});
  republish(self, topics::seed_topic(r.pool), std::move(body));
}

void ask_snapshot(publication_actor* self) {
  auto& st = self->state;
  publish(self, topics::node_sync, messages::node_sync_request{st.stamper.src(), {}});
}

// Every report period: rm.nodes again when no round was published for 2 orchestrator periods and none went
// out within the period (an idle RM's monitors see its nodes). A standby publishes nothing.
void republish_idle_nodes(publication_actor* self) {
  auto& st = self->state;
  const auto& rt = st.env.cfg->runtime;
  const auto period = not_scheduling_period_ms(rt.orchestrator_publish_ms);
  const auto now = wall_clock_ms();
  if (st.env.ha && !st.env.ha->may_publish()) return;
  if (now - st.round_published_ms > 2 * rt.orchestrator_publish_ms && now - st.nodes_published_ms >= period)
    publish_nodes(self);
}

caf::behavior publication(publication_actor* self, actor_env env) {
  self->state.env = env;
  self->state.stamper = envelope_stamper{env.src("publisher")};
  self->send(self, atoms::tick::value);
  return {
      [self](atoms::tick) {
        republish_idle_nodes(self);
        const auto period = not_scheduling_period_ms(self->state.env.cfg->runtime.orchestrator_publish_ms);
        self->delayed_send(self, std::chrono::milliseconds(period), atoms::tick::value);
      },
      [self](atoms::probe) { return static_cast<std::uint64_t>(self->mailbox().size()); },  // health
      // Mutable: a plan's body moves into the queue (on_plan).
      [self](atoms::deliver, messages::routed_message& m) {
        auto& st = self->state;
        std::vector<liveness_change> changes;
        auto outcome = node_replica::outcome::applied;
        if (const auto* r = m.as<messages::round_start>()) {
          on_round(self, *r);
          return;
        }
        if (m.as<messages::pool_plan>() != nullptr) {
          on_plan(self, m);
          return;
        }
        if (const auto* r = m.as<messages::seed_request>()) {
          on_seed_request(self, *r);
          return;
        }
        if (const auto* c = m.as<messages::node_changes>()) {
          outcome = st.nodes.apply(m.env.src, *c, changes);
          if ((!c->changed.empty() || !c->forgotten.empty()) && st.nodes.liveness().in_step()) nodes_changed(self);
        } else if (const auto* s = m.as<messages::node_snapshot>()) {
          outcome = st.nodes.apply(m.env.src, *s, changes);
          nodes_changed(self);
        }
        if (outcome == node_replica::outcome::need_snapshot) ask_snapshot(self);
      },
      [self](atoms::timeout, std::uint64_t cycle) {
        if (cycle == self->state.cycle) publish_round(self);
      },
      [self](atoms::nodes_due) {
        auto& st = self->state;
        st.nodes_timer_set = false;
        if (st.nodes_pending) publish_nodes(self);
      },
      [self](atoms::reset, config_ptr cfg) { self->state.env.cfg = std::move(cfg); },
      [self](atoms::deliver, const std::string& topic, const std::string& body) {
        // HA: another RM's rm.state from the bus (listened to on a candidate). A standby keeps the active's
        // last one as bytes; reading its envelope only costs a peek.
        auto& st = self->state;
        if (topic != messages::topics::rm_state || !st.env.ha || st.env.ha->active()) return;
        const auto src = messages::detail::peek_top_level_str(body, "src");
        const auto epoch = messages::detail::peek_top_level_uint(body, "epoch");
        if (!src || !epoch || st.env.is_local(*src) || *epoch < st.heard_epoch) return;
        st.heard_epoch = *epoch;
        st.heard_state = body;
      },
      [self](atoms::ha_active) {
        auto& st = self->state;
        if (!st.heard_state.empty()) {
          auto heard = messages::decode_rm_state(messages::topics::rm_state, st.heard_state, limits_of(*st.env.cfg));
          if (heard) {
            // Only when the orchestrator echoes: without the echo this process grants from its first round, and
            // the seed's grants are what keep their space (actors/takeover_seed.hpp).
            const bool echoes = st.env.ha->orchestrator_echoes();
            const auto dropped = echoes ? drop_unstarted_grants(heard.value()) : 0;
            spdlog::info("HA: fresh schedulers are seeded from the last schedule of epoch {} ({} jobs; {})", st.heard_epoch,
                         heard.value().jobs.size(),
                         echoes ? std::to_string(dropped) + " grants not started yet dropped: they are not this epoch's"
                                : std::string{"its grants kept: the orchestrator echoes no epoch"});
            st.last_state = std::make_shared<messages::payload>(std::move(heard.value()));
            st.state_in_step = false;  // the active's schedule: this process's first round lists its tables
          } else {
            spdlog::warn("HA: the last schedule heard from the active does not decode ({}); fresh schedulers "
                         "recover from the work map alone",
                         heard.error().message());
          }
          st.heard_state.clear();
          st.heard_state.shrink_to_fit();
        }
        // rm.nodes went unpublished as a standby; monitors get the node table at once, not only with the first
        // round (which waits for a work map).
        nodes_changed(self);
      },
      [self](atoms::ha_standby) {
        // HA: stepped down. What this process decided as the active is void: a later takeover starts from the
        // plans of its fresh schedulers, never from a deposed epoch's.
        auto& st = self->state;
        st.published = true;
        st.answers.clear();
        st.tables.clear();
        st.queued.clear();
        st.order_fell.clear();
        st.listed = {};
        st.changes_cycle = 0;
        st.last_state.reset();  // a deposed epoch's schedule seeds nobody; the next active's, heard, will
        st.state_in_step = false;
      },
  };
}

}  // namespace

caf::actor spawn_publication(caf::actor_system& sys, actor_env env) {
  auto router = env.router;
  const bool ha = env.ha != nullptr;
  const std::vector<std::string> subscriptions{std::string{topics::round}, std::string{topics::plan},
                                               std::string{topics::node_changes}, std::string{topics::node_snapshot},
                                               std::string{topics::seed_request}};
  auto self = sys.spawn(publication, std::move(env));
  // Subscribed from the spawning thread, so the subscriptions are in place before anything this
  // thread routes next (an actor's own start-up runs later, on a scheduler thread).
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  if (ha) caf::anon_send(router, atoms::listen::value, std::string{messages::topics::rm_state}, self);
  return self;
}

}  // namespace rmbus::actors
