#include "core/nodepool_scheduler.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "core/defragment.hpp"
#include "core/held_back.hpp"
#include "core/how_much.hpp"
#include "core/job_estimates.hpp"
#include "core/preemption.hpp"
#include "core/quanta.hpp"
#include "core/reason_text.hpp"
#include "core/unmet_demand.hpp"
#include "core/what_of.hpp"

namespace rmbus::core {

namespace {

void add_postorder(cluster_model& m, int p) {
  for (int c : m.pools[static_cast<std::size_t>(p)].children) add_postorder(m, c);
  m.pool_postorder.push_back(p);
}

}  // namespace

nodepool_scheduler::nodepool_scheduler(std::string top_pool, scheduler_config cfg, std::string share_id_prefix) {
  model_.top_pool = std::move(top_pool);
  model_.settings = cfg.settings;
  model_.share_prefix = std::move(share_id_prefix);
  model_.user_limits = cfg.users;
  model_.quantum_mb = quantum_of(cfg, model_.top_pool);
  pool_defs_ = cfg.nodepools;
  pool_rec top;
  top.name = model_.top_pool;
  for (const auto& d : cfg.nodepools)
    if (d.name == model_.top_pool) top.search_order = d.search_order;
  model_.pools.push_back(top);
  // Breadth-first over the tree; a name is taken once (config/ rejects cycles and duplicates).
  std::set<std::string> seen{model_.top_pool};
  for (std::size_t i = 0; i < model_.pools.size(); ++i) {
    std::vector<const nodepool_def*> kids;
    for (const auto& d : cfg.nodepools)
      if (d.parent == model_.pools[i].name && !seen.count(d.name)) kids.push_back(&d);
    std::sort(kids.begin(), kids.end(), [](const nodepool_def* a, const nodepool_def* b) {
      if (a->search_order != b->search_order) return a->search_order < b->search_order;
      return a->name < b->name;
    });
    for (const auto* d : kids) {
      seen.insert(d->name);
      pool_rec r;
      r.name = d->name;
      r.parent = static_cast<int>(i);
      r.depth = model_.pools[i].depth + 1;
      r.search_order = d->search_order;
      model_.pools[i].children.push_back(static_cast<int>(model_.pools.size()));
      model_.pools.push_back(r);
    }
  }
  add_postorder(model_, 0);
  for (const auto& c : cfg.classes) {
    class_rec r;
    r.def = c;
    for (std::size_t p = 0; p < model_.pools.size(); ++p)
      if (model_.pools[p].name == c.nodepool) r.pool = static_cast<int>(p);
    model_.classes.push_back(r);
    auto& tree = model_.trees.emplace_back();
    if (c.policy == policy::fair_share && !cfg.groups.empty()) tree = share_tree::of_class(cfg.groups, c.name);
    for (auto& g : tree.groups) {
      g.plan_index = static_cast<int>(model_.group_names.size());
      model_.group_names.push_back(g.name);
    }
  }
}

void nodepool_scheduler::set_share_prefix(std::string prefix) { model_.share_prefix = std::move(prefix); }

int nodepool_scheduler::pool_index(const std::string& name) const {
  for (std::size_t p = 0; p < model_.pools.size(); ++p)
    if (model_.pools[p].name == name) return static_cast<int>(p);
  return 0;
}

// ---- machines -----------------------------------------------------------------------------------

bool nodepool_scheduler::update_machine(const machine_report& r) {
  if (r.memory_mb == 0 || r.name.empty()) return false;
  const int order = usable_machine_order(r.memory_mb, model_.settings.reserved_dram_mb, model_.quantum_mb);
  auto it = model_.machine_index.find(r.name);
  int mi;
  if (it == model_.machine_index.end()) {
    scheduler_config cfg;
    cfg.nodepools = pool_defs_;
    machine_rec mc;
    mc.name = r.name;
    mc.ip = r.ip;
    mc.pool = pool_index(find_nodepool(cfg, r.name.str(), r.ip));
    mi = add_machine_rec(std::move(mc));
  } else {
    mi = it->second;
    auto& known = model_.machines[static_cast<std::size_t>(mi)];
    if (known.foreign) {
      // Reported as ours after all: it becomes one of this pool's machines, with the shares it holds.
      scheduler_config cfg;
      cfg.nodepools = pool_defs_;
      known.foreign = false;
      known.pool = pool_index(find_nodepool(cfg, r.name.str(), r.ip));
      model_.machines_changed();
      dirty_ = true;
    }
  }
  // Its first heartbeat after a restart: the size its recovered shares must fit in is known now.
  const bool was_unheard = std::exchange(model_.machines[static_cast<std::size_t>(mi)].unheard, false);
  if (was_unheard) {
    model_.machines_changed();
    dirty_ = true;
  }
  auto& mc = model_.machines[static_cast<std::size_t>(mi)];
  if (mc.memory_mb != r.memory_mb || mc.order != order || mc.quiesced != r.quiesced || mc.down ||
      (!r.ip.empty() && mc.ip != r.ip))
    dirty_ = true;
  if (mc.order != order || mc.quiesced != r.quiesced || mc.down) model_.machines_changed();
  if (!r.ip.empty()) mc.ip = r.ip;
  const bool shrank = order < mc.order;
  mc.memory_mb = r.memory_mb;
  mc.order = order;
  mc.quiesced = r.quiesced;
  mc.down = false;
  model_.max_order = std::max(model_.max_order, order);
  if (shrank) evict_overflow(mi);
  if (was_unheard) note_over_order(mi);  // sized at last: what it holds may not fit
  return true;
}

namespace {
bool evict_on_down(const cluster_model& m, const share_rec& s) {
  return m.jobs[static_cast<std::size_t>(s.job)].item.kind != work_kind::reservation;
}
bool evict_on_vary_off(const cluster_model&, const share_rec& s) { return !s.fixed; }
bool evict_on_blacklist(const cluster_model& m, const share_rec& s) {
  const auto k = m.jobs[static_cast<std::size_t>(s.job)].item.kind;
  return k == work_kind::job || k == work_kind::service;
}
}  // namespace

void nodepool_scheduler::evict_where(int mi, bool (*evictable)(const cluster_model&, const share_rec&)) {
  const auto slots = model_.machines[static_cast<std::size_t>(mi)].shares;
  for (int s : slots) {
    auto& sh = model_.shares[static_cast<std::size_t>(s)];
    if (sh.removing() || !evictable(model_, sh)) continue;
    evict_share(s);
  }
}

void nodepool_scheduler::evict_share(int s) {
  model_.mark_removing(s, share_status::evict);
  auto& j = model_.jobs[static_cast<std::size_t>(model_.shares[static_cast<std::size_t>(s)].job)];
  if (j.item.kind != work_kind::job) end_allocation(j);  // services/APs are resubmitted, not re-placed
}

// A machine that came back smaller than what its shares hold: the youngest shares (least invested) are
// evicted until the rest fit; unmanaged reservations stay, as on a node that goes down.
void nodepool_scheduler::evict_overflow(int mi) {
  const auto& mc = model_.machines[static_cast<std::size_t>(mi)];
  int held = mc.used - mc.removing;
  if (held <= mc.order) return;
  std::vector<int> youngest_first;
  for (int s : mc.shares) {
    const auto& sh = model_.shares[static_cast<std::size_t>(s)];
    if (!sh.removing() && evict_on_down(model_, sh)) youngest_first.push_back(s);
  }
  std::sort(youngest_first.begin(), youngest_first.end(), [&](int a, int b) {
    const auto& x = model_.shares[static_cast<std::size_t>(a)];
    const auto& y = model_.shares[static_cast<std::size_t>(b)];
    return x.seq != y.seq ? x.seq > y.seq : x.id.str() > y.id.str();
  });
  for (int s : youngest_first) {
    if (held <= mc.order) break;
    held -= model_.shares[static_cast<std::size_t>(s)].order;
    evict_share(s);
  }
  dirty_ = true;
}

bool nodepool_scheduler::machine_down(const machine_id& name) {
  auto it = model_.machine_index.find(name);
  if (it == model_.machine_index.end()) return false;
  model_.machines[static_cast<std::size_t>(it->second)].down = true;
  model_.machines_changed();
  evict_where(it->second, evict_on_down);
  dirty_ = true;
  return true;
}

bool nodepool_scheduler::machine_unreachable(const machine_id& name) {
  auto it = model_.machine_index.find(name);
  if (it == model_.machine_index.end()) return false;
  auto& mc = model_.machines[static_cast<std::size_t>(it->second)];
  if (mc.down) return true;
  mc.down = true;
  model_.machines_changed();
  // A grant whose process no map has shown is withdrawn now: left `new` it would ask the orchestrator to start
  // it on a node reported down while the mass-loss brake paces the eviction of what does run (rmbus-sim-check
  // counted such rounds). The job is placed elsewhere this round. One the orchestrator started since the last
  // map goes too: it is the least invested work there, and the brake is for work that has run a while.
  for (int s : mc.shares) withdraw_if_unstarted(s);
  dirty_ = true;
  return true;
}

void nodepool_scheduler::withdraw_if_unstarted(int s) {
  const auto& sh = model_.shares[static_cast<std::size_t>(s)];
  if (sh.status == share_status::new_share && !sh.seen && evict_on_down(model_, sh)) evict_share(s);
}

bool nodepool_scheduler::vary_off(const machine_id& name) {
  auto it = model_.machine_index.find(name);
  if (it == model_.machine_index.end()) return false;
  model_.machines[static_cast<std::size_t>(it->second)].varied_off = true;
  model_.machines_changed();
  evict_where(it->second, evict_on_vary_off);
  dirty_ = true;
  return true;
}

bool nodepool_scheduler::vary_on(const machine_id& name) {
  auto it = model_.machine_index.find(name);
  if (it == model_.machine_index.end()) return false;
  model_.machines[static_cast<std::size_t>(it->second)].varied_off = false;
  model_.machines_changed();
  dirty_ = true;
  return true;
}

bool nodepool_scheduler::set_drained(const machine_id& name, bool drained) {
  auto it = model_.machine_index.find(name);
  if (it == model_.machine_index.end()) return false;
  model_.machines[static_cast<std::size_t>(it->second)].drained = drained;
  model_.machines_changed();
  dirty_ = true;
  return true;
}

int nodepool_scheduler::add_foreign_machine(const machine_id& name, std::uint64_t memory_mb) {
  machine_rec mc;
  mc.name = name;
  mc.memory_mb = memory_mb;
  mc.order = usable_machine_order(memory_mb, model_.settings.reserved_dram_mb, model_.quantum_mb);
  mc.pool = pool_index(model_.top_pool);
  mc.foreign = true;
  return add_machine_rec(std::move(mc));
}

int nodepool_scheduler::add_machine_rec(machine_rec mc) {
  const int mi = static_cast<int>(model_.machines.size());
  model_.machine_index[mc.name] = mi;
  model_.machines.push_back(std::move(mc));
  model_.machines_changed();
  dirty_ = true;
  return mi;
}

void nodepool_scheduler::set_foreign_processes(const std::map<machine_id, int>& per_node) {
  std::vector<machine_id> held;
  for (const auto& [name, count] : per_node) {
    auto it = model_.machine_index.find(name);
    if (it == model_.machine_index.end() || count <= 0) continue;
    auto& mc = model_.machines[static_cast<std::size_t>(it->second)];
    if (mc.foreign) continue;  // another pool's machine here as well: nothing of ours to protect
    held.push_back(name);  // in name order: per_node is a map
    if (mc.foreign_processes != count) {
      dirty_ = true;
      mc.foreign_processes = count;
      model_.machines_changed();
    }
  }
  for (const auto& name : foreign_held_) {
    if (std::binary_search(held.begin(), held.end(), name)) continue;
    auto it = model_.machine_index.find(name);
    if (it == model_.machine_index.end()) continue;
    model_.machines[static_cast<std::size_t>(it->second)].foreign_processes = 0;
    model_.machines_changed();
    dirty_ = true;
  }
  foreign_held_ = std::move(held);
}

bool nodepool_scheduler::set_blacklisted(const machine_id& name, bool blacklisted) {
  auto it = model_.machine_index.find(name);
  if (it == model_.machine_index.end()) return false;
  model_.machines[static_cast<std::size_t>(it->second)].admin_blacklisted = blacklisted;
  model_.machines_changed();
  if (blacklisted) evict_where(it->second, evict_on_blacklist);
  dirty_ = true;
  return true;
}

forget_outcome nodepool_scheduler::forget_machines(const std::vector<machine_id>& names) {
  forget_outcome out;
  std::vector<char> drop(model_.machines.size(), 0);
  std::size_t dropped = 0;
  for (const auto& name : names) {
    auto it = model_.machine_index.find(name);
    if (it == model_.machine_index.end()) {
      out.forgotten.push_back(name);
      continue;
    }
    const auto slot = static_cast<std::size_t>(it->second);
    const auto& mc = model_.machines[slot];
    if (!mc.shares.empty() || mc.varied_off || mc.drained || mc.admin_blacklisted || mc.foreign_processes > 0) {
      out.kept.push_back(name);
      continue;
    }
    if (drop[slot] == 0) ++dropped;
    drop[slot] = 1;
    out.forgotten.push_back(name);
  }
  if (dropped == 0) return out;
  // Compact the machines in one pass (a storm forgets thousands at once) and renumber every slot held
  // elsewhere: shares (none on a dropped machine), the needy jobs' machines and the per-round earmarks.
  std::vector<int> new_slot(model_.machines.size(), -1);
  std::vector<machine_rec> kept;
  kept.reserve(model_.machines.size() - dropped);
  for (std::size_t i = 0; i < model_.machines.size(); ++i) {
    if (drop[i] != 0) {
      model_.machine_index.erase(model_.machines[i].name);
      continue;
    }
    new_slot[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(model_.machines[i]));
  }
  model_.machines = std::move(kept);
  model_.machines_changed();
  for (std::size_t i = 0; i < model_.machines.size(); ++i)
    model_.machine_index[model_.machines[i].name] = static_cast<int>(i);
  for (auto& sh : model_.shares)
    if (sh.live && sh.machine >= 0) sh.machine = new_slot[static_cast<std::size_t>(sh.machine)];
  auto renumber = [&](std::vector<int>& slots) {
    std::vector<int> still;
    for (int mi : slots)
      if (new_slot[static_cast<std::size_t>(mi)] >= 0) still.push_back(new_slot[static_cast<std::size_t>(mi)]);
    slots = std::move(still);
  };
  for (auto& j : model_.jobs) {
    if (j.needy_machine >= 0) j.needy_machine = new_slot[static_cast<std::size_t>(j.needy_machine)];
    renumber(j.reserve_machines);
    renumber(j.fixed_machines);
  }
  model_.machine_rank.clear();  // rebuilt by name at the next round (refresh_ranks)
  dirty_ = true;
  return out;
}

// ---- the cycle ----------------------------------------------------------------------------------

const schedule_plan& nodepool_scheduler::schedule(const round_input& in) {
  // Nothing changed since a round of the same kind (settling or full) that changed nothing: the cycle is a
  // pure function of this state, so it would give the same plan again. Skip it. The first full round after
  // the settle window always runs.
  timings_ = {};
  repairs_.clear();
  // A pending reclaim deadline that has passed is a change of its own: the round must run to preempt.
  const bool reclaim_due = model_.next_reclaim_ms > 0 && in.now_ms >= model_.next_reclaim_ms;
  if (!dirty_ && !reclaim_due && in.settling == last_round_settled_ &&
      in.settle_reason == last_input_.settle_reason &&
      in.other_pools_nonpreemptable_mb == last_input_.other_pools_nonpreemptable_mb) {
    last_input_ = in;
    return plan_.unchanged(in.now_ms);
  }
  last_input_ = in;
  // Each stage's duration is the clock's advance across it (no clock: every reading is 0).
  const auto clock = [this] { return stage_clock_ ? stage_clock_() : std::int64_t{0}; };
  std::int64_t mark = clock();
  const auto lap = [&](std::int64_t& into) {
    const std::int64_t t = clock();
    into = t - mark;
    mark = t;
  };
  last_round_settled_ = in.settling;
  if (in.settling) return settle_round(in);
  repair_over_order();
  {
    auto counted = how_much(model_, in, &how_much_cache_);
    last_loads_ = std::move(counted.classes);
    last_groups_ = std::move(counted.groups);
  }
  lap(timings_.how_much_us);
  what_of(model_);
  lap(timings_.what_of_us);
  plan_preemptions(model_, in.now_ms);
  lap(timings_.preempt_us);
  defragment(model_);
  lap(timings_.defrag_us);

  model_.refresh_ranks();  // a hand-edited model gets its id order here
  // id_order_ lists the live jobs unless something besides apply_work added one (the keeper checks).
  const schedule_plan& plan = plan_.update(model_, in.now_ms, {&id_order_, &id_order_ids_});
  for (int s : model_.created_shares)
    if (model_.shares[static_cast<std::size_t>(s)].live) model_.shares[static_cast<std::size_t>(s)].published = true;
  model_.created_shares.clear();
  // The plan lists these removals: from the next round on, a share the map does not show may go. Its job is
  // reconciled again then (a new version), also when its item does not change.
  newest_cycle_ = std::max(newest_cycle_, in.cycle);
  for (int s : model_.removals) {
    auto& sh = model_.shares[static_cast<std::size_t>(s)];
    if (!sh.live || !sh.removing() || sh.removal_published) continue;
    sh.removal_published = true;
    sh.removal_cycle = in.cycle;
    model_.shares_changed(sh.job);
  }
  model_.removals.clear();
  // Only a quiet round's plan can be returned again.
  dirty_ = model_.round_given > 0 || model_.round_preempted > 0 || model_.round_evicted > 0 ||
           model_.round_needy_changes > 0;
  model_.round_given = model_.round_preempted = model_.round_evicted = model_.round_needy_changes = 0;
  return plan;
}

void nodepool_scheduler::note_over_order(int mi) {
  const auto& mc = model_.machines[static_cast<std::size_t>(mi)];
  if (mc.unheard || mc.foreign || mc.used - mc.removing <= mc.order) return;
  if (std::find(over_order_.begin(), over_order_.end(), mc.name) == over_order_.end()) over_order_.push_back(mc.name);
  dirty_ = true;
}

// A node the work map shows above its order (a process started late, work recovered onto a node heard smaller,
// a predecessor's grant adopted beside processes the map shows) is brought back under it. First every `new`
// share there goes, whatever its policy: taking it back stops nothing that runs. It is preempted, not dropped:
// its space stays held until the orchestrator's echo shows it acted, since it may be starting that process
// late (dropping it re-gave the space: rmbus-sim-check seeds 3860, 4574, 8884, 9172). Then DUCC's rule for preemption: least invested first (investment_less), fair-share
// work before non-preemptable work, which is evicted only if the fair-share work does not suffice.
void nodepool_scheduler::repair_over_order(bool unstarted_only) {
  const auto unstarted = [](const share_rec& sh) { return sh.status == share_status::new_share && !sh.seen; };
  std::vector<machine_id> still_over;
  for (const auto& name : std::exchange(over_order_, {})) {
    auto it = model_.machine_index.find(name);
    if (it == model_.machine_index.end()) continue;
    const int mi = it->second;
    const auto& mc = model_.machines[static_cast<std::size_t>(mi)];
    int held = mc.used - mc.removing;
    if (mc.unheard || mc.foreign || held <= mc.order) continue;
    std::vector<int> victims;
    for (int s : mc.shares) {
      const auto& sh = model_.shares[static_cast<std::size_t>(s)];
      if (!sh.removing() && !sh.blacklisted && (!unstarted_only || unstarted(sh))) victims.push_back(s);
    }
    std::sort(victims.begin(), victims.end(), [&](int a, int b) {
      const auto& x = model_.shares[static_cast<std::size_t>(a)];
      const auto& y = model_.shares[static_cast<std::size_t>(b)];
      // A share not started yet first: kept while a running process is preempted instead, it stays `new` on a
      // node above its order, and publication's guard holds back every plan that lists it, the preemption with
      // it, for good (rmbus-sim-check seed 10188: a fixed share granted, then a late start recovered there).
      const bool x_new = x.status == share_status::new_share, y_new = y.status == share_status::new_share;
      if (x_new != y_new) return x_new;
      if (x.fixed != y.fixed) return !x.fixed;
      return investment_less(model_, x, y);
    });
    over_order_repair r{name, held, mc.order, {}};
    for (int s : victims) {
      const auto& sh = model_.shares[static_cast<std::size_t>(s)];
      // Every `new` share goes, not only as many as bring the node under its order: one left `new` beside
      // shares taken back (which hold their space until they are gone) would be a start above the order, which
      // publication's guard refuses, and with it the plan that takes them back (seed 15659).
      if (held <= mc.order && sh.status != share_status::new_share) break;
      held -= sh.order;
      r.shares.push_back(sh.id);
      if (sh.fixed) {
        evict_share(s);
      } else {
        model_.mark_removing(s, share_status::preempt);
      }
    }
    if (held > mc.order) still_over.push_back(name);
    if (!r.shares.empty()) repairs_.push_back(std::move(r));
  }
  if (unstarted_only) over_order_ = std::move(still_over);
}

// A settling round: every job is counted what it holds, so the plan lists each share as it stands (the
// recovered ones as running) and no stage runs that could give, preempt or move anything. A job that holds
// nothing waits with the reason `settling`. The next full round must run, whatever changed.
const schedule_plan& nodepool_scheduler::settle_round(const round_input& in) {
  repair_over_order(/*unstarted_only=*/true);
  for (auto& j : model_.jobs) {
    if (!j.live || j.refused) continue;
    j.given = model_.current(j);
    if (j.given > 0 || j.done) {
      j.reason = reason_code::none;
    } else {
      if (in.settle_reason.empty())
        set_reason_text(j, reason_code::settling,
                        "settling after a restart: nothing new until the RM has heard its agents and a work map");
      else
        set_reason(j, reason_code::settling, in.settle_reason);
    }
  }
  model_.refresh_ranks();
  const schedule_plan& plan = plan_.update(model_, in.now_ms, {&id_order_, &id_order_ids_});
  // Like a full round's plan, a settling round's can be returned again until something changes; the
  // first full round runs whatever (schedule() compares the kind of round).
  dirty_ = model_.round_given > 0 || model_.round_preempted > 0 || model_.round_evicted > 0 ||
           model_.round_needy_changes > 0;
  model_.round_given = model_.round_preempted = model_.round_evicted = model_.round_needy_changes = 0;
  return plan;
}

void nodepool_scheduler::drop_caches() {
  model_.drop_indexes();
  plan_.forget();
  how_much_cache_ = {};
  listed_.clear();
  reconciled_.clear();
  unsettled_.clear();
  unsettled_listed_.clear();
  id_order_.clear();
  id_order_ids_.clear();
}

job_explanation nodepool_scheduler::explain(const job_id& id) const {
  job_explanation e;
  e.id = id;
  auto it = model_.job_index.find(id);
  if (it == model_.job_index.end()) return e;
  const auto& j = model_.jobs[static_cast<std::size_t>(it->second)];
  e.known = true;
  if (const auto* rc = model_.class_of(j)) {
    e.class_name = rc->name;
    e.policy = rc->policy;
  }
  e.order = j.order;
  e.demand = j.demand;
  e.cap = j.cap;
  e.pure_fair_share_qshares = j.pfs_qshares;
  e.pure_fair_share = j.order > 0 ? j.pfs_qshares / j.order : 0;
  e.given = j.given;
  e.placed = model_.current(j);
  for (int s : j.shares) e.preempting += model_.shares[static_cast<std::size_t>(s)].removing() ? 1 : 0;
  e.reclaiming = j.reclaiming;
  e.reason = j.refused ? j.refusal : j.reason;
  if (j.refused) e.blocked = j.refusal_text;
  else if (j.reason != reason_code::none) e.blocked = j.reason_text;
  auto cause = held_back_of(model_, j);
  e.held_back = std::move(cause.code);
  e.held_back_kind = std::move(cause.kind);
  e.held_back_text = std::move(cause.text);
  // As of the last round: the work map's numbers and the plan are that round's.
  auto estimates = estimate_job(model_, it->second, last_input_.now_ms);
  e.estimated_end = std::move(estimates.end);
  e.estimated_start = std::move(estimates.start);
  if (j.cls >= 0 && j.group >= 0)
    e.group = model_.tree_of(j.cls).groups[static_cast<std::size_t>(j.group)].name;
  if (!j.refused && j.cls >= 0 && model_.policy_of(j) == policy::fair_share) e.path = share_path(it->second);
  return e;
}

// class > groups > user > job, each with what the last round counted for it. The class's and groups' numbers
// come from the last How Much; the user's are summed over its jobs in the class.
std::vector<share_level> nodepool_scheduler::share_path(int ji) const {
  const auto& j = model_.jobs[static_cast<std::size_t>(ji)];
  const auto& rec = model_.classes[static_cast<std::size_t>(j.cls)];
  const auto& tree = model_.tree_of(j.cls);
  const auto quanta_of = [](const std::map<int, std::int64_t>& by_order) {
    std::int64_t q = 0;
    for (const auto& [o, n] : by_order) q += static_cast<std::int64_t>(o) * n;
    return q;
  };
  std::vector<share_level> path;
  share_level cls{"class", rec.def.name, rec.def.weight, rec.def.priority, 0, 0};
  for (const auto& l : last_loads_)
    if (l.name == rec.def.name) {
      cls.demand_qshares = quanta_of(l.demand_by_order);
      cls.awarded_qshares = quanta_of(l.awarded_by_order);
    }
  path.push_back(cls);
  std::vector<int> chain;  // innermost first
  for (int g = j.group; g >= 0; g = tree.groups[static_cast<std::size_t>(g)].parent) chain.push_back(g);
  for (auto g = chain.rbegin(); g != chain.rend(); ++g) {
    const auto& def = tree.groups[static_cast<std::size_t>(*g)];
    share_level level{"group", def.name, def.weight, def.priority, 0, 0};
    for (const auto& l : last_groups_)
      if (l.class_name == rec.def.name && l.name == def.name) {
        level.demand_qshares = quanta_of(l.demand_by_order);
        level.awarded_qshares = quanta_of(l.awarded_by_order);
      }
    path.push_back(level);
  }
  share_level user{"user", j.item.user.str(), 1, 0, 0, 0};
  for (const auto& other : model_.jobs) {
    if (!other.live || other.refused || other.cls != j.cls || other.item.user != j.item.user) continue;
    user.demand_qshares += std::max<std::int64_t>(0, other.cap.cap) * other.order;
    user.awarded_qshares += static_cast<std::int64_t>(other.given) * other.order;
  }
  path.push_back(user);
  path.push_back({"job", j.item.id.str(), 1, 0, std::max<std::int64_t>(0, j.cap.cap) * j.order,
                  static_cast<std::int64_t>(j.given) * j.order});
  return path;
}

whatif_result nodepool_scheduler::whatif(const work_item& item) const {
  nodepool_scheduler copy = *this;
  if (item.state != work_state::completed) copy.apply_one(item);
  const auto& plan = copy.schedule(last_input_);
  whatif_result r;
  if (const auto* p = plan.find(item.id)) r.plan = *p;
  r.explanation = copy.explain(item.id);
  // A hypothetical job runs no process yet, so explain has no end for it; given processes in the copy, its
  // end is projected as if they ran from now (DUCC's rate with those processes; initialization not counted).
  if (!r.explanation.estimated_end && r.explanation.placed > 0 && item.kind == work_kind::job) {
    const auto slot = copy.model_.job_index.find(item.id);
    if (slot != copy.model_.job_index.end()) {
      auto progress = progress_of(copy.model_, copy.model_.jobs[static_cast<std::size_t>(slot->second)]);
      progress.processes = r.explanation.placed;
      if (auto end = estimate_end(progress, last_input_.now_ms)) {
        const int n = r.explanation.placed;
        end->basis = "if its " + std::to_string(n) + (n == 1 ? " process" : " processes") + " started now: " + end->basis;
        r.explanation.estimated_end = std::move(end);
      }
    }
  }
  // Preempted in the copy and not before, or given a reclaim deadline there (preempted when it passes).
  for (const auto& s : copy.model_.shares) {
    if (!s.live || (s.status != share_status::preempt && s.reclaim_at_ms == 0)) continue;
    auto it = model_.share_index.find(s.id);
    if (it == model_.share_index.end()) continue;
    const auto& before = model_.shares[static_cast<std::size_t>(it->second)];
    if (before.removing() || (s.status != share_status::preempt && before.reclaim_at_ms > 0)) continue;
    r.preempted.push_back({copy.model_.jobs[static_cast<std::size_t>(s.job)].item.id, s.id,
                           copy.model_.machines[static_cast<std::size_t>(s.machine)].name});
  }
  std::sort(r.preempted.begin(), r.preempted.end(),
            [](const auto& a, const auto& b) { return a.share < b.share; });
  return r;
}

machine_brief nodepool_scheduler::machine_at(std::size_t slot) const {
  const auto& mc = model_.machines[slot];
  machine_brief b;
  b.name = &mc.name;
  b.nodepool = &model_.pools[static_cast<std::size_t>(mc.pool)].name;
  b.state = mc.down ? machine_state::down
            : mc.varied_off ? machine_state::varied_off
            : mc.blacklisted() ? machine_state::blacklisted
                               : machine_state::up;
  b.quiesced = mc.quiesced;
  b.drained = mc.drained;
  b.memory_mb = mc.memory_mb;
  b.quanta = mc.order;
  b.free_quanta = std::max(0, mc.free());
  b.foreign = mc.foreign;
  return b;
}

pool_view nodepool_scheduler::view() const {
  pool_view v;
  v.pool = model_.top_pool;
  v.quantum_mb = model_.quantum_mb;
  v.classes = last_loads_;
  v.groups = last_groups_;
  std::vector<int> idx(model_.machines.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int>(i);
  std::sort(idx.begin(), idx.end(), [&](int a, int b) {
    return model_.machines[static_cast<std::size_t>(a)].name < model_.machines[static_cast<std::size_t>(b)].name;
  });
  for (int i : idx) {
    const auto& mc = model_.machines[static_cast<std::size_t>(i)];
    if (mc.foreign) continue;  // its own pool reports it
    const auto b = machine_at(static_cast<std::size_t>(i));
    machine_view mv;
    mv.name = mc.name;
    mv.ip = mc.ip;
    mv.nodepool = *b.nodepool;
    mv.state = b.state;
    mv.quiesced = b.quiesced;
    mv.drained = b.drained;
    mv.memory_mb = b.memory_mb;
    mv.quanta = b.quanta;
    mv.free_quanta = b.free_quanta;
    for (int s : mc.shares) {
      const auto& sh = model_.shares[static_cast<std::size_t>(s)];
      mv.shares.push_back({model_.jobs[static_cast<std::size_t>(sh.job)].item.id,
                           {sh.id, mc.name, sh.order, sh.status, sh.reclaim_at_ms}});
    }
    std::sort(mv.shares.begin(), mv.shares.end(), [](const auto& a, const auto& b) { return a.share.id < b.share.id; });
    v.machines.push_back(std::move(mv));
  }
  v.unmet = unmet_demand(model_);
  return v;
}

std::map<user_id, std::uint64_t> nodepool_scheduler::nonpreemptable_mb_by_user() const {
  std::map<user_id, std::uint64_t> out;
  for (int ji : nonpreemptable_slots_) {
    const auto& j = model_.jobs[static_cast<std::size_t>(ji)];
    if (!j.live || j.refused || j.cls < 0 || model_.policy_of(j) == policy::fair_share) continue;
    std::uint64_t held = 0;
    int n = 0;
    for (int s : j.shares) {
      const auto& sh = model_.shares[static_cast<std::size_t>(s)];
      if (sh.removing() || sh.blacklisted) continue;
      held += static_cast<std::uint64_t>(sh.order) * model_.quantum_mb;
      ++n;
    }
    if (j.given > n) held += static_cast<std::uint64_t>(j.given - n) * static_cast<std::uint64_t>(j.order) * model_.quantum_mb;
    if (held > 0) out[j.item.user] += held;
  }
  return out;
}

}  // namespace rmbus::core
