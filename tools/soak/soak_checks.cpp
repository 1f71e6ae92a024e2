#include "tools/soak/soak_checks.hpp"

#include <cmath>
#include <sstream>

#include "tools/sim/fair_share.hpp"

namespace rmbus::soak {

namespace {
bool active(messages::share_status s) { return s == messages::share_status::running || s == messages::share_status::new_; }
}  // namespace

recovery_count count_recovered(const messages::rm_state& state, const std::vector<running_process>& processes) {
  std::map<std::string, std::pair<const messages::job_schedule*, const messages::share_schedule*>> listed;
  for (const auto& j : state.jobs)
    for (const auto& sh : j.shares) listed[sh.id] = {&j, &sh};
  recovery_count out;
  for (const auto& p : processes) {
    auto it = listed.find(p.share_id);
    if (it == listed.end()) {
      out.problems.push_back("process " + p.share_id + " of " + p.job + " on " + p.node + " is not listed");
      continue;
    }
    const auto& [job, share] = it->second;
    if (job->id != p.job || share->node != p.node) {
      out.problems.push_back("process " + p.share_id + " of " + p.job + " on " + p.node + " is listed as " + job->id +
                             " on " + share->node);
    } else if (share->status == messages::share_status::new_) {
      out.problems.push_back("process " + p.share_id + " of " + p.job + " is listed as new (not recovered)");
    } else if (share->status == messages::share_status::running) {
      ++out.running;
    } else {
      ++out.preempted;
    }
  }
  return out;
}

std::vector<std::string> over_order(const messages::rm_state& state,
                                    const std::map<std::string, std::uint64_t>& node_order,
                                    const std::set<std::string>* processes) {
  std::map<std::string, std::uint64_t> used;
  for (const auto& j : state.jobs)
    for (const auto& sh : j.shares)
      if (!processes || active(sh.status) || processes->count(sh.id) > 0) used[sh.node] += sh.quanta;
  std::vector<std::string> out;
  for (const auto& [node, q] : used) {
    auto it = node_order.find(node);
    if (it == node_order.end() || q <= it->second) continue;
    // Named only for a node above its order: every share there as "job/id(quanta status)".
    std::string held;
    for (const auto& j : state.jobs)
      for (const auto& sh : j.shares)
        if (sh.node == node)
          held += " " + j.id + "/" + sh.id + "(" + std::to_string(sh.quanta) + " " +
                  std::string(messages::to_string(sh.status)) + ")";
    out.push_back("node " + node + " holds " + std::to_string(q) + " quanta, its order is " + std::to_string(it->second) +
                  " (cycle " + std::to_string(state.cycle) + ":" + held + ")");
  }
  return out;
}

std::vector<std::string> share_ledger::observe(const messages::rm_state& state, int life) {
  std::vector<std::string> out;
  for (const auto& j : state.jobs) {
    for (const auto& sh : j.shares) {
      auto [it, fresh] = ids_.try_emplace(sh.id, seen{j.id, sh.node, life});
      if (fresh) continue;
      const auto& s = it->second;
      if (s.job != j.id || s.node != sh.node)
        out.push_back("share id " + sh.id + " named " + s.job + " on " + s.node + ", now " + j.id + " on " + sh.node);
      else if (sh.status == messages::share_status::new_ && s.life < life)
        out.push_back("share id " + sh.id + " of an earlier RM (life " + std::to_string(s.life) + ") is new again in life " +
                      std::to_string(life));
    }
  }
  return out;
}

std::map<std::string, std::uint64_t> processes_per_job(const messages::rm_state& state) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& j : state.jobs)
    for (const auto& sh : j.shares)
      if (active(sh.status)) ++out[j.id];
  return out;
}

bool at_fair_share(const messages::rm_state& state, const std::vector<soak_job>& jobs,
                   const std::vector<soak_class>& classes, double capacity, std::string* why) {
  std::vector<sim::class_demand> demands;
  for (const auto& c : classes) {
    sim::class_demand d;
    d.class_name = c.name;
    d.weight = c.weight;
    d.priority = c.priority;
    for (const auto& j : jobs)
      if (j.class_name == c.name) d.user_demand_quanta[j.user] += static_cast<double>(j.order * j.max_processes);
    if (!d.user_demand_quanta.empty()) demands.push_back(std::move(d));
  }
  const auto fair = sim::fair_shares(capacity, demands);
  std::map<std::string, double> held, slack;
  std::map<std::string, const soak_job*> by_id;
  for (const auto& j : jobs) {
    by_id[j.id] = &j;
    slack[j.user] += static_cast<double>(j.order);  // DUCC hands out whole processes
  }
  for (const auto& j : state.jobs) {
    auto it = by_id.find(j.id);
    if (it == by_id.end()) continue;
    for (const auto& sh : j.shares)
      if (active(sh.status)) held[it->second->user] += static_cast<double>(sh.quanta);
  }
  for (const auto& [user, s] : slack) {
    const double f = fair.count(user) ? fair.at(user) : 0.0;
    const double h = held.count(user) ? held.at(user) : 0.0;
    if (std::abs(h - f) > s) {
      if (why) {
        std::ostringstream o;
        o << user << " holds " << h << " quanta, fair share " << f << " (+-" << s << ")";
        *why = o.str();
      }
      return false;
    }
  }
  return true;
}

}  // namespace rmbus::soak
