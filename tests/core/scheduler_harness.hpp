#pragma once
// A small test harness around nodepool_scheduler: builds a config, adds machines and work, and plays a
// simple orchestrator between rounds (new shares become running processes, preempted and evicted ones
// exit), so tests read as scenarios: "round(); round(); CHECK(count(job) == 5)".

#include <string>
#include <vector>

#include "core/nodepool_scheduler.hpp"

namespace rmbus::test {

using namespace rmbus::core;

inline resource_class fair_class(std::string name, int weight = 100, int priority = 10, std::string pool = "default") {
  resource_class c;
  c.name = std::move(name);
  c.policy = policy::fair_share;
  c.weight = weight;
  c.priority = priority;
  c.nodepool = std::move(pool);
  c.initialization_cap = 0;  // no ramp unless a test asks for it: counts show the fair share at once
  c.expand_by_doubling = false;
  c.use_prediction = false;
  return c;
}

inline resource_class fixed_class(std::string name, int priority = 5, std::string pool = "default") {
  resource_class c = fair_class(std::move(name), 100, priority, std::move(pool));
  c.policy = policy::fixed_share;
  return c;
}

inline resource_class reserve_class(std::string name, int priority = 1, std::string pool = "default") {
  resource_class c = fair_class(std::move(name), 100, priority, std::move(pool));
  c.policy = policy::reserve;
  return c;
}

inline scheduler_config one_pool(std::vector<resource_class> classes, std::uint64_t quantum_gb = 1) {
  scheduler_config cfg;
  cfg.settings.quantum_mb = quantum_gb * 1024;
  nodepool_def p;
  p.name = "default";
  cfg.nodepools.push_back(p);
  cfg.classes = std::move(classes);
  return cfg;
}

// Adds a nodepool nested in one_pool's "default", holding the named nodes.
inline void add_subpool(scheduler_config& cfg, const std::string& name, std::vector<std::string> nodes) {
  nodepool_def sub;
  sub.name = name;
  sub.parent = "default";
  sub.nodes = std::move(nodes);
  cfg.nodepools.push_back(std::move(sub));
}


// A running job of `gb` GB per process, as the orchestrator would list it (whatif's hypothetical work too).
inline work_item job_item(const std::string& id, const std::string& user, const std::string& cls, std::uint64_t gb,
                          std::int64_t items = 1000) {
  work_item w;
  w.id = job_id(id);
  w.user = user_id(user);
  w.class_name = cls;
  w.memory_mb = gb * 1024;
  w.items_total = items;
  w.state = work_state::running;
  return w;
}

// A process the orchestrator reports running (initialized) on `node`: work the scheduler did not place,
// which it recovers as a share of the job that lists it.
inline process_report running_process(const std::string& id, const std::string& node) {
  process_report p;
  p.id = share_id(id);
  p.node = machine_id(node);
  p.state = process_state::running;
  return p;
}

struct harness {
  explicit harness(scheduler_config c, std::string pool = "default")
      : cfg(std::move(c)), s(pool, cfg, "b1") {}

  void machine(const std::string& name, std::uint64_t gb) {
    s.update_machine({machine_id(name), "10.0.0." + std::to_string(++ips), gb * 1024, false});
  }
  void machines(const std::string& prefix, int n, std::uint64_t gb) {
    for (int i = 0; i < n; ++i) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%03d", i);
      machine(prefix + buf, gb);
    }
  }

  work_item& job(const std::string& id, const std::string& user, const std::string& cls, std::uint64_t gb,
                 std::int64_t items = 1000, std::int64_t submitted = 0) {
    auto w = job_item(id, user, cls, gb, items);
    w.submitted_ms = submitted == 0 ? ++clock : submitted;
    return work[w.id] = w;
  }

  // One cycle: apply the work map, schedule, then (if `confirm`) play the orchestrator.
  const schedule_plan& round(bool confirm = true) {
    s.apply_work(work);
    last = s.schedule({now += 10000, {}});
    if (confirm) orchestrate();
    return last;
  }

  void orchestrate() {
    for (const auto& jp : last.jobs) {
      auto it = work.find(jp.id);
      if (it == work.end()) continue;
      auto& procs = it->second.processes;
      for (const auto& sh : jp.shares) {
        auto pit = std::find_if(procs.begin(), procs.end(), [&](const process_report& p) { return p.id == sh.id; });
        if (sh.status == share_status::new_share && pit == procs.end()) {
          process_report p;
          p.id = sh.id;
          p.node = sh.node;
          p.state = initialize ? process_state::running : process_state::initializing;
          procs.push_back(p);
        } else if ((sh.status == share_status::preempt || sh.status == share_status::evict) && pit != procs.end()) {
          procs.erase(pit);
        }
      }
    }
  }

  const job_plan& plan(const std::string& id) const {
    const auto* p = last.find(job_id(id));
    if (p == nullptr) throw std::runtime_error("no plan for " + id);
    return *p;
  }
  // Processes held and not being removed.
  int count(const std::string& id) const {
    int n = 0;
    for (const auto& sh : plan(id).shares)
      n += sh.status == share_status::running || sh.status == share_status::new_share ? 1 : 0;
    return n;
  }
  int with_status(const std::string& id, share_status st) const {
    int n = 0;
    for (const auto& sh : plan(id).shares) n += sh.status == st ? 1 : 0;
    return n;
  }
  int on_machine(const std::string& id, const std::string& node) const {
    int n = 0;
    for (const auto& sh : plan(id).shares)
      n += sh.node.str() == node && (sh.status == share_status::running || sh.status == share_status::new_share);
    return n;
  }
  // Quanta used on every machine never exceed its order (checked from the view). A machine of no known size
  // (named by recovered work, not heard yet) has no order to exceed.
  bool no_machine_overbooked() const {
    for (const auto& m : s.view().machines) {
      if (m.memory_mb == 0) continue;
      int used = 0;
      for (const auto& h : m.shares) used += h.share.quanta;
      if (used > m.quanta) return false;
    }
    return true;
  }

  scheduler_config cfg;
  nodepool_scheduler s;
  work_map work;
  schedule_plan last;
  std::int64_t now = 0;
  std::int64_t clock = 0;
  int ips = 0;
  bool initialize = true;  // new processes report "running" (initialized) at once
};

}  // namespace rmbus::test
