#include "tools/simcheck/round_checker.hpp"

#include <map>
#include <set>

namespace rmbus::simcheck {

std::vector<plan_share_fact> plan_facts(const core::schedule_plan& plan) {
  std::vector<plan_share_fact> out;
  for (const auto& j : plan.jobs)
    for (const auto& sh : j.shares) out.push_back({j.id.str(), sh.id.str(), sh.node.str(), sh.quanta, sh.status});
  return out;
}

std::vector<violation> round_checker::check(const round_facts& facts) {
  std::vector<violation> out;
  const auto report = [&](std::string rule, std::string node, std::string detail) {
    out.push_back({std::move(rule), facts.round, std::move(node), std::move(detail)});
  };
  std::map<std::string, int> truth;  // node -> quanta the orchestrator runs or starts there
  std::map<std::string, int> staying;  // the same without the processes it is stopping
  std::set<std::string> in_truth;
  for (const auto& p : facts.processes) {
    truth[p.node] += p.quanta;
    if (!p.stopping) staying[p.node] += p.quanta;
    in_truth.insert(p.share);
  }
  std::map<std::string, int> pending_new;  // node -> quanta of `new` shares not started yet
  std::map<std::string, int> plan_holding;  // node -> quanta of running and new shares (not being removed)
  std::set<std::string> in_plan;
  for (const auto& s : facts.plan) {
    in_plan.insert(s.share);
    if (s.status == core::share_status::new_share && in_truth.count(s.share) == 0) pending_new[s.node] += s.quanta;
    if (s.status == core::share_status::new_share || s.status == core::share_status::running)
      plan_holding[s.node] += s.quanta;
  }

  for (const auto& n : facts.nodes) {
    const int held = truth[n.name] + pending_new[n.name];
    const std::string numbers = std::to_string(truth[n.name]) + " quanta running or starting + " +
                                std::to_string(pending_new[n.name]) + " new, order " + std::to_string(n.order);
    const bool stops_pending = pending_new[n.name] == 0 && staying[n.name] <= n.order;
    if (held > n.order && !n.rogue_process && !stops_pending) report("over_order", n.name, numbers);
    if (n.repair_due && plan_holding[n.name] > n.order)
      report("repair_late", n.name,
             "the plan still holds " + std::to_string(plan_holding[n.name]) + " quanta of order " +
                 std::to_string(n.order) + " two rounds after the map showed the node above it");
  }

  std::map<std::string, const node_fact*> by_name;
  for (const auto& n : facts.nodes) by_name[n.name] = &n;
  std::set<std::string> started;  // shares whose process the orchestrator runs or is starting
  for (const auto& p : facts.processes) started.insert(p.share);
  for (const auto& s : facts.plan) {
    if (s.status != core::share_status::new_share) continue;
    const bool granted_now = in_last_plan_.count(s.share) == 0;
    auto it = by_name.find(s.node);
    if (granted_now && it != by_name.end() && (it->second->down || it->second->varied_off))
      report("new_on_dead_node", s.node,
             "share " + s.share + " of " + s.job + " granted on a node " + (it->second->down ? "down" : "varied off"));
    else if (it != by_name.end() && it->second->down && started.count(s.share) == 0)
      report("new_on_dead_node", s.node,
             "share " + s.share + " of " + s.job + " left new on a node down, its process never started");
    auto seen = ids_seen_.find(s.share);
    if (seen != ids_seen_.end() && (granted_now || seen->second.job != s.job || seen->second.node != s.node))
      report("share_id_reused", s.node,
             "share " + s.share + " granted new to " + s.job + " on " + s.node + ", first seen for " +
                 seen->second.job + " on " + seen->second.node);
  }

  for (const auto& p : facts.processes)
    if (p.seen_by_rm && in_plan.count(p.share) == 0)
      report("process_lost", p.node, "process " + p.share + " runs and was reported, but the plan lost it");

  in_last_plan_.clear();
  for (const auto& s : facts.plan) {
    in_last_plan_.insert(s.share);
    ids_seen_.emplace(s.share, first_sight{s.job, s.node});
  }
  return out;
}

}  // namespace rmbus::simcheck
