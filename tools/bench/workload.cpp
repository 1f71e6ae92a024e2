#include "tools/bench/workload.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/quanta.hpp"

namespace rmbus::bench {

using namespace rmbus::core;

scheduler_config shipped_config(std::uint64_t quantum_mb) {
  scheduler_config cfg;
  cfg.settings.quantum_mb = quantum_mb;
  nodepool_def pool;
  pool.name = "default";
  cfg.nodepools.push_back(pool);
  auto fair = [&](const char* name, int weight, bool is_default) {
    resource_class c;
    c.name = name;
    c.policy = policy::fair_share;
    c.priority = 10;
    c.weight = weight;
    c.nodepool = "default";
    c.is_default = is_default;
    cfg.classes.push_back(c);
  };
  fair("background", 1, false);
  fair("low", 50, false);
  fair("normal", 100, true);
  fair("high", 200, false);
  fair("urgent", 400, false);
  resource_class fixed;
  fixed.name = "fixed";
  fixed.policy = policy::fixed_share;
  fixed.priority = 5;
  fixed.nodepool = "default";
  fixed.is_default = true;
  cfg.classes.push_back(fixed);
  resource_class reserve;
  reserve.name = "reserve";
  reserve.policy = policy::reserve;
  reserve.priority = 1;
  reserve.nodepool = "default";
  reserve.is_default = true;
  cfg.classes.push_back(reserve);
  return cfg;
}

namespace {

template <class T>
const T& weighted_pick(const std::vector<std::pair<T, int>>& mix, std::mt19937_64& rng) {
  int total = 0;
  for (const auto& [v, w] : mix) total += w;
  int r = std::uniform_int_distribution<int>(0, std::max(0, total - 1))(rng);
  for (const auto& [v, w] : mix) {
    if (r < w) return v;
    r -= w;
  }
  return mix.back().first;
}

// "n00042": zero-padded so that names sort in numeric order.
std::string numbered(const char* prefix, int n, int width) {
  std::string digits = std::to_string(n);
  if (static_cast<int>(digits.size()) < width) digits.insert(0, static_cast<std::size_t>(width) - digits.size(), '0');
  return prefix + digits;
}

}  // namespace

workload generate_workload(const workload_spec& spec) {
  workload w;
  w.config = shipped_config(spec.quantum_mb);
  std::mt19937_64 rng(spec.seed);
  const int node_width = std::max(5, static_cast<int>(std::to_string(spec.nodes).size()));
  for (int i = 0; i < spec.nodes; ++i) {
    machine_report m;
    m.name = machine_id(numbered("n", i, node_width));
    m.ip = "10." + std::to_string((i >> 16) & 255) + "." + std::to_string((i >> 8) & 255) + "." + std::to_string(i & 255);
    m.memory_mb = static_cast<std::uint64_t>(weighted_pick(spec.node_mix, rng)) * 1024;
    w.machines.push_back(m);
  }

  const int user_width = std::max(3, static_cast<int>(std::to_string(spec.users).size()));
  const int job_width = std::max(6, static_cast<int>(std::to_string(spec.jobs).size()));
  const int initial = static_cast<int>(std::lround(spec.jobs * spec.initial_fraction));
  auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, std::max(lo, hi))(rng);
  };
  for (int i = 0; i < spec.jobs; ++i) {
    arrival a;
    a.round = i < initial ? 0 : static_cast<int>(uniform(1, std::max(1, spec.last_arrival_round)));
    work_item& it = a.item;
    it.id = job_id(numbered("j", i, job_width));
    it.user = user_id(numbered("u", static_cast<int>(uniform(0, std::max(1, spec.users) - 1)), user_width));
    it.submitted_ms = a.round * 10000 + i;  // oldest first within a round: by index
    it.memory_mb = static_cast<std::uint64_t>(uniform(spec.min_process_gb, spec.max_process_gb)) * 1024;
    const int kind = static_cast<int>(uniform(0, 99));
    if (kind < spec.reserve_percent) {
      // A reservation asks for a whole machine: exactly the quanta of one machine size, or it could never
      // be placed (reservations are never promoted to a larger machine).
      it.kind = work_kind::reservation;
      it.class_name = "reserve";
      const std::uint64_t gb = static_cast<std::uint64_t>(weighted_pick(spec.node_mix, rng));
      it.memory_mb = static_cast<std::uint64_t>(order_of_machine(gb * 1024, spec.quantum_mb)) * spec.quantum_mb;
      if (it.memory_mb == 0) it.memory_mb = spec.quantum_mb;
    } else if (kind < spec.reserve_percent + spec.fixed_percent) {
      it.kind = work_kind::service;
      it.class_name = "fixed";
      it.service_id = static_cast<std::uint64_t>(i) + 1;
    } else {
      it.kind = work_kind::job;
      it.class_name = weighted_pick(spec.class_mix, rng);
      it.threads = spec.threads;
      const double lo = std::log(static_cast<double>(std::max<std::int64_t>(1, spec.min_items)));
      const double hi = std::log(static_cast<double>(std::max(spec.min_items, spec.max_items)));
      it.items_total = std::llround(std::exp(std::uniform_real_distribution<double>(lo, hi)(rng)));
      it.item_ms = uniform(spec.min_item_ms, spec.max_item_ms);
      if (uniform(0, 99) < spec.max_processes_percent) it.max_processes = static_cast<int>(uniform(1, 50));
      a.init_ms = uniform(spec.min_init_ms, spec.max_init_ms);
    }
    w.arrivals.push_back(std::move(a));
  }
  std::stable_sort(w.arrivals.begin(), w.arrivals.end(), [](const arrival& x, const arrival& y) {
    return x.round != y.round ? x.round < y.round : x.item.id < y.item.id;
  });
  return w;
}

orchestrator_model::orchestrator_model(std::vector<arrival> arrivals, std::int64_t epoch_ms)
    : arrivals_(std::move(arrivals)), epoch_ms_(epoch_ms > 0 ? epoch_ms : 10000) {}

const work_map& orchestrator_model::begin_round(int round) {
  now_ms_ = static_cast<std::int64_t>(round) * epoch_ms_;
  while (next_ < arrivals_.size() && arrivals_[next_].round <= round) {
    const auto& a = arrivals_[next_++];
    map_.insert_or_assign(a.item.id, a.item);
    jobs_[a.item.id] = job_state{a.init_ms, 0.0};
  }
  return map_;
}

void orchestrator_model::observe(const schedule_plan& plan) {
  const std::int64_t next_ms = now_ms_ + epoch_ms_;
  std::vector<job_id> finished;
  auto p = plan.jobs.begin();
  for (auto& [id, item] : map_) {
    while (p != plan.jobs.end() && p->id < id) ++p;
    if (p == plan.jobs.end() || !(p->id == id)) continue;  // not scheduled in this pool (yet)
    if (p->status == job_status::refused) {
      finished.push_back(id);
      ++withdrawn_;
      continue;
    }
    job_state& js = jobs_[id];

    // Work done during this epoch by the processes running now.
    if (item.kind == work_kind::job && item.item_ms > 0) {
      int running = 0;
      for (const auto& pr : item.processes) running += pr.state == process_state::running ? 1 : 0;
      js.progress += static_cast<double>(running) * item.threads * static_cast<double>(epoch_ms_) /
                     static_cast<double>(item.item_ms);
      item.items_done = std::min<std::int64_t>(item.items_total, static_cast<std::int64_t>(js.progress));
      if (item.items_done >= item.items_total) {
        finished.push_back(id);
        ++completed_;
        continue;
      }
    }

    // The processes as the next map shows them: the plan's shares, minus those told to go.
    std::vector<process_report> procs;
    bool any_running = false;
    for (const auto& s : p->shares) {
      if (s.status == share_status::preempt || s.status == share_status::evict) {
        started_ms_.erase(s.id);
        continue;
      }
      auto [st, inserted] = started_ms_.try_emplace(s.id, now_ms_);
      const std::int64_t age = next_ms - st->second;
      process_report pr;
      pr.id = s.id;
      pr.node = s.node;
      if (age >= js.init_ms) {
        pr.state = process_state::running;
        pr.init_ms = js.init_ms;
        pr.run_ms = age - js.init_ms;
        any_running = true;
      } else {
        pr.state = process_state::initializing;
      }
      procs.push_back(std::move(pr));
    }
    item.processes = std::move(procs);
    if (any_running) item.state = work_state::running;  // once running, a job stays running
  }
  for (const auto& id : finished) {
    auto it = map_.find(id);
    if (it != map_.end()) {
      for (const auto& pr : it->second.processes) started_ms_.erase(pr.id);
      map_.erase(it);
    }
    jobs_.erase(id);
  }
}

}  // namespace rmbus::bench
