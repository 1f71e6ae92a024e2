#include "tools/sim/recorder.hpp"

#include <algorithm>
#include <map>

#include "tools/sim/fair_share.hpp"

namespace rmbus::sim {

namespace {

bool active(messages::share_status s) {
  return s == messages::share_status::running || s == messages::share_status::new_;
}

// Bound on the share ids remembered for counting: a hostile or broken RM cannot make the recorder grow
// without limit (past it, counts stop growing, which the report then understates).
constexpr std::size_t max_tracked_shares = 1000000;

}  // namespace

recorder::recorder(std::vector<std::string> users, std::vector<class_spec> classes, std::uint64_t quantum_mb,
                   std::set<std::string> job_ids)
    : users_(std::move(users)),
      classes_(std::move(classes)),
      quantum_mb_(std::max<std::uint64_t>(1, quantum_mb)),
      job_ids_(std::move(job_ids)) {}

void recorder::observe_state(const messages::rm_state& state) {
  ++states_;
  for (const auto& j : state.jobs) {
    if (!job_ids_.empty() && job_ids_.count(j.id) == 0) continue;
    for (const auto& sh : j.shares) {
      if (sh.status == messages::share_status::preempt && preempted_.size() < max_tracked_shares)
        preempted_.insert(sh.id);
      if (sh.status == messages::share_status::evict && evicted_.size() < max_tracked_shares)
        evicted_.insert(sh.id);
    }
    // memory granted per process = quanta x quantum: any share tells the RM's quantum.
    if (!j.shares.empty() && j.shares.front().quanta > 0 && j.memory_mb % j.shares.front().quanta == 0 &&
        j.memory_mb > 0)
      quantum_mb_ = j.memory_mb / j.shares.front().quanta;
  }
}

void recorder::observe_event(const messages::rm_event& event) {
  if (!job_ids_.empty()) {
    const auto job = event.detail.find("job");
    if (job == event.detail.end() || job_ids_.count(job->second) == 0) return;
  }
  if (event.kind == messages::event_kinds::preempt) ++preempt_events_;
  if (event.kind == messages::event_kinds::evict) ++evict_events_;
}

void recorder::sample_now(std::int64_t t_ms, const std::vector<job_view>& jobs,
                          const messages::rm_state* state, const messages::rm_nodes* nodes,
                          std::size_t agent_nodes_up) {
  if (offered_++ % stride_ != 0) return;

  sample s;
  s.t_ms = t_ms;
  s.users.resize(users_.size());
  std::map<std::string, std::size_t> user_index;
  for (std::size_t i = 0; i < users_.size(); ++i) user_index[users_[i]] = i;
  std::map<std::string, const job_view*> job_by_id;
  for (const auto& j : jobs) job_by_id[j.id] = &j;

  // The RM's nodes: which are up and how big; used for totals and the double-booking check. Each node's
  // top-level pool, each nodepool's top-level pool, and each pool's quantum (memory / quanta of its nodes).
  std::map<std::string, std::uint64_t> node_quanta;
  std::map<std::string, std::string> pool_of_node, top_of_nodepool;
  std::map<std::string, std::uint64_t> pool_quantum_mb;
  if (nodes != nullptr) {
    for (const auto& n : nodes->nodes) {
      node_quanta[n.node] = n.quanta;
      pool_of_node[n.node] = n.pool;
      top_of_nodepool[n.pool] = n.pool;
      if (!n.nodepool.empty()) top_of_nodepool[n.nodepool] = n.pool;
      if (n.quanta > 0 && n.memory_mb >= n.quanta) pool_quantum_mb[n.pool] = n.memory_mb / n.quanta;
      if (n.state == messages::node_state::up || n.state == messages::node_state::quiesced) {
        ++s.nodes_up;
        s.total_quanta += n.quanta;
        s.used_quanta += n.quanta - std::min(n.quanta, n.free_quanta);
        // Pools of different quanta are not added up for a person: each is kept apart too.
        auto& p = s.pools[n.pool];
        p.total_quanta += n.quanta;
        p.used_quanta += n.quanta - std::min(n.quanta, n.free_quanta);
      }
    }
  } else {
    s.nodes_up = agent_nodes_up;
  }
  for (auto& [name, p] : s.pools) {
    p.users.resize(users_.size());
    if (auto q = pool_quantum_mb.find(name); q != pool_quantum_mb.end()) p.quantum_mb = q->second;
  }

  // Holdings per user (in all and per pool), from the RM's schedule; orders and pools of jobs learned from
  // their shares.
  std::map<std::string, std::uint64_t> order_of;
  std::map<std::string, std::string> pool_of_job;
  if (state != nullptr) {
    std::set<std::string> ids;
    std::map<std::string, std::uint64_t> on_node;
    for (const auto& js : state->jobs) {
      for (const auto& sh : js.shares) {
        if (!ids.insert(sh.id).second) s.double_booked = true;
        on_node[sh.node] += sh.quanta;
      }
      auto jv = job_by_id.find(js.id);
      if (jv == job_by_id.end()) continue;  // not ours (another orchestrator on the bus)
      const job_view& j = *jv->second;
      const class_spec* c = class_of(classes_, j.class_name, j.kind);
      const bool fair = c != nullptr && c->policy == class_policy::fair_share;
      auto u = user_index.find(j.user);
      for (const auto& sh : js.shares) {
        if (sh.quanta > 0) order_of[js.id] = sh.quanta;
        if (auto p = pool_of_node.find(sh.node); p != pool_of_node.end() && active(sh.status)) {
          pool_of_job[js.id] = p->second;
          if (c != nullptr) class_pool_[c->name] = p->second;
        }
      }
      if (u != user_index.end() && js.fair_share > 0) {
        auto o = order_of.find(js.id);
        const std::uint64_t order =
            o != order_of.end() ? o->second : (j.memory_mb + quantum_mb_ - 1) / quantum_mb_;
        s.users[u->second].rm_fair_quanta += std::min<std::uint64_t>(js.fair_share, 1000000) * order;
      }
      for (const auto& sh : js.shares) {
        if (!active(sh.status)) continue;
        pool_sample* p = nullptr;
        if (auto pn = pool_of_node.find(sh.node); pn != pool_of_node.end()) {
          auto it = s.pools.find(pn->second);
          if (it != s.pools.end()) p = &it->second;
        }
        if (!fair) {
          s.fixed_quanta += sh.quanta;
          if (p != nullptr) p->fixed_quanta += sh.quanta;
        }
        if (u == user_index.end()) continue;
        auto& us = s.users[u->second];
        us.held_quanta += sh.quanta;
        us.held_processes += 1;
        if (fair) us.fair_held_quanta += sh.quanta;
        if (p != nullptr) {
          auto& ps = p->users[u->second];
          ps.held_quanta += sh.quanta;
          ps.held_processes += 1;
          if (fair) ps.fair_held_quanta += sh.quanta;
        }
      }
    }
    for (const auto& [node, q] : on_node) {
      auto it = node_quanta.find(node);
      if (it != node_quanta.end() && q > it->second) s.double_booked = true;
    }
    if (nodes == nullptr) {
      for (const auto& u : s.users) s.used_quanta += u.held_quanta;
    }
  }

  // A job's top-level pool (see the header); empty when unknown.
  const auto pool_for = [&](const job_view& j, const class_spec* c) -> std::string {
    if (auto p = pool_of_job.find(j.id); p != pool_of_job.end()) return p->second;
    if (c != nullptr && !c->nodepool.empty()) {
      if (auto t = top_of_nodepool.find(c->nodepool); t != top_of_nodepool.end()) return t->second;
    }
    if (c != nullptr) {
      if (auto l = class_pool_.find(c->name); l != class_pool_.end() && s.pools.count(l->second))
        return l->second;
    }
    if (s.pools.size() == 1) return s.pools.begin()->first;
    return {};
  };

  // What the RM holds back by design (rm.state capped_by: prediction, the initialization cap, ...) wants,
  // for now, what it was given; refused work wants nothing (issue 17: neither reads as unfairness). Work
  // counts only once the RM lists it: before that it may yet be refused (an unknown class), and a refused
  // job's first samples would give its user a fair share the report then says it was never counted in.
  std::map<std::string, std::uint64_t> capped_at;
  std::set<std::string> refused_now, listed;
  if (state != nullptr)
    for (const auto& js : state->jobs) {
      listed.insert(js.id);
      if (!js.capped_by.empty()) capped_at[js.id] = js.given;
      if (js.status == messages::job_status::refused) refused_now.insert(js.id);
    }
  // The largest node up in each pool, in its quanta: a job of a larger order fits no machine there and waits
  // for one to join; its demand would take a share of its class from the users who can run (issue 51).
  std::map<std::string, std::uint64_t> largest_up;
  if (nodes != nullptr)
    for (const auto& n : nodes->nodes)
      if (n.state == messages::node_state::up || n.state == messages::node_state::quiesced)
        largest_up[n.pool] = std::max(largest_up[n.pool], n.quanta);
  // Demand and fair shares over the fair-share classes, pool by pool.
  std::map<std::string, std::map<std::string, class_demand>> demand;  // pool -> class -> demand
  for (const auto& j : jobs) {
    if (j.arrived && j.state != messages::work_state::completed && j.processes == 0) ++s.pending_jobs;
    if (j.demand == 0 || j.refused || refused_now.count(j.id) || !listed.count(j.id)) continue;
    const auto capped = capped_at.find(j.id);
    const std::uint64_t wants = capped == capped_at.end() ? j.demand : std::min(j.demand, capped->second);
    const class_spec* c = class_of(classes_, j.class_name, j.kind);
    const std::string pool = pool_for(j, c);
    std::uint64_t order = 0;
    if (auto o = order_of.find(j.id); o != order_of.end()) {
      order = o->second;
    } else {
      const auto q = pool_quantum_mb.find(pool);
      const std::uint64_t quantum = q != pool_quantum_mb.end() ? q->second : quantum_mb_;
      order = (j.memory_mb + quantum - 1) / quantum;
    }
    if (auto l = largest_up.find(pool); l != largest_up.end() && order > l->second) continue;  // fits nowhere
    if (auto u = user_index.find(j.user); u != user_index.end()) s.users[u->second].demand_processes += wants;
    if (c == nullptr || c->policy != class_policy::fair_share) continue;
    auto ps = s.pools.find(pool);
    if (ps == s.pools.end()) {  // several pools (or none reported yet) and this job's is not known
      if (!s.pools.empty()) ++s.unplaced_jobs;
      continue;
    }
    auto& d = demand[pool][c->name];
    d.class_name = c->name;
    d.weight = c->weight;
    d.priority = c->priority;
    d.user_demand_quanta[j.user] += static_cast<double>(wants * order);
  }
  for (auto& [pool, by_class] : demand) {
    auto& p = s.pools.at(pool);
    std::vector<class_demand> claims;
    for (auto& [name, d] : by_class) claims.push_back(std::move(d));
    const double available =
        static_cast<double>(p.total_quanta) - static_cast<double>(std::min(p.total_quanta, p.fixed_quanta));
    const auto fair = fair_shares(available, claims);
    for (const auto& c : claims) {
      for (const auto& [user, q] : c.user_demand_quanta) {
        if (auto u = user_index.find(user); u != user_index.end()) {
          s.users[u->second].demand_quanta += q;
          p.users[u->second].demand_quanta += q;
        }
      }
    }
    for (const auto& [user, q] : fair) {
      if (auto u = user_index.find(user); u != user_index.end()) {
        s.users[u->second].fair_quanta += q;
        p.users[u->second].fair_quanta = q;
      }
    }
  }

  s.preemptions = preempted_.size();
  s.evictions = evicted_.size();
  samples_.push_back(std::move(s));

  // Very long runs: keep every other sample and take half as many from now on.
  if (samples_.size() >= max_samples) {
    std::vector<sample> kept;
    kept.reserve(samples_.size() / 2 + 1);
    for (std::size_t i = 0; i < samples_.size(); i += 2) kept.push_back(std::move(samples_[i]));
    samples_ = std::move(kept);
    stride_ *= 2;
  }
}

}  // namespace rmbus::sim
