#include "core/job_estimates.hpp"

#include <algorithm>
#include <map>

#include "core/quanta.hpp"
#include "core/what_of.hpp"

namespace rmbus::core {

namespace {

// Work items run only in jobs; services, APs and reservations have no end to project.
std::optional<end_estimate> end_of(const cluster_model& m, const job_rec& j, std::int64_t now_ms) {
  if (!j.live || j.refused || j.item.kind != work_kind::job) return std::nullopt;
  return estimate_end(progress_of(m, j), now_ms);
}

// The processes job `j` is short of, 0 when it waits for nothing space could give.
int processes_short(const cluster_model& m, const job_rec& j) {
  if (j.refused || j.done || j.reason == reason_code::completed || j.reason == reason_code::allotment_exceeded)
    return 0;
  const int placed = m.current(j);
  if (j.reason == reason_code::none) return std::max(0, j.given - placed);
  // Held back: what it was counted, or its fair share when more; at least its first process.
  const std::int64_t fair = j.order > 0 ? j.pfs_qshares / j.order : 0;
  const std::int64_t wanted = std::max<std::int64_t>(j.given, fair);
  return static_cast<int>(std::clamp<std::int64_t>(wanted - placed, 1, 1 << 30));
}

bool machine_usable(const cluster_model& m, const job_rec& j, const machine_rec& mc, int lo, int hi) {
  if (!mc.schedulable() || !host_allowed(j, mc)) return false;
  const int pool = m.class_pool(j);
  switch (m.policy_of(j)) {
    case policy::fair_share: return m.in_subtree(mc.pool, pool) && mc.order >= j.order;
    case policy::fixed_share: return mc.pool == pool && mc.order >= j.order;
    case policy::reserve: return mc.pool == pool && mc.order >= lo && mc.order <= hi;
  }
  return false;
}

}  // namespace

job_progress progress_of(const cluster_model& m, const job_rec& j) {
  job_progress p;
  p.id = j.item.id;
  p.items_total = j.item.items_total;
  p.items_done = j.item.items_done;
  p.item_ms = j.item.item_ms;
  p.processes = m.confirmed(j);
  // The threads as the job cap counts them (core/job_caps.cpp).
  p.threads = j.item.threads > 0 ? j.item.threads : std::max(1, m.settings.default_threads);
  return p;
}

job_estimates estimate_job(const cluster_model& m, int job, std::int64_t now_ms) {
  job_estimates out;
  const auto& j = m.jobs[static_cast<std::size_t>(job)];
  if (!j.live || j.refused) return out;
  out.end = end_of(m, j, now_ms);

  start_query q;
  q.now_ms = now_ms;
  q.order = j.order;
  q.processes = processes_short(m, j);
  if (q.processes <= 0 || m.class_pool(j) < 0) return out;
  q.whole_machine = m.policy_of(j) == policy::reserve;
  // A reservation takes a machine of its order, or larger up to the overage; once it holds one, that size.
  int lo = j.order, hi = j.order;
  for (int s : j.shares) lo = hi = m.shares[static_cast<std::size_t>(s)].order;
  if (j.shares.empty() && j.item.kind == work_kind::reservation && m.settings.reserve_overage_mb > 0)
    hi = order_for_request(j.item.memory_mb + m.settings.reserve_overage_mb, m.quantum_mb);

  std::map<int, bool> ends_known;  // job slot -> has a projected end (each looked at once)
  for (const auto& mc : m.machines) {
    if (!machine_usable(m, j, mc, lo, hi)) continue;
    const std::size_t at = q.machines.size();
    q.machines.push_back({mc.name, mc.order, mc.free()});
    for (int s : mc.shares) {
      const auto& sh = m.shares[static_cast<std::size_t>(s)];
      if (sh.job == job || sh.blacklisted) continue;
      const auto& holder = m.jobs[static_cast<std::size_t>(sh.job)];
      if (sh.removing()) {
        q.releases.push_back({at, sh.order, release_kind::preemption, holder.item.id});
        continue;
      }
      if (sh.reclaim_at_ms > 0) {
        q.releases.push_back({at, sh.order, release_kind::reclaim, holder.item.id, sh.reclaim_at_ms});
        continue;
      }
      auto [it, fresh] = ends_known.try_emplace(sh.job, false);
      if (fresh) {
        if (auto e = end_of(m, holder, now_ms)) {
          q.job_ends.emplace(holder.item.id, std::move(*e));
          it->second = true;
        }
      }
      if (it->second) q.releases.push_back({at, sh.order, release_kind::job_end, holder.item.id});
    }
  }
  out.start = estimate_start(q);
  return out;
}

}  // namespace rmbus::core
