#include "tools/simcheck/sim_head.hpp"

#include <algorithm>

#include "actors/overbooking.hpp"

namespace rmbus::simcheck {

namespace {

const std::string pool_name = "default";

core::published_schedule published_of(const core::schedule_plan& plan) {
  core::published_schedule out;
  for (const auto& j : plan.jobs) {
    if (j.shares.empty()) continue;
    auto& list = out[j.id];
    for (const auto& sh : j.shares) list.push_back({sh.id, sh.node, sh.quanta, sh.status, sh.reclaim_at_ms});
  }
  return out;
}

messages::share_status wire_status(core::share_status s) {
  switch (s) {
    case core::share_status::running: return messages::share_status::running;
    case core::share_status::new_share: return messages::share_status::new_;
    case core::share_status::preempt: return messages::share_status::preempt;
    case core::share_status::evict: return messages::share_status::evict;
  }
  return messages::share_status::evict;
}

}  // namespace

sim_head::sim_head(core::scheduler_config cfg, head_settings s)
    : cfg_(std::move(cfg)),
      s_(s),
      liveness_({s.interval_ms, s.node_stability, {}}),
      brake_({s.mass_loss_percent, s.mass_loss_evict_percent, s.interval_ms}),
      sched_(std::make_unique<core::nodepool_scheduler>(pool_name, cfg_, "g1")) {}

bool sim_head::down(const std::string& node) const {
  const core::machine_id id(node);
  return liveness_.known(id) && liveness_.status(id) == core::node_status::down;
}

std::vector<std::string> sim_head::heartbeat(const std::string& node, std::uint64_t memory_mb, std::int64_t now_ms) {
  std::vector<std::string> notes;
  const auto t = liveness_.heartbeat(core::machine_id(node), now_ms);
  memory_[node] = memory_mb;
  if (!t) return notes;
  if (!t->first_heard) {
    brake_.back(pool_name, node);
    evicted_.erase(node);
    notes.push_back("intake: " + node + " " + core::to_string(t->from) + " -> up");
  }
  // First heard, or back from missing or down: the scheduler hears it (back up with what it holds).
  sched_->update_machine({core::machine_id(node), node, memory_mb, false});
  // A node first heard after the admin varied it off learns its mark now, as the eviction actor tells it.
  if (t->first_heard && varied_off_.count(node) != 0) sched_->vary_off(core::machine_id(node));
  return notes;
}

void sim_head::act(const actors::mass_loss_guard::actions& a, std::vector<std::string>& notes) {
  for (const auto& p : a.entered) notes.push_back("brake: pool " + p + " in mass loss, evictions paced");
  for (const auto& p : a.ended) notes.push_back("brake: pool " + p + " out of mass loss");
  for (const auto& node : a.evict) {
    sched_->machine_down(core::machine_id(node));
    evicted_.insert(node);
    notes.push_back("eviction: " + node + " evicted");
  }
}

std::vector<std::string> sim_head::tick(std::int64_t now_ms) {
  std::vector<std::string> notes;
  actors::mass_loss_guard::actions a;
  const std::size_t size = memory_.size();
  for (const auto& t : liveness_.tick(now_ms)) {
    const auto& node = t.node.str();
    notes.push_back("intake: " + node + " " + core::to_string(t.from) + " -> " + core::to_string(t.to));
    if (t.to == core::node_status::missing && t.from == core::node_status::up) {
      brake_.missing(pool_name, node, size, now_ms, a);
    } else if (t.to == core::node_status::down) {
      // Out of placement at once, whatever the brake does to its work (actors/eviction.cpp).
      sched_->machine_unreachable(t.node);
      brake_.down(pool_name, node, now_ms, a);
    }
  }
  brake_.tick({{pool_name, size}}, now_ms, a);
  act(a, notes);
  return notes;
}

bool sim_head::take_map(published_map m) {
  if (newest_ && m.seq <= newest_->seq) return false;
  newest_ = std::move(m);
  return true;
}

void sim_head::vary(const std::string& node, bool off) {
  if (off) {
    varied_off_.insert(node);
    sched_->vary_off(core::machine_id(node));
  } else {
    varied_off_.erase(node);
    sched_->vary_on(core::machine_id(node));
  }
}

void sim_head::introduce(const std::string& node) {
  const core::machine_id id(node);
  sched_->update_machine({id, node, memory_.at(node), false});
  if (liveness_.status(id) == core::node_status::down) {
    if (evicted_.count(node) != 0) sched_->machine_down(id);
    else sched_->machine_unreachable(id);
  }
  if (varied_off_.count(node) != 0) sched_->vary_off(id);
}

void sim_head::replace_scheduler() {
  sched_ = std::make_unique<core::nodepool_scheduler>(pool_name, cfg_, "g" + std::to_string(++generation_));
  for (const auto& [node, mb] : memory_) introduce(node);
  sched_->adopt_published(published_of(published_));
}

void sim_head::take_over(std::size_t seed_age) {
  ++epoch_;
  awaiting_echo_ = true;
  if (!recent_published_.empty())
    published_ = recent_published_[recent_published_.size() - 1 - std::min(seed_age, recent_published_.size() - 1)];
  // The predecessor's grants not started yet are not the new epoch's, as actors/takeover_seed.hpp drops them
  // from the schedule the standby heard (there from messages::rm_state, here from the core's plan; this
  // orchestrator always echoes the epoch).
  for (auto& j : published_.jobs)
    std::erase_if(j.shares, [](const core::planned_share& sh) { return sh.status == core::share_status::new_share; });
  replace_scheduler();
}

const core::schedule_plan& sim_head::round(std::int64_t now_ms) {
  if (newest_) {
    applied_ = newest_;
    sched_->set_acted_cycle(applied_->acted_cycle);
    sched_->apply_work(applied_->work);
  }
  if (awaiting_echo_ && applied_ && applied_->rm_epoch && *applied_->rm_epoch >= epoch_) awaiting_echo_ = false;
  core::round_input in{now_ms, {}, awaiting_echo_, ++cycle_};
  if (awaiting_echo_) in.settle_reason = "waiting for the orchestrator to accept epoch " + std::to_string(epoch_);
  const auto& plan = sched_->schedule(in);
  std::vector<messages::job_schedule> wire;
  for (const auto& j : plan.jobs) {
    messages::job_schedule w;
    w.id = j.id.str();
    for (const auto& sh : j.shares)
      w.shares.push_back({sh.id.str(), sh.node.str(), static_cast<std::uint64_t>(sh.quanta), wire_status(sh.status), {}});
    wire.push_back(std::move(w));
  }
  const auto order_of = [this](std::string_view node) -> std::optional<std::uint64_t> {
    auto it = memory_.find(std::string(node));
    if (it == memory_.end()) return std::nullopt;
    return it->second / cfg_.settings.quantum_mb;
  };
  overbooked_.clear();
  for (const auto& n : actors::find_overbooked_nodes(wire, order_of)) overbooked_.push_back(n.node);
  if (!overbooked_.empty()) ++guard_refusals_;
  else {
    published_ = plan;
    published_cycle_ = cycle_;
    recent_published_.push_back(plan);
    if (recent_published_.size() > 4) recent_published_.pop_front();
  }
  return plan;
}

}  // namespace rmbus::simcheck
