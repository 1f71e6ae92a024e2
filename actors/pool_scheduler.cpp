// The scheduler of ONE top-level nodepool: a thin shell around core::nodepool_scheduler.
//
// Machine operations (rm.internal.node.<pool>) become one core call each (a run of `forget`s one call,
// answered on rm.internal.forgotten); the pool's slice of the work map
// (rm.internal.work.<pool>: a full slice or the changes since the last one, applied to the pool's work map the
// scheduler keeps, actors/slice_chain.hpp) becomes apply_work + schedule(round_input) and the answer goes out on
// rm.internal.plan (the pool's jobs, and only the machines whose state, size or free quanta changed since the
// previous plan: every machine in the first plan and after a node_sync_request). Plans are numbered: the
// first of a scheduler, and the one after publication asks (rm.internal.plansync), lists every job (a full
// plan); the others only the jobs whose schedule changed since the plan before and the ids of the jobs gone
// (plan_keeper's changes), so that converting a round's answer costs what the round changed. Admin queries
// (rm.internal.query.<pool>) are answered by actors/pool_queries.hpp; a scheduler that replaced another in
// this process (a reconfiguration, a failure, an HA step-down) holds them until its first round, when it
// knows the running work (or answers `restarting` after admin's first-round wait), so that a read right after
// a reconfiguration never shows an empty cluster.
// The admin's marks on a node (vary-off, drain) that this scheduler does not know yet (a node the
// configuration names that has not reported) are kept and applied with the node's first `update`, in the same
// handler, before any round could place work there.
// A fresh scheduler starts from the last schedule published for its pool: at its first work slice it asks
// publication for it (rm.internal.seedreq), holds the slice until the answer (rm.internal.seed.<pool>), asking again
// while none comes, and adopts its shares (core adopt_published), so that what its predecessor granted a moment
// before is never given away again (docs/reliability.md, "In-flight grants"). A scheduler that knows no machine
// (it replaces one that failed, or its process joined a running bus) also asks the intake to announce its
// pool's machines again and holds the slice until the answer's last batch (node_ops `announced_to`) came:
// with only the adopted shares' machines it would see a pool the size of what runs and preempt to make room
// in it. Every pool has its
// own actor, so the pools' cycles run concurrently on CAF's threads; the only thing spanning pools, the
// per-user allotment, arrives pre-partitioned in the round input (see workmap_diff.cpp).
#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/admin_deadlines.hpp"
#include "actors/admin_values.hpp"
#include "actors/allotment_partition.hpp"
#include "actors/detail/spawn.hpp"
#include "actors/pool_queries.hpp"
#include "actors/slice_chain.hpp"
#include "core/nodepool_scheduler.hpp"
#include "messages/topics.hpp"

namespace rmbus::actors {

namespace {

// What the last plan said of one machine slot, to send only what changed.
struct sent_machine {
  bool sent = false;
  messages::machine_status state = messages::machine_status::up;
  bool quiesced = false;
  std::uint64_t memory_mb = 0;
  std::uint64_t quanta = 0;
  std::uint64_t free_quanta = 0;
};

// A fresh scheduler's start from the last published schedule: not asked yet, asked and waiting, or done.
enum class seeding { not_asked, waiting, done };

struct scheduler_state {
  actor_env env;
  std::string pool;
  std::uint64_t generation = 0;  // orders this pool's schedulers (seed_request.hpp)
  std::stop_token retired;       // control replaced or stopped this scheduler
  seeding seed = seeding::not_asked;
  std::uint64_t seed_asks = 0;  // requests for the last schedule that went unanswered
  std::optional<messages::routed_message> held_slice;  // the newest slice received while waiting
  slice_chain work;  // the pool's work map, kept between rounds from the slices (full ones and changes)
  // The ids the slices named since the map was last applied to the core (apply_changes), or all of them
  // (a full slice: apply_work).
  std::vector<core::job_id> touched;
  bool touched_all = true;
  // The last round scheduled, and by whose slices: a full slice for the same round again (another reader of
  // the slices asked for it) only updates the map.
  std::uint64_t last_cycle = 0;
  std::string last_cycle_src;
  // Set while the pool's machines must be announced to this scheduler before it grants (see the top).
  bool awaiting_machines = false;
  std::uint64_t machine_asks = 0;  // requests for the pool's machines that went unanswered
  std::optional<core::nodepool_scheduler> sched;
  std::vector<sent_machine> last_sent;  // by machine slot
  bool send_all_machines = true;        // the first plan, and the one after a node_sync_request
  // The plan chain (messages/internal/pool_plan.hpp): the seq of the last plan sent (0: none yet), whether
  // the next one must be full, and the core's plan of the last round (owned by `sched`) with its round.
  std::uint64_t plan_seq = 0;
  bool send_full_plan = true;
  const core::schedule_plan* last_plan = nullptr;
  std::uint64_t last_plan_cycle = 0;
  // It replaced another scheduler of the pool in this process: until its first round (last_plan set), the
  // admin queries that need the running work wait in `held_queries`.
  bool replaces = false;
  std::vector<messages::admin_query> held_queries;
  // The admin's marks on machines it does not know yet, applied when each first reports.
  std::map<core::machine_id, std::vector<messages::node_op_kind>> early_marks;
  envelope_stamper stamper{"scheduler"};
  static inline const char* name = "rmbus.pool_scheduler";
};

using scheduler_actor = caf::stateful_actor<scheduler_state>;

// Share ids must never repeat, also across restarts and reconfigurations: the prefix carries the wall clock
// of the scheduler's creation (base 36) and the pool's position in the configuration.
std::string share_prefix(const config::rm_config& cfg, const std::string& pool) {
  static const char* digits = "0123456789abcdefghijklmnopqrstuvwxyz";
  auto ms = static_cast<std::uint64_t>(wall_clock_ms());
  std::string s;
  do {
    s.insert(s.begin(), digits[ms % 36]);
    ms /= 36;
  } while (ms > 0);
  std::size_t index = 0;
  for (std::size_t i = 0; i < cfg.scheduling.nodepools.size(); ++i)
    if (cfg.scheduling.nodepools[i].name == pool) index = i;
  return s + "-" + std::to_string(index);
}

// Forget operations in a row are carried out together (one compaction of the machine slots for a storm's
// thousands), in their place among the others, and answered on rm.internal.forgotten. Slots renumber, so
// the next plan lists every machine (publication rebuilds its table of this pool from it).
void forget_machines(scheduler_actor* self, std::vector<core::machine_id>& names) {
  if (names.empty()) return;
  auto& st = self->state;
  const auto before = st.sched->machine_count();
  const auto out = st.sched->forget_machines(names);
  names.clear();
  if (st.sched->machine_count() != before) {
    st.last_sent.clear();
    st.send_all_machines = true;
  }
  messages::machines_forgotten answer;
  answer.pool = st.pool;
  for (const auto& n : out.forgotten) answer.forgotten.push_back(n.str());
  for (const auto& n : out.kept) answer.kept.push_back(n.str());
  if (!out.kept.empty())
    spdlog::info("pool {}: {} machines forgotten, {} kept (they still hold shares or an admin mark)", st.pool,
                 out.forgotten.size(), out.kept.size());
  route(self, st.env.router, st.stamper, std::string{topics::forgotten}, std::move(answer));
}

void release_held_slice(scheduler_actor* self);

// Names this scheduler's requests for machines: the src alone is shared by every generation of the pool's
// scheduler in a process, and an answer to a predecessor's request may have reached this one only in part.
std::string machines_asker(const scheduler_state& st) {
  return st.stamper.src() + "/" + std::to_string(st.generation);
}

// One admin mark on a machine; false when the machine is not known here (yet).
bool apply_mark(core::nodepool_scheduler& s, const core::machine_id& node, messages::node_op_kind op) {
  switch (op) {
    case messages::node_op_kind::vary_off: return s.vary_off(node);
    case messages::node_op_kind::vary_on: return s.vary_on(node);
    case messages::node_op_kind::drain: return s.set_drained(node, true);
    case messages::node_op_kind::undrain: return s.set_drained(node, false);
    default: return true;
  }
}

// A mark for a machine not known yet replaces the earlier one of the same kind (vary_on undoes vary_off).
void keep_early_mark(scheduler_state& st, const core::machine_id& node, messages::node_op_kind op) {
  using k = messages::node_op_kind;
  const auto kind_of = [](k a) { return a == k::vary_on ? k::vary_off : a == k::undrain ? k::drain : a; };
  auto& marks = st.early_marks[node];
  std::erase_if(marks, [&](k m) { return kind_of(m) == kind_of(op); });
  if (op == k::vary_off || op == k::drain) marks.push_back(op);
  if (marks.empty()) st.early_marks.erase(node);
}

// The node reported: the marks kept for it (by its name, or its short name: the configuration may list either
// form) apply before anything else can happen to it.
void apply_early_marks(scheduler_state& st, const core::machine_id& node) {
  if (st.early_marks.empty()) return;
  const auto short_of = [](const std::string& n) { return n.substr(0, n.find('.')); };
  for (auto it = st.early_marks.begin(); it != st.early_marks.end();) {
    if (it->first == node || short_of(it->first.str()) == short_of(node.str())) {
      for (auto op : it->second) apply_mark(*st.sched, node, op);
      spdlog::info("pool {}: node {} reported; the admin's marks set before it did apply now", st.pool, node.str());
      it = st.early_marks.erase(it);
    } else {
      ++it;
    }
  }
}

void on_node_ops(scheduler_actor* self, const messages::node_ops& msg) {
  auto& s = *self->state.sched;
  std::vector<core::machine_id> to_forget;
  for (const auto& op : msg.ops) {
    const core::machine_id node{op.node};
    if (op.op == messages::node_op_kind::forget) {
      to_forget.push_back(node);
      continue;
    }
    forget_machines(self, to_forget);
    switch (op.op) {
      case messages::node_op_kind::update:
        s.update_machine({node, op.ip, op.memory_mb, op.quiesced});
        apply_early_marks(self->state, node);
        break;
      case messages::node_op_kind::down: s.machine_down(node); break;
      case messages::node_op_kind::unreachable: s.machine_unreachable(node); break;
      case messages::node_op_kind::vary_off:
      case messages::node_op_kind::vary_on:
      case messages::node_op_kind::drain:
      case messages::node_op_kind::undrain:
        if (!apply_mark(s, node, op.op)) keep_early_mark(self->state, node, op.op);
        break;
      case messages::node_op_kind::forget: break;
    }
  }
  forget_machines(self, to_forget);
  auto& st = self->state;
  if (st.awaiting_machines && msg.announced_to == machines_asker(st)) {
    st.awaiting_machines = false;
    spdlog::info("pool {}: its machines are announced ({} known); scheduling may grant", st.pool,
                 s.machine_count());
    release_held_slice(self);
  }
}

messages::machine_status to_wire(core::machine_state s) {
  switch (s) {
    case core::machine_state::up: return messages::machine_status::up;
    case core::machine_state::varied_off: return messages::machine_status::varied_off;
    case core::machine_state::down: return messages::machine_status::down;
    case core::machine_state::blacklisted: return messages::machine_status::blacklisted;
  }
  return messages::machine_status::up;
}

// The machines whose state, size or free quanta changed since the last plan (every machine when
// `complete`), by name. A round touches few machines; looking at each one costs a few integer compares.
std::vector<messages::machine_summary> changed_machines(scheduler_state& st, bool complete) {
  const auto& s = *st.sched;
  std::vector<messages::machine_summary> out;
  if (st.last_sent.size() < s.machine_count()) st.last_sent.resize(s.machine_count());
  for (std::size_t i = 0; i < s.machine_count(); ++i) {
    const auto b = s.machine_at(i);
    if (b.foreign) continue;  // its own pool reports it
    auto& last = st.last_sent[i];
    const auto state = to_wire(b.state);
    const auto quanta = static_cast<std::uint64_t>(b.quanta);
    const auto free = static_cast<std::uint64_t>(b.free_quanta);
    if (!complete && last.sent && last.state == state && last.quiesced == b.quiesced && last.memory_mb == b.memory_mb &&
        last.quanta == quanta && last.free_quanta == free)
      continue;
    last = {true, state, b.quiesced, b.memory_mb, quanta, free};
    out.push_back({b.name->str(), *b.nodepool, state, b.quiesced, b.memory_mb, quanta, free});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  return out;
}

// The jobs of a plan: all of them (a full plan: the first, and the one after publication asked), or the jobs
// the round changed and the ids of those gone since the plan before. Numbers the plan.
void add_jobs(scheduler_state& st, const core::schedule_plan& plan, messages::pool_plan& out) {
  const bool full = st.send_full_plan || st.plan_seq == 0;
  out.generation = st.generation;
  out.plan_seq = ++st.plan_seq;
  out.base_plan_seq = full ? 0 : st.plan_seq - 1;
  // Read only by differencing's allotment partition, which runs only when an allotment is configured: a walk
  // of every non-preemptable job and its shares, after every round, on the path of every change.
  if (any_allotment_limit(st.env.cfg->scheduling))
    out.np_mb = by_user_name(st.sched->nonpreemptable_mb_by_user());
  if (full) {
    out.jobs.reserve(plan.jobs.size());
    for (const auto& j : plan.jobs) out.jobs.push_back(to_schedule(j, plan.group_of(j)));
  } else {
    const auto& changed = st.sched->plan_changed_entries();
    out.jobs.reserve(changed.size());
    for (auto k : changed) out.jobs.push_back(to_schedule(plan.jobs[k], plan.group_of(plan.jobs[k])));
    out.removed_jobs.reserve(st.sched->plan_removed_jobs().size());
    for (const auto& id : st.sched->plan_removed_jobs()) out.removed_jobs.push_back(id.str());
  }
  st.send_full_plan = false;
}

// rmbus --inject-fault: fail on purpose in the rounds named (tests of supervision, docs/reliability.md).
void inject_fault(scheduler_actor* self, std::uint64_t cycle) {
  const auto& f = self->state.env.fault;
  if (!f || f->pool != self->state.pool || !f->applies_to(cycle)) return;
  if (f->what == injected_fault::kind::throw_exception) {
    spdlog::warn("pool {}: injected fault: throwing in round {}", f->pool, cycle);
    throw std::runtime_error("injected fault in round " + std::to_string(cycle));
  }
  const auto stall = std::chrono::milliseconds(3 * self->state.env.cfg->runtime.round_timeout_ms);
  spdlog::warn("pool {}: injected fault: round {} hangs for {} ms", f->pool, cycle, stall.count());
  std::this_thread::sleep_for(stall);
}

void answer(scheduler_actor* self, const messages::admin_query& q, bool restarting = false) {
  auto& st = self->state;
  messages::admin_answer a;
  a.qid = q.qid;
  a.from = st.pool;
  if (!restarting) a.result = answer_pool_query(*st.sched, st.last_plan, q.cmd, q.args);
  // status is answered at once, and says so while the counts lack the running work (an HA standby schedules
  // nothing by design: its pools are not restarting).
  const bool standby = st.env.ha && !st.env.ha->active();
  if (restarting || (st.replaces && st.last_plan == nullptr && !standby)) a.result["restarting"] = value{true};
  route(self, st.env.router, st.stamper, std::string{topics::answer}, std::move(a));
}

// A query is answered at once, unless this scheduler replaced another and has not scheduled a round yet: it
// waits for that round, at most first_round_wait (then its answer says `restarting`).
void on_query(scheduler_actor* self, const messages::admin_query& q) {
  auto& st = self->state;
  if (!st.replaces || st.last_plan != nullptr || !needs_a_round(q.cmd)) {
    answer(self, q);
    return;
  }
  st.held_queries.push_back(q);
  self->delayed_send(self, first_round_wait(*st.env.cfg), atoms::timeout::value, q.qid);
}

void answer_held_queries(scheduler_actor* self) {
  auto held = std::move(self->state.held_queries);
  self->state.held_queries.clear();
  for (const auto& q : held) answer(self, q);
}

// Nodes the round found above their order by what the work map shows there, brought back under it: a warning
// and an rm.events over_order_repaired each, naming the shares taken back.
void report_repairs(scheduler_actor* self, std::uint64_t cycle) {
  auto& st = self->state;
  for (const auto& r : st.sched->last_repairs()) {
    std::string shares;
    for (const auto& id : r.shares) shares += (shares.empty() ? "" : ",") + id.str();
    spdlog::warn("pool {}: node {} ran {} quanta, above its order {} (the work map shows it so): round {} takes back "
                 "{} share(s), least invested first: {}",
                 st.pool, r.node.str(), r.held, r.order, cycle, r.shares.size(), shares);
    route(self, st.env.router, st.stamper, std::string{messages::topics::rm_events},
          messages::rm_event{std::string{messages::event_kinds::over_order_repaired},
                             {{"pool", st.pool},
                              {"node", r.node.str()},
                              {"held", std::to_string(r.held)},
                              {"order", std::to_string(r.order)},
                              {"cycle", std::to_string(cycle)},
                              {"shares", shares}}});
  }
}

// One round: the pool's work map as the slices made it (st.work), scheduled with the slice's round input.
void on_work(scheduler_actor* self, const messages::work_slice& slice) {
  auto& st = self->state;
  inject_fault(self, slice.cycle);
  core::round_input in;
  in.now_ms = static_cast<std::int64_t>(slice.now_ms);
  in.settling = slice.settling;
  in.settle_reason = slice.hold;
  in.cycle = slice.cycle;
  for (const auto& [u, mb] : slice.other_np_mb) in.other_pools_nonpreemptable_mb[core::user_id{u}] = mb;

  std::map<core::machine_id, int> foreign;
  for (const auto& [node, n] : slice.foreign_processes)
    foreign.emplace(core::machine_id{node}, static_cast<int>(std::min<std::uint64_t>(n, 1u << 30)));

  const auto t0 = std::chrono::steady_clock::now();
  st.sched->set_foreign_processes(foreign);
  st.sched->set_acted_cycle(slice.acted_cycle);
  if (st.touched_all) st.sched->apply_work(st.work.work());
  else st.sched->apply_changes(st.work.work(), st.touched);
  st.touched.clear();
  st.touched_all = false;
  const auto& plan = st.sched->schedule(in);
  const auto total_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();

  messages::pool_plan out;
  out.cycle = slice.cycle;
  out.pool = st.pool;
  out.quantum_mb = plan.quantum_mb;
  out.total_us = static_cast<std::uint64_t>(total_us);
  // How Much computes the job caps in its first sweep, as DUCC does at its start: how_much_us covers both.
  const auto& t = st.sched->last_stage_timings();
  out.how_much_us = static_cast<std::uint64_t>(t.how_much_us);
  out.what_of_us = static_cast<std::uint64_t>(t.what_of_us);
  out.preempt_us = static_cast<std::uint64_t>(t.preempt_us);
  out.defrag_us = static_cast<std::uint64_t>(t.defrag_us);
  out.jobs_count = static_cast<std::uint64_t>(plan.counts.jobs);
  out.nodes = static_cast<std::uint64_t>(plan.counts.schedulable_nodes);
  out.given = static_cast<std::uint64_t>(plan.counts.given);
  out.preempted = static_cast<std::uint64_t>(plan.counts.preempted);
  out.evicted = static_cast<std::uint64_t>(plan.counts.evicted);
  st.last_plan = &plan;
  st.last_plan_cycle = slice.cycle;
  add_jobs(st, plan, out);
  out.machines_complete = st.send_all_machines;
  out.machines = changed_machines(st, st.send_all_machines);
  st.send_all_machines = false;
  // Replaced while this round ran (it was slow): the successor starts from the last published schedule, and
  // this plan's grants must never be published beside its own.
  if (st.retired.stop_requested()) {
    spdlog::info("pool {}: a replaced scheduler (generation {}) drops its plan for round {}", st.pool, st.generation,
                 slice.cycle);
    return;
  }
  report_repairs(self, slice.cycle);
  route(self, st.env.router, st.stamper, std::string{topics::plan}, std::move(out));
  answer_held_queries(self);
}

// Publication cannot apply this pool's change plans (one was lost or refused): a full plan of the last
// round goes at once, so that the round waiting for it is not lost to a timeout. A scheduler that has not
// planned yet sends a full plan first anyway.
void on_plan_sync(scheduler_actor* self, const messages::plan_sync_request& r) {
  auto& st = self->state;
  if (r.pool != st.pool || r.generation > st.generation) return;  // another pool's, or a successor's
  st.send_full_plan = true;
  if (st.last_plan == nullptr || st.retired.stop_requested()) return;
  spdlog::info("pool {}: publication asks for a full plan; sending round {}'s", st.pool, st.last_plan_cycle);
  messages::pool_plan out;
  out.cycle = st.last_plan_cycle;
  out.pool = st.pool;
  out.quantum_mb = st.last_plan->quantum_mb;
  out.jobs_count = static_cast<std::uint64_t>(st.last_plan->counts.jobs);
  out.nodes = static_cast<std::uint64_t>(st.last_plan->counts.schedulable_nodes);
  add_jobs(st, *st.last_plan, out);
  out.machines_complete = st.send_all_machines;
  out.machines = changed_machines(st, st.send_all_machines);
  st.send_all_machines = false;
  route(self, st.env.router, st.stamper, std::string{topics::plan}, std::move(out));
}

core::share_status core_status(messages::share_status s) {
  switch (s) {
    case messages::share_status::running: return core::share_status::running;
    case messages::share_status::new_: return core::share_status::new_share;
    case messages::share_status::preempt: return core::share_status::preempt;
    case messages::share_status::evict: return core::share_status::evict;
  }
  return core::share_status::running;
}

// Every job's shares of the last published schedule; the core keeps those of the jobs its first map gives
// this pool (the schedule lists every pool's jobs).
core::published_schedule published_of(const messages::rm_state& s) {
  core::published_schedule out;
  for (const auto& j : s.jobs) {
    if (j.shares.empty()) continue;
    auto& list = out[core::job_id{j.id}];
    list.reserve(j.shares.size());
    for (const auto& sh : j.shares)
      list.push_back({core::share_id{sh.id}, core::machine_id{sh.node},
                      static_cast<int>(std::clamp<std::uint64_t>(sh.quanta, 1, 1u << 20)), core_status(sh.status),
                      static_cast<std::int64_t>(std::min<std::uint64_t>(sh.reclaim_at_ms.value_or(0), INT64_MAX))});
  }
  return out;
}

// How often a fresh scheduler asks again for the last published schedule while it holds its first slice.
// Publication answers at once when it runs (even with nothing); a starved or restarting one answers late, and
// until it does the scheduler grants nothing: starting from the work map alone would give away the quanta of
// shares its predecessor granted that the map does not list yet (a node above its order, issue 22).
std::chrono::milliseconds seed_wait(const config::rm_config& cfg) {
  return std::chrono::milliseconds(std::clamp<std::int64_t>(cfg.runtime.round_timeout_ms / 4, 50, 1000));
}

void on_slice(scheduler_actor* self, const messages::routed_message& m);

// A fresh scheduler grants nothing before it knows what its predecessor granted and, when it had to ask for
// them, every machine of its pool.
bool may_grant(const scheduler_state& st) { return st.seed == seeding::done && !st.awaiting_machines; }

// The slice held while starting, if any, is scheduled once nothing is missing any more.
void release_held_slice(scheduler_actor* self) {
  auto& st = self->state;
  if (!may_grant(st) || !st.held_slice) return;
  const auto held = std::move(*st.held_slice);
  st.held_slice.reset();
  if (st.retired.stop_requested()) return;  // on_slice's rule: the successor has the pool
  on_work(self, *held.as<messages::work_slice>());
}

// Asks for what is still missing (the last schedule, the pool's machines); the timeout asks again.
void ask_what_is_missing(scheduler_actor* self) {
  auto& st = self->state;
  if (st.seed == seeding::waiting)
    route(self, st.env.router, st.stamper, std::string{topics::seed_request},
          messages::seed_request{st.pool, st.generation});
  // Asked from here, after a work slice arrived through the router: the router has this scheduler's
  // subscriptions by then (made with the work topic's), so the intake's answer on node_topic reaches it.
  if (st.awaiting_machines)
    route(self, st.env.router, st.stamper, std::string{topics::node_sync},
          messages::node_sync_request{machines_asker(st), st.pool});
  self->delayed_send(self, seed_wait(*st.env.cfg), atoms::timeout::value);
}

// A work slice: applied to the pool's work map, then scheduled at once, except the first round of a fresh
// scheduler, held until the last published schedule has been adopted. A change slice that does not build on
// the map held (a slice lost between processes, or a fresh scheduler) schedules nothing: the scheduler asks
// for a full slice (rm.internal.worksync), which differencing sends at once for the round in flight.
void on_slice(scheduler_actor* self, const messages::routed_message& m) {
  auto& st = self->state;
  const auto& slice = *m.as<messages::work_slice>();
  if (st.retired.stop_requested()) {
    // Replaced while this slice waited behind a round that ran too long: its successor has the pool.
    spdlog::info("pool {}: a replaced scheduler (generation {}) leaves round {} to its successor", st.pool,
                 st.generation, slice.cycle);
    self->quit();
    return;
  }
  const auto v = st.work.take(m.env.src, slice);
  if (v.what == slice_outcome::gap) {
    spdlog::info("pool {}: round {}'s slice {} cannot be applied ({}); asking for a full slice", st.pool, slice.cycle,
                 slice.seq, v.reason);
    route(self, st.env.router, st.stamper, std::string{topics::work_sync},
          messages::work_sync_request{st.pool, slice.cycle});
    return;
  }
  if (slice.full()) {
    st.touched.clear();
    st.touched_all = true;
  } else if (!st.touched_all) {
    for (const auto& w : slice.work) st.touched.emplace_back(w.id);
    for (const auto& id : slice.removed) st.touched.emplace_back(id);
  }
  if (slice.cycle == st.last_cycle && m.env.src == st.last_cycle_src) return;
  st.last_cycle = slice.cycle;
  st.last_cycle_src = m.env.src;
  if (may_grant(st)) {
    on_work(self, slice);
    return;
  }
  st.held_slice = m;  // the newest round wins (its changes are in st.work already)
  if (st.seed != seeding::not_asked) return;  // asked already; the timeout asks again
  st.seed = seeding::waiting;
  ask_what_is_missing(self);
}

void on_seed(scheduler_actor* self, const messages::rm_state& last) {
  auto& st = self->state;
  if (st.seed != seeding::waiting) return;  // late, or meant for a scheduler before this one
  auto shares = published_of(last);
  std::size_t count = 0;
  for (const auto& [job, list] : shares) count += list.size();
  if (count > 0)
    spdlog::info("pool {}: a fresh scheduler starts from the schedule of round {} ({} shares of every pool)", st.pool,
                 last.cycle, count);
  st.sched->adopt_published(std::move(shares));
  st.seed = seeding::done;
  release_held_slice(self);
}

caf::behavior pool_scheduler(scheduler_actor* self, actor_env env, std::string pool, std::uint64_t generation,
                             std::stop_token retired, bool restarted, bool intake_elsewhere, bool replaces) {
  auto& st = self->state;
  st.env = env;
  st.pool = pool;
  st.generation = generation;
  st.retired = std::move(retired);
  st.stamper = envelope_stamper{env.src("scheduler." + pool)};
  st.sched.emplace(pool, env.cfg->scheduling, share_prefix(*env.cfg, pool));
  st.sched->set_stage_clock([] {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  });
  // One that replaces a scheduler that failed, or runs in a process apart from the intake (which announces
  // each machine once, when it comes up), knows no machine: it asks for them at its first work slice.
  st.awaiting_machines = restarted || intake_elsewhere;
  st.replaces = replaces || restarted;
  return {
      [self](atoms::probe) { return static_cast<std::uint64_t>(self->mailbox().size()); },  // health
      [self](atoms::ha_active, const std::string& epoch_tag) {
        // HA: this process became the active RM. Ids given from now on carry its epoch and instance, so no
        // other active (before, after, or at once in a partition) can coin the same id.
        auto& st = self->state;
        st.sched->set_share_prefix(share_prefix(*st.env.cfg, st.pool) + "-" + epoch_tag);
      },
      [self](atoms::deliver, const messages::routed_message& m) {
        auto& st = self->state;
        if (const auto* ops = m.as<messages::node_ops>()) {
          on_node_ops(self, *ops);
        } else if (m.as<messages::work_slice>() != nullptr) {
          on_slice(self, m);
        } else if (const auto* seed = m.as<messages::rm_state>()) {
          if (m.topic == topics::seed_topic(st.pool)) on_seed(self, *seed);
        } else if (const auto* q = m.as<messages::admin_query>()) {
          on_query(self, *q);
        } else if (const auto* ps = m.as<messages::plan_sync_request>()) {
          on_plan_sync(self, *ps);
        } else if (m.as<messages::node_sync_request>() != nullptr) {
          st.send_all_machines = true;  // a reader of rm.nodes restarted: list every machine once
        }
      },
      [self](atoms::timeout, std::uint64_t qid) {
        // A held query whose first round did not come in time: answered `restarting`.
        auto& held = self->state.held_queries;
        auto it = std::find_if(held.begin(), held.end(), [&](const auto& q) { return q.qid == qid; });
        if (it == held.end()) return;
        const auto q = *it;
        held.erase(it);
        answer(self, q, true);
      },
      [self](atoms::timeout) {
        auto& st = self->state;
        if (may_grant(st)) return;
        if (st.retired.stop_requested()) {
          self->quit();  // replaced while it waited: its successor asks for itself
          return;
        }
        // Logged at the first miss and then every tenth, so a long outage of publication or of the intake
        // stays visible without flooding the log.
        if (st.seed == seeding::waiting && st.seed_asks++ % 10 == 0)
          spdlog::warn("pool {}: no last schedule from publication after {} requests {} ms apart; holding the work "
                       "map (nothing is granted before the last schedule is known) and asking again",
                       st.pool, st.seed_asks, seed_wait(*st.env.cfg).count());
        if (st.awaiting_machines && st.machine_asks++ % 10 == 0)
          spdlog::warn("pool {}: its machines not announced by the intake after {} requests {} ms apart; holding the "
                       "work map (nothing is granted before the pool's machines are known) and asking again",
                       st.pool, st.machine_asks, seed_wait(*st.env.cfg).count());
        ask_what_is_missing(self);
      },
  };
}

}  // namespace

caf::actor spawn_pool_scheduler(caf::actor_system& sys, actor_env env, std::string pool, std::uint64_t generation,
                                std::stop_token retired, bool restarted, bool intake_elsewhere, bool replaces) {
  auto router = env.router;
  const std::vector<std::string> subscriptions{topics::node_topic(pool), topics::work_topic(pool),
                                               topics::query_topic(pool), std::string{topics::node_sync},
                                               topics::seed_topic(pool), std::string{topics::plan_sync}};
  auto self = sys.spawn(pool_scheduler, std::move(env), std::move(pool), generation, std::move(retired), restarted,
                        intake_elsewhere, replaces);
  // Subscribed from the spawning thread, so the subscriptions are in place before anything this
  // thread routes next (an actor's own start-up runs later, on a scheduler thread).
  for (const auto& t : subscriptions) caf::anon_send(router, atoms::subscribe::value, t, self);
  return self;
}

}  // namespace rmbus::actors
