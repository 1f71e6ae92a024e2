#include "core/start_estimate.hpp"

#include <algorithm>
#include <limits>
#include <tuple>

namespace rmbus::core {

namespace {

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

// now + in without overflow: an absurd item count gives a far time, never a wrapped one.
std::int64_t clamped_in(__int128 in_ms, std::int64_t now_ms) {
  const std::int64_t room = int64_max - std::max<std::int64_t>(0, now_ms);
  return static_cast<std::int64_t>(std::clamp<__int128>(in_ms, 0, room));
}

// "~120 s" for a duration ahead; whole seconds from one second up (the estimate is no finer than that).
std::string about(std::int64_t ms) {
  if (ms >= 1000) return "~" + std::to_string(ms / 1000 + (ms % 1000 >= 500 ? 1 : 0)) + " s";
  return "~" + seconds_text(ms);
}

std::string plural(std::int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string seconds_text(std::int64_t ms) {
  const bool negative = ms < 0;
  const auto abs_ms = negative ? -static_cast<__int128>(ms) : static_cast<__int128>(ms);
  std::string out = negative ? "-" : "";
  out += std::to_string(static_cast<std::uint64_t>(abs_ms / 1000));
  auto frac = static_cast<int>(abs_ms % 1000);
  if (frac != 0) {
    std::string digits = std::to_string(frac);
    digits.insert(0, 3 - digits.size(), '0');
    while (digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out + " s";
}

std::optional<end_estimate> estimate_end(const job_progress& p, std::int64_t now_ms) {
  if (p.items_total <= 0 || p.item_ms <= 0 || p.processes <= 0) return std::nullopt;
  end_estimate e;
  e.items_left = std::max<std::int64_t>(0, p.items_total - std::max<std::int64_t>(0, p.items_done));
  e.processes = p.processes;
  e.threads = std::max(1, p.threads);
  e.item_ms = p.item_ms;
  // ceil(items_left / (processes x threads)) rounds of one item time each.
  const __int128 in_flight = static_cast<__int128>(e.processes) * e.threads;
  const __int128 rounds = (static_cast<__int128>(e.items_left) + in_flight - 1) / in_flight;
  e.in_ms = clamped_in(rounds * e.item_ms, now_ms);
  e.at_ms = now_ms + e.in_ms;
  e.basis = "job " + p.id.str() + " ends in " + about(e.in_ms) + ": " + plural(e.items_left, "item", "items") +
            " left, " + plural(e.processes, "process", "processes") +
            (e.threads > 1 ? " x " + std::to_string(e.threads) + " threads" : "") + ", " + seconds_text(e.item_ms) +
            " per item";
  return e;
}

std::optional<start_estimate> estimate_start(const start_query& q) {
  if (q.order <= 0 || q.processes <= 0) return std::nullopt;

  // Free quanta per candidate machine (never negative, never more than the machine) and what fits there.
  std::vector<int> free(q.machines.size(), 0);
  const auto fits = [&](std::size_t m) {
    const int order = q.machines[m].order;
    if (order <= 0) return 0;
    if (q.whole_machine) return free[m] >= order ? 1 : 0;
    return free[m] / q.order;
  };
  start_estimate est;
  est.processes = q.processes;
  std::int64_t fitting = 0;
  for (std::size_t m = 0; m < q.machines.size(); ++m) {
    free[m] = std::clamp(q.machines[m].free_quanta, 0, std::max(0, q.machines[m].order));
    est.free_quanta_now += free[m];
    fitting += fits(m);
  }

  // The releases in time order; at one time preemptions first (they are already under way), then by job id
  // and machine name, so the basis names the same things for the same state.
  struct event {
    std::int64_t at_ms;
    const space_release* release;
  };
  std::vector<event> events;
  for (const auto& r : q.releases) {
    if (r.machine >= q.machines.size() || r.quanta <= 0) continue;
    std::int64_t at = q.now_ms;
    if (r.kind == release_kind::reclaim) at = std::max(q.now_ms, r.at_ms);
    if (r.kind == release_kind::job_end) {
      auto it = q.job_ends.find(r.job);
      if (it == q.job_ends.end()) continue;
      at = std::max(q.now_ms, it->second.at_ms);
    }
    events.push_back({at, &r});
  }
  std::sort(events.begin(), events.end(), [&](const event& a, const event& b) {
    const auto key = [&](const event& e) {
      return std::tie(e.at_ms, e.release->kind, e.release->job, q.machines[e.release->machine].name);
    };
    return key(a) < key(b);
  });

  // Walk forward; `counted` is how many events the reported times rest on.
  std::optional<std::int64_t> first, all;
  std::size_t counted = 0;
  if (fitting >= 1) first = q.now_ms;
  if (fitting >= q.processes) all = q.now_ms;
  for (std::size_t i = 0; i < events.size() && !all; ++i) {
    const auto& r = *events[i].release;
    fitting -= fits(r.machine);
    free[r.machine] = std::min(free[r.machine] + r.quanta, std::max(0, q.machines[r.machine].order));
    fitting += fits(r.machine);
    if (!first && fitting >= 1) {
      first = events[i].at_ms;
      counted = i + 1;
    }
    if (fitting >= q.processes) {
      all = events[i].at_ms;
      counted = i + 1;
    }
  }
  if (!first) return std::nullopt;

  est.first_at_ms = *first;
  est.first_in_ms = *first - q.now_ms;
  if (all) {
    est.all_at_ms = *all;
    est.all_in_ms = *all - q.now_ms;
  }
  for (std::size_t i = 0; i < counted; ++i) {
    const auto& r = *events[i].release;
    if (r.kind == release_kind::preemption) ++est.preemptions;
    else if (r.kind == release_kind::reclaim) ++est.reclaims;
    else if (std::find(est.jobs_ending.begin(), est.jobs_ending.end(), r.job) == est.jobs_ending.end())
      est.jobs_ending.push_back(r.job);
  }

  std::vector<std::string> parts;
  if (est.free_quanta_now > 0) parts.push_back(plural(est.free_quanta_now, "quantum", "quanta") + " free now");
  if (est.preemptions > 0)
    parts.push_back(plural(est.preemptions, "preemption", "preemptions") +
                    " under way (their space frees once the orchestrator confirms them gone)");
  if (est.reclaims > 0)
    parts.push_back(plural(est.reclaims, "process", "processes") + " preempted at the end of a reclaim grace period");
  for (const auto& j : est.jobs_ending) parts.push_back(q.job_ends.at(j).basis);
  for (std::size_t i = 0; i < parts.size(); ++i) est.basis += (i == 0 ? "" : "; ") + parts[i];
  return est;
}

}  // namespace rmbus::core
