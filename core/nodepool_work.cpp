// nodepool_scheduler, continued: the orchestrator's work map taken in (apply_work). New work arrives and
// is refused here if it can never run; work gone or completed frees what it holds; each job's process list
// is reconciled with its shares (a process seen confirms its share, an ended or vanished one frees it, an
// unknown one is recovered). See nodepool_scheduler.hpp for the contract.

#include <algorithm>

#include "containers/vector_edits.hpp"
#include "core/nodepool_scheduler.hpp"
#include "core/quanta.hpp"

namespace rmbus::core {

void nodepool_scheduler::refuse(job_rec& j, reason_code code, std::string text) {
  dirty_ = true;
  j.refused = true;
  j.cap_current = false;
  j.refusal = code;
  j.refusal_text = std::move(text);
}

void nodepool_scheduler::arrive(const work_item& item) {
  int ji;
  if (!model_.free_job_slots.empty()) {
    ji = model_.free_job_slots.back();
    model_.free_job_slots.pop_back();
  } else {
    ji = static_cast<int>(model_.jobs.size());
    // A record is 512 bytes: grown by a quarter rather than doubled, at most a fifth of the array stands
    // unused (doubling made room for 131,072 records, 67 MB, to hold 93,488 jobs).
    if (model_.jobs.size() == model_.jobs.capacity())
      model_.jobs.reserve(model_.jobs.size() + model_.jobs.size() / 4 + 16);
    model_.jobs.emplace_back();
  }
  auto& j = model_.jobs[static_cast<std::size_t>(ji)];
  j = job_rec{};
  j.live = true;
  j.item = item;
  j.no_hosts = item.hosts.empty();
  // The processes live on as shares: the record keeps no copy of the list, nor its capacity (clear() would).
  std::vector<process_report>().swap(j.item.processes);
  model_.job_index[item.id] = ji;
  model_.index_job(ji);
  model_.shares_changed(ji);  // a fresh version: nothing cached for a former job of this slot applies
  j.reason_version = ++model_.arrivals << 32;
  dirty_ = true;
  const std::uint64_t mem = item.memory_mb > 0 ? item.memory_mb : model_.settings.default_memory_mb;
  // Rounded up, bounded like machine orders (a job larger than every machine is simply never placed);
  // job orders do not grow the order tables, only machines do.
  const std::uint64_t raw_order = mem / model_.quantum_mb + (mem % model_.quantum_mb != 0 ? 1 : 0);
  j.order = static_cast<int>(std::clamp<std::uint64_t>(raw_order, 1, max_machine_order + 1));

  // Resolve the class: named, or the default for its kind (jobs: FAIR_SHARE; other work: RESERVE, then
  // FIXED_SHARE, as DUCC does).
  int cls = -1;
  for (std::size_t c = 0; c < model_.classes.size(); ++c)
    if (!item.class_name.empty() && model_.classes[c].def.name == item.class_name) cls = static_cast<int>(c);
  if (item.class_name.empty()) {
    const std::vector<policy> prefs = item.kind == work_kind::job ? std::vector<policy>{policy::fair_share}
                                                                   : std::vector<policy>{policy::reserve, policy::fixed_share};
    for (policy p : prefs) {
      for (std::size_t c = 0; c < model_.classes.size() && cls < 0; ++c)
        if (model_.classes[c].def.is_default && model_.classes[c].def.policy == p) cls = static_cast<int>(c);
    }
  }
  if (cls < 0) {
    refuse(j, reason_code::unknown_class,
           item.class_name.empty() ? "No scheduling class defined and no default class configured."
                                   : "Cannot find class " + item.class_name + " for the work");
    return;
  }
  j.cls = cls;
  if (model_.policy_of(j) != policy::fair_share) {
    auto& listed = nonpreemptable_listed_;
    if (listed.size() <= static_cast<std::size_t>(ji)) listed.resize(model_.jobs.size(), 0);
    if (!listed[static_cast<std::size_t>(ji)]) nonpreemptable_slots_.push_back(ji);
    listed[static_cast<std::size_t>(ji)] = 1;
  }
  const auto& rc = model_.classes[static_cast<std::size_t>(cls)];
  if (const auto& tree = model_.tree_of(cls); !tree.empty()) j.group = tree.group_of(item.user.str());  // else -1
  if (rc.pool < 0) {
    refuse(j, reason_code::class_not_in_pool,
           "class " + rc.def.name + " schedules in pool " + rc.def.nodepool + ", not in " + model_.top_pool);
  } else if (!rc.def.users.empty() &&
             std::find(rc.def.users.begin(), rc.def.users.end(), item.user.str()) == rc.def.users.end()) {
    refuse(j, reason_code::user_not_allowed, "User '" + item.user.str() + "' not authorized to use class '" + rc.def.name + "'");
  } else if (rc.def.policy == policy::fair_share && item.kind == work_kind::reservation) {
    refuse(j, reason_code::reservation_in_fair_share, "Reservations are not allowed in FAIR_SHARE class " + rc.def.name);
  } else if (rc.def.policy == policy::fair_share && item.kind != work_kind::job) {
    refuse(j, reason_code::service_in_fair_share, "Services and managed reservations are not allowed to be FAIR_SHARE");
  }
}

// The share slot of process `p` if it is one of job ji's, looked for near `cursor` first: the map lists a
// job's processes in about the order the job's shares were created, so this mostly avoids hashing the id.
// -1: not among the few looked at (the caller then asks share_index, which gives the same answer).
int nodepool_scheduler::own_share_near(int ji, const share_id& id, std::size_t& cursor) const {
  const auto& slots = model_.jobs[static_cast<std::size_t>(ji)].shares;
  for (std::size_t k = cursor, n = 0; k < slots.size() && n < 4; ++k, ++n) {
    if (model_.shares[static_cast<std::size_t>(slots[k])].id == id) {
      cursor = k + 1;
      return slots[k];
    }
  }
  return -1;
}

void nodepool_scheduler::reconcile_processes(int ji, const work_item& item) {
  // The process list the last reconcile of this job saw, if every process in it was one of the job's
  // own live shares (no recovery, nothing ended or foreign) and that reconcile changed nothing. When the
  // list is the same again and none of the job's shares changed since (shares_version), reconciling would
  // change nothing: every share is already marked seen with these numbers, and the shares the list leaves
  // out were kept last time for reasons that still hold. This is what makes an unchanged map cheap (from
  // its second repetition on; the first one reconciles and records).
  if (reconciled_.size() < model_.jobs.size()) reconciled_.resize(model_.jobs.size());
  auto& last = reconciled_[static_cast<std::size_t>(ji)];
  if (last.all_own && last.version == model_.jobs[static_cast<std::size_t>(ji)].shares_version &&
      last.processes == item.processes)
    return;
  // Every change a reconcile makes marks the scheduler dirty; see whether this one made any.
  const bool was_dirty = dirty_;
  dirty_ = false;
  const bool all_own = reconcile_all(ji, item);
  const bool changed = dirty_;
  dirty_ = was_dirty || changed;
  // Kept only when the list changed nothing: a list that did (timings advancing every round) will most
  // likely differ next time too, and copying it would only cost.
  last.version = model_.jobs[static_cast<std::size_t>(ji)].shares_version;
  last.all_own = all_own && !changed;
  if (last.all_own) {
    last.processes = item.processes;
  } else {
    if (unsettled_listed_.size() < model_.jobs.size()) unsettled_listed_.resize(model_.jobs.size(), 0);
    if (unsettled_listed_[static_cast<std::size_t>(ji)] != 1) unsettled_.push_back(ji);
    unsettled_listed_[static_cast<std::size_t>(ji)] = 1;
  }
}

// Returns true when every process listed was matched to a live share of this job.
bool nodepool_scheduler::reconcile_all(int ji, const work_item& item) {
  const std::uint64_t epoch = ++model_.reconcile_epoch;
  std::size_t cursor = 0;
  bool all_own = true;
  for (const auto& p : item.processes) {
    auto& j = model_.jobs[static_cast<std::size_t>(ji)];
    if (p.state != process_state::ended) {
      const int near = own_share_near(ji, p.id, cursor);
      if (near >= 0) {
        mark_seen(near, p);
        continue;
      }
    }
    auto it = model_.share_index.find(p.id);
    if (p.state == process_state::ended) {
      all_own = false;
      if (it != model_.share_index.end() && model_.shares[static_cast<std::size_t>(it->second)].job == ji) {
        model_.remove_share(it->second);
        dirty_ = true;
        if (j.item.kind != work_kind::job) end_allocation(j);
      }
      continue;
    }
    int slot;
    if (it != model_.share_index.end()) {
      slot = it->second;
      if (model_.shares[static_cast<std::size_t>(slot)].job != ji) {
        all_own = false;
        continue;  // another job's id: ignore
      }
    } else {
      all_own = false;
      // Recovery: a live process the RM does not know (restart, reconfiguration).
      auto mit = model_.machine_index.find(p.node);
      if (mit == model_.machine_index.end()) {
        // Not heard yet: sized from the map when it says, else kept unsized until its first heartbeat.
        register_unheard_machine(p.node, p.node_memory_mb);
        mit = model_.machine_index.find(p.node);
      }
      if (mit == model_.machine_index.end()) {
        if (!j.refused) refuse(j, reason_code::unknown_node, "Cannot restore work because node " + p.node.str() + " is unknown.");
        continue;
      }
      const int mi = mit->second;
      const int order = model_.policy_of(j) == policy::reserve && !j.refused
                            ? model_.machines[static_cast<std::size_t>(mi)].order
                            : j.order;
      slot = model_.add_share(ji, mi, std::max(1, order), p.id, 0, share_status::running);
      dirty_ = true;
      auto& sh = model_.shares[static_cast<std::size_t>(slot)];
      sh.published = true;
      note_over_order(mi);
      const int cp = model_.class_pool(j);
      const int mp = model_.machines[static_cast<std::size_t>(mi)].pool;
      const bool fair = model_.policy_of(j) == policy::fair_share;
      const bool foreign = model_.machines[static_cast<std::size_t>(mi)].foreign;
      if (!j.refused && cp >= 0 && (foreign || (fair ? !model_.in_subtree(mp, cp) : mp != cp)) &&
          (fair || j.item.kind == work_kind::service)) {
        // Recovered into a pool its class may not use (the configuration changed; a foreign machine is
        // another top-level pool's): fair-share work and services are evicted (they are re-placed or
        // restarted); other non-preemptable work stays.
        model_.mark_removing(slot, share_status::evict);
        if (!fair) end_allocation(j);
      }
      if (j.refused) {
        // Work the configuration no longer allows: account its space, evict what can be evicted.
        model_.uncount_share(slot);
        sh.blacklisted = true;
        model_.count_share(slot);
        ++model_.machines[static_cast<std::size_t>(mi)].blacklisted_shares;
        model_.machines_changed();
        if (j.item.kind == work_kind::job || j.item.kind == work_kind::service) model_.mark_removing(slot, share_status::evict);
      }
    }
    mark_seen(slot, p);
  }
  // Shares the map no longer shows: the process is gone. Shares never shown yet stay (still starting),
  // unless their removal was already published and the orchestrator has acted on it (before that, it may
  // still start them).
  bool any_gone = false;
  for (int s : model_.jobs[static_cast<std::size_t>(ji)].shares) {
    const auto& sh = model_.shares[static_cast<std::size_t>(s)];
    any_gone = any_gone || (sh.mark != epoch && (sh.seen || (sh.removing() && sh.removal_published)));
  }
  if (!any_gone) return all_own;
  const auto slots = model_.jobs[static_cast<std::size_t>(ji)].shares;
  for (int s : slots) {
    const auto& sh = model_.shares[static_cast<std::size_t>(s)];
    if (sh.mark == epoch) continue;
    if (!sh.seen && sh.removing() && sh.removal_published && !removal_acknowledged(sh)) {
      if (!sh.awaiting_ack) {
        awaiting_ack_.push_back(s);
        model_.shares[static_cast<std::size_t>(s)].awaiting_ack = true;
      }
      continue;
    }
    if (sh.seen || (sh.removing() && sh.removal_published)) {
      dirty_ = true;
      model_.remove_share(s);
      auto& j = model_.jobs[static_cast<std::size_t>(ji)];
      if (j.item.kind != work_kind::job && sh.seen) end_allocation(j);
    }
  }
  return all_own;
}

bool nodepool_scheduler::removal_acknowledged(const share_rec& sh) const {
  return !acted_cycle_ || sh.removal_cycle == 0 || *acted_cycle_ >= sh.removal_cycle;
}

void nodepool_scheduler::set_acted_cycle(std::optional<std::uint64_t> cycle) {
  if (cycle && *cycle > newest_cycle_) cycle.reset();  // another RM's (or an earlier run's) cycles
  const bool advanced = cycle != acted_cycle_;
  acted_cycle_ = cycle;
  if (!advanced || awaiting_ack_.empty()) return;
  // Their jobs are reconciled again (apply_changes skips a job whose shares did not change).
  for (int s : awaiting_ack_) {
    auto& sh = model_.shares[static_cast<std::size_t>(s)];
    sh.awaiting_ack = false;
    if (sh.live && sh.removing() && !sh.seen) model_.shares_changed(sh.job);
  }
  awaiting_ack_.clear();
}

// Registered from the orchestrator's record or the last published schedule: as one of ours if it belongs
// to this pool tree, else as a foreign machine (its node is another top-level pool's now, e.g. after a
// reconfiguration), so that what runs there is accounted and published here, the job stays whole, and
// nothing new goes there.
int nodepool_scheduler::register_unheard_machine(const machine_id& name, std::uint64_t memory_mb) {
  scheduler_config cfg;
  cfg.nodepools = pool_defs_;
  if (top_level_of(cfg, find_nodepool(cfg, name.str(), "")) != model_.top_pool && !pool_defs_.empty())
    return add_foreign_machine(name, memory_mb);
  if (memory_mb > 0) {
    update_machine({name, "", memory_mb, false});
    auto it = model_.machine_index.find(name);
    return it == model_.machine_index.end() ? -1 : it->second;
  }
  machine_rec mc;
  mc.name = name;
  mc.pool = pool_index(find_nodepool(cfg, name.str(), ""));
  mc.unheard = true;
  return add_machine_rec(std::move(mc));
}

void nodepool_scheduler::adopt_published(published_schedule shares) {
  adopted_ = std::move(shares);
  adopted_quanta_.clear();
  for (const auto& [job, list] : adopted_)
    for (const auto& s : list)
      if (s.status != share_status::evict) adopted_quanta_[s.node] += static_cast<std::uint64_t>(std::max(1, s.quanta));
}

// The job just arrived in this scheduler: its shares of the last published schedule become its own, with
// their ids, nodes, sizes and statuses (see adopt_published).
void nodepool_scheduler::adopt_shares_of(int ji) {
  auto& j = model_.jobs[static_cast<std::size_t>(ji)];
  auto it = adopted_.find(j.item.id);
  if (it == adopted_.end()) return;
  // Work refused here now (its class is gone): what it runs is recovered from the map and handled as such.
  if (j.refused) return;
  scheduler_config tree;
  tree.nodepools = pool_defs_;
  for (const auto& s : it->second) {
    if (model_.share_index.count(s.id) != 0) continue;  // already known (listed twice)
    auto mit = model_.machine_index.find(s.node);
    int mi = mit == model_.machine_index.end() ? -1 : mit->second;
    // A node that is no longer this pool's (moved by a reconfiguration) or not one its class may use: what
    // runs there is recovered from the map and handled by recovery's rules (evicted where it may not stay).
    if (mi < 0 && !pool_defs_.empty() && top_level_of(tree, find_nodepool(tree, s.node.str(), "")) != model_.top_pool)
      continue;
    if (mi >= 0) {
      const auto& mc = model_.machines[static_cast<std::size_t>(mi)];
      const int cp = model_.class_pool(j);
      const bool fair = model_.policy_of(j) == policy::fair_share;
      if (mc.foreign || (cp >= 0 && (fair ? !model_.in_subtree(mc.pool, cp) : mc.pool != cp))) continue;
    }
    if (mi < 0) {
      // Not heard of yet: sized by what the adopted shares hold there, so nothing else fits until the
      // machine reports its real size.
      const auto held = std::max<std::uint64_t>(1, adopted_quanta_[s.node]);
      mi = register_unheard_machine(s.node, held * model_.quantum_mb + model_.settings.reserved_dram_mb);
      if (mi < 0) continue;
    }
    const int slot = model_.add_share(ji, mi, std::max(1, s.quanta), s.id, 0, s.status);
    auto& sh = model_.shares[static_cast<std::size_t>(slot)];
    sh.published = true;
    // A removal the predecessor published goes out again in this scheduler's first round, and counts from that
    // round's cycle: until the orchestrator's echo says it acted on it, the share keeps its space. A map built
    // before the orchestrator read the removal may lack a process it is about to start from the earlier `new`
    // (rmbus-sim-check seed 624: the space was given again while that process started).
    sh.removal_published = false;
    if (sh.removing()) model_.removals.push_back(slot);
    // A running share was shown by an earlier map: missing from this one, its process has ended.
    sh.seen = s.status == share_status::running;
    if (s.reclaim_at_ms > 0) model_.set_reclaim(slot, s.reclaim_at_ms);
    dirty_ = true;
    // A predecessor's grant on a node reported down since: withdrawn, as machine_unreachable does.
    if (model_.machines[static_cast<std::size_t>(mi)].down) withdraw_if_unstarted(slot);
    // The predecessor granted it without knowing a process the map shows there now (a late start; a standby
    // that missed its predecessor's last schedules): together they may hold more than the node has
    // (rmbus-sim-check seed 54, rmbus-soak --ha --partition).
    note_over_order(mi);
  }
}

void nodepool_scheduler::mark_seen(int slot, const process_report& p) {
  auto& sh = model_.shares[static_cast<std::size_t>(slot)];
  sh.mark = model_.reconcile_epoch;
  const bool initialized = p.state == process_state::running;
  if (!sh.seen || sh.init_ms != p.init_ms || sh.run_ms != p.run_ms || sh.initialized != initialized ||
      sh.status == share_status::new_share)
    dirty_ = true;
  sh.seen = true;
  sh.run_ms = p.run_ms;
  const bool recount = sh.init_ms != p.init_ms || sh.initialized != initialized || sh.status == share_status::new_share;
  if (recount) model_.uncount_share(slot);
  sh.init_ms = p.init_ms;
  sh.initialized = initialized;
  if (sh.status == share_status::new_share) {
    sh.status = share_status::running;
    model_.shares_changed(sh.job);
  }
  if (recount) model_.count_share(slot);
}

void nodepool_scheduler::drop_job(int ji) {
  dirty_ = true;
  auto& j = model_.jobs[static_cast<std::size_t>(ji)];
  const auto slots = j.shares;
  for (int s : slots) model_.remove_share(s);
  model_.unindex_job(ji);
  model_.job_index.erase(j.item.id);
  j = job_rec{};
  model_.free_job_slots.push_back(ji);
}

namespace {
// The work item without its process list (the processes live on as shares).
void assign_fields(work_item& dst, const work_item& src) {
  dst.id = src.id;
  dst.kind = src.kind;
  dst.user = src.user;
  dst.submitted_ms = src.submitted_ms;
  dst.state = src.state;
  dst.max_processes = src.max_processes;
  dst.threads = src.threads;
  dst.items_total = src.items_total;
  dst.items_done = src.items_done;
  dst.item_ms = src.item_ms;
  dst.service_id = src.service_id;
  dst.hosts = src.hosts;
  dst.processes.clear();
}
}  // namespace

int nodepool_scheduler::apply_one(const work_item& item, int ji) {
  if (ji < 0) {
    arrive(item);
    ji = model_.job_index.at(item.id);
    if (!adopted_.empty()) adopt_shares_of(ji);
  } else {
    // The class and size were fixed at arrival; the rest is refreshed (copied only when it changed).
    auto& cur = model_.jobs[static_cast<std::size_t>(ji)].item;
    if (cur.kind != item.kind || cur.user != item.user || cur.submitted_ms != item.submitted_ms ||
        cur.state != item.state || cur.max_processes != item.max_processes || cur.threads != item.threads ||
        cur.items_total != item.items_total || cur.items_done != item.items_done || cur.item_ms != item.item_ms ||
        cur.service_id != item.service_id || cur.hosts != item.hosts) {
      dirty_ = true;
      model_.jobs[static_cast<std::size_t>(ji)].cap_current = false;
      const bool reindex = cur.submitted_ms != item.submitted_ms || cur.user != item.user;
      if (reindex) model_.unindex_job(ji);
      assign_fields(cur, item);
      model_.jobs[static_cast<std::size_t>(ji)].no_hosts = cur.hosts.empty();
      if (reindex) {
        model_.index_job(ji);
        // A new user may sit in another share group of the class.
        auto& j = model_.jobs[static_cast<std::size_t>(ji)];
        if (const auto& tree = model_.tree_of(j.cls); !tree.empty()) j.group = tree.group_of(cur.user.str());
      }
    }
  }
  reconcile_processes(ji, item);
  return ji;
}

void nodepool_scheduler::apply_one(const work_item& item) {
  auto it = model_.job_index.find(item.id);
  apply_one(item, it == model_.job_index.end() ? -1 : it->second);
}

void nodepool_scheduler::apply_work(const work_map& snapshot) {
  // Which jobs the map still lists, and their slots. The map is ordered by id, and so is id_order_ (the
  // jobs after the last call, their ids kept alongside in id_order_ids_), so both are walked together:
  // mostly one short string compare per item on contiguous memory, instead of hashing its id or reading
  // its job record; an id not found that way is looked up in job_index.
  const std::uint64_t epoch = ++apply_epoch_;
  if (listed_.size() < model_.jobs.size()) listed_.resize(model_.jobs.size(), 0);
  // Every job of the map is reconciled here: the jobs to apply again start afresh (see apply_changes).
  model_.shares_changed_log.clear();
  model_.shares_changed_log_full = false;
  for (int ji : unsettled_) unsettled_listed_[static_cast<std::size_t>(ji)] = 0;
  unsettled_.clear();
  // id_order_ lists every live job when nothing but apply_work added or dropped one since (whatif's
  // apply_one works on a copy; drop_caches empties it).
  const bool order_complete = id_order_.size() == model_.job_index.size();
  std::vector<int> slots;
  std::vector<const work_map::value_type*> entries;  // the second walk goes through these, not the tree
  slots.reserve(snapshot.size());
  entries.reserve(snapshot.size());
  std::size_t walk = 0;
  for (const auto& entry : snapshot) {
    entries.push_back(&entry);
    const auto& [id, item] = entry;
    int ji = -1;
    while (walk < id_order_.size()) {
      const int c = id_order_ids_[walk].str().compare(id.str());
      if (c > 0) break;
      ++walk;
      if (c == 0) {
        ji = id_order_[walk - 1];
        break;
      }
    }
    if (ji < 0) {
      auto it = model_.job_index.find(id);
      if (it != model_.job_index.end()) ji = it->second;
    }
    slots.push_back(ji);
    if (ji >= 0 && item.state != work_state::completed) listed_[static_cast<std::size_t>(ji)] = epoch;
  }
  // Work gone from the map, or completed: free everything it holds at once.
  if (order_complete) {
    for (int ji : id_order_)
      if (listed_[static_cast<std::size_t>(ji)] != epoch) drop_job(ji);
  } else {
    for (std::size_t i = 0; i < model_.jobs.size(); ++i)
      if (model_.jobs[i].live && listed_[i] != epoch) drop_job(static_cast<int>(i));
  }
  id_order_.clear();
  id_order_ids_.clear();
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const auto& [id, item] = *entries[k];
    if (item.state == work_state::completed) continue;
    id_order_.push_back(apply_one(item, slots[k]));
    id_order_ids_.push_back(id);
  }
  adopted_.clear();
  adopted_quanta_.clear();
  applied_once_ = true;
}

void nodepool_scheduler::apply_changes(const work_map& snapshot, const std::vector<job_id>& touched) {
  if (!applied_once_ || !adopted_.empty() || id_order_.size() != model_.job_index.size()) {
    apply_work(snapshot);
    return;
  }
  std::vector<job_id> ids = touched;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  // As apply_work: first every job gone or completed is dropped, then the items are applied in id order.
  std::vector<const work_map::value_type*> present;  // touched and listed, not completed: in id order
  present.reserve(ids.size());
  std::vector<std::pair<job_id, int>> dropped;
  for (const auto& id : ids) {
    auto it = snapshot.find(id);
    if (it != snapshot.end() && it->second.state != work_state::completed) {
      present.push_back(&*it);
      continue;
    }
    auto ji = model_.job_index.find(id);
    if (ji == model_.job_index.end()) continue;
    dropped.emplace_back(id, ji->second);
  }
  for (const auto& [id, ji] : dropped) drop_job(ji);
  if (reconciled_.size() < model_.jobs.size()) reconciled_.resize(model_.jobs.size());

  // The jobs held and not touched that are applied again: those whose last reconcile may not hold (it
  // changed something, recovered or refused a process, or the job's shares changed since); apply_one
  // would do nothing for the others. Found from the unsettled list and the model's log of share changes,
  // or, when the log ran over, by a walk over every job held.
  const auto may_not_hold = [&](int ji) {
    const auto& last = reconciled_[static_cast<std::size_t>(ji)];
    return !last.all_own || last.version != model_.jobs[static_cast<std::size_t>(ji)].shares_version;
  };
  std::vector<std::pair<job_id, int>> again;
  auto& log = model_.shares_changed_log;
  std::size_t consumed = 0;
  if (model_.shares_changed_log_full) {
    log.clear();
    model_.shares_changed_log_full = false;
    for (std::size_t k = 0; k < id_order_.size(); ++k) {
      const int ji = id_order_[k];
      if (model_.jobs[static_cast<std::size_t>(ji)].live && may_not_hold(ji))
        again.emplace_back(id_order_ids_[k], ji);
    }
  } else {
    consumed = log.size();
    if (unsettled_listed_.size() < model_.jobs.size()) unsettled_listed_.resize(model_.jobs.size(), 0);
    auto consider = [&](int ji) {
      auto& seen = unsettled_listed_[static_cast<std::size_t>(ji)];
      if (seen == 2) return;  // considered already
      seen = 2;
      const auto& j = model_.jobs[static_cast<std::size_t>(ji)];
      if (j.live && may_not_hold(ji)) again.emplace_back(j.item.id, ji);
    };
    for (int ji : unsettled_) consider(ji);
    for (std::size_t k = 0; k < consumed; ++k) consider(log[k]);
    std::sort(again.begin(), again.end());
  }
  // Every unsettled job is applied again below, which lists it again while it stays unsettled.
  for (int ji : unsettled_) unsettled_listed_[static_cast<std::size_t>(ji)] = 0;
  for (std::size_t k = 0; k < consumed; ++k) unsettled_listed_[static_cast<std::size_t>(log[k])] = 0;
  unsettled_.clear();

  // The touched items and the jobs applied again, together in id order.
  std::vector<int> arrived;
  std::size_t a = 0;
  for (const auto* item : present) {
    for (; a < again.size() && again[a].first < item->first; ++a) {
      auto it = snapshot.find(again[a].first);
      if (it != snapshot.end()) apply_one(it->second, again[a].second);
    }
    if (a < again.size() && again[a].first == item->first) ++a;  // touched: applied with its item below
    auto held = model_.job_index.find(item->first);
    if (held != model_.job_index.end()) {
      apply_one(item->second, held->second);
    } else {
      arrived.push_back(apply_one(item->second, -1));
    }
  }
  for (; a < again.size(); ++a) {
    auto it = snapshot.find(again[a].first);
    if (it != snapshot.end()) apply_one(it->second, again[a].second);
  }
  // What was logged while these applied stays for the next call.
  log.erase(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(consumed));
  edit_id_order(dropped, arrived);
  adopted_.clear();
  adopted_quanta_.clear();
}

void nodepool_scheduler::edit_id_order(const std::vector<std::pair<job_id, int>>& dropped,
                                       const std::vector<int>& arrived) {
  if (dropped.empty() && arrived.empty()) return;
  const auto position = [&](const job_id& id) {
    return static_cast<std::size_t>(std::lower_bound(id_order_ids_.begin(), id_order_ids_.end(), id) -
                                    id_order_ids_.begin());
  };
  std::vector<containers::vector_edit> edits;
  std::vector<int> slots;  // per edit: the arrival's slot (-1: an erasure)
  for (const auto& [id, ji] : dropped) {
    const auto at = position(id);
    if (at < id_order_ids_.size() && id_order_ids_[at] == id) {
      edits.push_back({containers::vector_edit_kind::erase, at});
      slots.push_back(-1);
    }
  }
  for (int ji : arrived) {
    edits.push_back({containers::vector_edit_kind::insert_before,
                     position(model_.jobs[static_cast<std::size_t>(ji)].item.id)});
    slots.push_back(ji);
  }
  // By position, an arrival before the erasure at its position; arrivals at one position stay in id order.
  std::vector<std::size_t> by_place(edits.size());
  for (std::size_t k = 0; k < by_place.size(); ++k) by_place[k] = k;
  std::stable_sort(by_place.begin(), by_place.end(), [&](std::size_t x, std::size_t y) {
    if (edits[x].at != edits[y].at) return edits[x].at < edits[y].at;
    return edits[x].what == containers::vector_edit_kind::insert_before &&
           edits[y].what == containers::vector_edit_kind::erase;
  });
  std::vector<containers::vector_edit> ordered;
  std::vector<int> ordered_slots;
  for (auto k : by_place) {
    ordered.push_back(edits[k]);
    ordered_slots.push_back(slots[k]);
  }
  containers::apply_vector_edits(id_order_, ordered,
                                 [&](std::size_t k, int& slot) { slot = ordered_slots[k]; });
  containers::apply_vector_edits(id_order_ids_, ordered, [&](std::size_t k, job_id& id) {
    id = model_.jobs[static_cast<std::size_t>(ordered_slots[k])].item.id;
  });
}

}  // namespace rmbus::core
