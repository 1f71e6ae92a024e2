#include "actors/internal.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

namespace rmbus::actors {

messages::envelope envelope_stamper::next(std::string_view topic) {
  auto it = seq_.find(topic);
  if (it == seq_.end()) it = seq_.emplace(std::string{topic}, 0).first;
  messages::envelope env;
  env.seq = ++it->second;
  env.ts_ms = static_cast<std::uint64_t>(wall_clock_ms());
  env.src = src_;
  return env;
}

std::int64_t wall_clock_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// ---- wire <-> core --------------------------------------------------------------------------------

namespace {

core::work_kind to_core(messages::work_kind k) {
  switch (k) {
    case messages::work_kind::job: return core::work_kind::job;
    case messages::work_kind::service: return core::work_kind::service;
    case messages::work_kind::ap: return core::work_kind::ap;
    case messages::work_kind::reservation: return core::work_kind::reservation;
  }
  return core::work_kind::job;
}

core::work_state to_core(messages::work_state s) {
  switch (s) {
    case messages::work_state::waiting: return core::work_state::waiting;
    case messages::work_state::running: return core::work_state::running;
    case messages::work_state::completing: return core::work_state::completing;
    case messages::work_state::completed: return core::work_state::completed;
  }
  return core::work_state::waiting;
}

core::process_state to_core(messages::process_state s) {
  switch (s) {
    case messages::process_state::starting: return core::process_state::starting;
    case messages::process_state::initializing: return core::process_state::initializing;
    case messages::process_state::running: return core::process_state::running;
    case messages::process_state::ended: return core::process_state::ended;
  }
  return core::process_state::starting;
}

// Wire counts are uint64; the core keeps int / int64. Clamp instead of wrapping on absurd values.
int clamp_int(std::uint64_t v) { return v > 1'000'000'000u ? 1'000'000'000 : static_cast<int>(v); }
std::int64_t clamp_i64(std::uint64_t v) {
  constexpr std::uint64_t top = static_cast<std::uint64_t>(INT64_MAX);
  return static_cast<std::int64_t>(v > top ? top : v);
}

}  // namespace

core::work_item to_core(const messages::work_item& w) {
  core::work_item c;
  c.id = core::job_id{w.id};
  c.kind = to_core(w.kind);
  c.user = core::user_id{w.user};
  c.class_name = w.class_name;
  c.memory_mb = w.memory_mb;
  c.submitted_ms = clamp_i64(w.submitted_ms);
  c.state = to_core(w.state);
  c.max_processes = clamp_int(w.max_processes);
  c.threads = w.threads == 0 ? 1 : clamp_int(w.threads);
  c.items_total = clamp_i64(w.items_total);
  c.items_done = clamp_i64(w.items_done);
  c.item_ms = clamp_i64(w.item_ms);
  c.service_id = w.service_id.value_or(0);
  c.hosts = w.hosts;
  for (const auto& p : w.processes) {
    core::process_report r;
    r.id = core::share_id{p.id};
    r.node = core::machine_id{p.node};
    r.state = to_core(p.state);
    r.init_ms = clamp_i64(p.init_ms);
    r.run_ms = clamp_i64(p.run_ms);
    r.node_memory_mb = p.node_memory_mb.value_or(0);
    c.processes.push_back(std::move(r));
  }
  return c;
}

messages::job_schedule to_schedule(const core::job_plan& p, const std::string& group) {
  messages::job_schedule j;
  j.id = p.id.str();
  j.status = p.status == core::job_status::scheduled ? messages::job_status::scheduled
             : p.status == core::job_status::refused ? messages::job_status::refused
                                                     : messages::job_status::pending;
  j.reason = p.reason_text;
  j.memory_mb = p.memory_mb_per_process;
  j.user = p.user.str();
  j.class_name = p.class_name;
  j.group = group;
  j.given = static_cast<std::uint64_t>(std::max(0, p.given));
  j.demand = static_cast<std::uint64_t>(std::max<std::int64_t>(0, p.demand));
  j.fair_share = static_cast<std::uint64_t>(std::max<std::int64_t>(0, p.fair_share));
  j.capped_by = std::string{p.capped_by};
  j.shares.reserve(p.shares.size());
  for (const auto& s : p.shares) {
    messages::share_schedule sh;
    sh.id = s.id.str();
    sh.node = s.node.str();
    sh.quanta = static_cast<std::uint64_t>(std::max(0, s.quanta));
    sh.status = s.status == core::share_status::running   ? messages::share_status::running
                : s.status == core::share_status::preempt ? messages::share_status::preempt
                : s.status == core::share_status::evict   ? messages::share_status::evict
                                                          : messages::share_status::new_;
    if (s.reclaim_at_ms > 0) sh.reclaim_at_ms = static_cast<std::uint64_t>(s.reclaim_at_ms);
    j.shares.push_back(std::move(sh));
  }
  return j;
}

std::map<std::string, std::uint64_t> by_user_name(const std::map<core::user_id, std::uint64_t>& mb) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& [u, n] : mb) out.emplace_hint(out.end(), u.str(), n);
  return out;
}

}  // namespace rmbus::actors
