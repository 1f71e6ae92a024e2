#include "tools/load/load_cluster.hpp"

#include <algorithm>
#include <map>

#include "core/nodepool_scheduler.hpp"
#include "tools/bench/workload.hpp"

namespace rmbus::load {

namespace {

messages::work_kind to_wire(core::work_kind k) {
  switch (k) {
    case core::work_kind::job: return messages::work_kind::job;
    case core::work_kind::service: return messages::work_kind::service;
    case core::work_kind::ap: return messages::work_kind::ap;
    case core::work_kind::reservation: return messages::work_kind::reservation;
  }
  return messages::work_kind::job;
}

messages::work_state to_wire(core::work_state s) {
  switch (s) {
    case core::work_state::waiting: return messages::work_state::waiting;
    case core::work_state::running: return messages::work_state::running;
    case core::work_state::completing: return messages::work_state::completing;
    case core::work_state::completed: return messages::work_state::completed;
  }
  return messages::work_state::waiting;
}

messages::process_state to_wire(core::process_state s) {
  switch (s) {
    case core::process_state::starting: return messages::process_state::starting;
    case core::process_state::initializing: return messages::process_state::initializing;
    case core::process_state::running: return messages::process_state::running;
    case core::process_state::ended: return messages::process_state::ended;
  }
  return messages::process_state::running;
}

messages::work_item to_wire(const core::work_item& c, const std::string& class_suffix) {
  messages::work_item w;
  w.id = c.id.str();
  w.kind = to_wire(c.kind);
  w.user = c.user.str();
  w.class_name = c.class_name.empty() ? std::string{} : c.class_name + class_suffix;
  w.memory_mb = c.memory_mb;
  w.submitted_ms = static_cast<std::uint64_t>(std::max<std::int64_t>(0, c.submitted_ms));
  w.state = to_wire(c.state);
  w.max_processes = static_cast<std::uint64_t>(std::max(0, c.max_processes));
  w.threads = static_cast<std::uint64_t>(std::max(1, c.threads));
  w.items_total = static_cast<std::uint64_t>(std::max<std::int64_t>(0, c.items_total));
  w.items_done = static_cast<std::uint64_t>(std::max<std::int64_t>(0, c.items_done));
  w.item_ms = static_cast<std::uint64_t>(std::max<std::int64_t>(0, c.item_ms));
  if (c.service_id != 0) w.service_id = c.service_id;
  w.hosts = c.hosts;
  for (const auto& p : c.processes) {
    if (p.state == core::process_state::ended) continue;
    w.processes.push_back({p.id.str(), p.node.str(), to_wire(p.state), static_cast<std::uint64_t>(std::max<std::int64_t>(0, p.init_ms)),
                           static_cast<std::uint64_t>(std::max<std::int64_t>(0, p.run_ms)), p.node_memory_mb});
  }
  return w;
}

// One pool's share of the cluster: its workload run by the core for a few rounds.
void add_pool(load_cluster& out, const cluster_spec& spec, int pool_index) {
  bench::workload_spec ws;
  ws.nodes = std::max(1, spec.nodes / spec.pools);
  ws.jobs = std::max(1, spec.jobs / spec.pools);
  ws.users = spec.users;
  ws.quantum_mb = spec.quantum_gb * 1024;
  ws.seed = spec.seed + static_cast<std::uint64_t>(pool_index);
  ws.initial_fraction = 1.0;  // all work present from the start: a cluster in steady state, not arriving
  auto w = bench::generate_workload(ws);
  const bool split = spec.pools > 1;
  const std::string prefix = split ? "p" + std::to_string(pool_index) + "-" : "";
  const std::string suffix = split ? "-p" + std::to_string(pool_index) : "";
  const std::string pool = split ? "p" + std::to_string(pool_index) : "default";

  // The warm-up: the core schedules the work and the bench's orchestrator starts the processes.
  core::nodepool_scheduler sched("default", w.config, "load" + std::to_string(pool_index));
  for (const auto& m : w.machines) sched.update_machine(m);
  bench::orchestrator_model orch(w.arrivals);
  for (int round = 0; round < spec.warm_rounds; ++round) {
    const auto& map = orch.begin_round(round);
    sched.apply_work(map);
    core::round_input in;
    in.now_ms = orch.now_ms();
    const auto& plan = sched.schedule(in);
    orch.observe(plan);
  }
  const auto& map = orch.begin_round(spec.warm_rounds);

  for (const auto& m : w.machines) {
    messages::heartbeat hb;
    hb.node = prefix + m.name.str();
    hb.ip = "10.1." + std::to_string(pool_index) + "." + std::to_string(out.nodes.size() % 250);
    hb.memory_mb = m.memory_mb;
    out.nodes.push_back(std::move(hb));
  }
  for (const auto& [id, item] : map) {
    auto wi = to_wire(item, suffix);
    wi.id = prefix + wi.id;
    for (auto& p : wi.processes) p.node = prefix + p.node;
    out.processes += wi.processes.size();
    out.work.work.push_back(std::move(wi));
  }

  // Its nodepool and classes in the RM's configuration.
  auto& sc = out.config.scheduling;
  sc.settings = w.config.settings;
  core::nodepool_def def;
  def.name = pool;
  if (split) def.node_patterns = {prefix + ".*"};
  sc.nodepools.push_back(def);
  for (auto c : w.config.classes) {
    c.name += suffix;
    c.nodepool = pool;
    c.is_default = c.is_default && pool_index == 0;
    sc.classes.push_back(c);
  }
}

}  // namespace

load_cluster make_cluster(const cluster_spec& spec) {
  load_cluster out;
  for (int i = 0; i < std::max(1, spec.pools); ++i) add_pool(out, spec, i);
  std::sort(out.nodes.begin(), out.nodes.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  return out;
}

std::size_t follow_schedule(messages::workmap& work, const messages::rm_state& state) {
  std::map<std::string, const messages::job_schedule*> by_id;
  for (const auto& j : state.jobs) by_id.emplace(j.id, &j);
  std::size_t changes = 0;
  for (auto& w : work.work) {
    auto it = by_id.find(w.id);
    if (it == by_id.end()) continue;
    for (const auto& s : it->second->shares) {
      auto p = std::find_if(w.processes.begin(), w.processes.end(), [&](const auto& x) { return x.id == s.id; });
      const bool leaving = s.status == messages::share_status::preempt || s.status == messages::share_status::evict;
      if (s.status == messages::share_status::new_ && p == w.processes.end()) {
        w.processes.push_back({s.id, s.node, messages::process_state::running, 1000, 0, std::nullopt});
        w.state = messages::work_state::running;
        ++changes;
      } else if (leaving && p != w.processes.end()) {
        w.processes.erase(p);
        ++changes;
      }
    }
  }
  return changes;
}

}  // namespace rmbus::load
