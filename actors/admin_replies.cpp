#include "actors/admin_replies.hpp"

#include <algorithm>

#include "actors/admin_values.hpp"

namespace rmbus::actors {

std::vector<std::string> restarting_pools(const gathered_answers& a) {
  std::vector<std::string> out;
  for (const auto& [from, m] : a)
    if (from != eviction_answer && bool_of(m, "restarting")) out.push_back(from);
  return out;
}

value::array pool_entries(const gathered_answers& a) {
  value::array pools;
  for (const auto& [from, m] : a) {
    if (from == eviction_answer) continue;
    auto entry = m;
    entry["pool"] = value{from};
    pools.emplace_back(std::move(entry));
  }
  return pools;
}

const std::vector<std::string>& job_states() {
  static const std::vector<std::string> states{"scheduled", "pending", "refused"};
  return states;
}

value::array job_rows(const gathered_answers& a, const std::map<std::string, messages::refused_work>& refused,
                      const value::map& filters) {
  std::map<std::string, value> by_id;
  for (const auto& [from, m] : a) {
    if (from == eviction_answer) continue;
    if (const auto* rows = array_of(m, "jobs"))
      for (const auto& r : *rows)
        if (const auto* rm = r.as_map()) {
          auto row = *rm;
          row["pool"] = value{from};
          auto id = str_of(row, "job");
          by_id.emplace(std::move(id), value{std::move(row)});
        }
  }
  const auto user = str_of(filters, "user");
  const auto state = str_of(filters, "state");
  // Refused before any pool: no class resolved, so a class filter excludes it.
  if (str_of(filters, "class").empty() && (state.empty() || state == "refused"))
    for (const auto& [id, w] : refused) {
      if (!user.empty() && w.user != user) continue;
      value::map row;
      row["job"] = value{w.id};
      row["user"] = value{w.user};
      row["class"] = value{""};
      row["pool"] = value{""};
      row["status"] = value{"refused"};
      row["reason"] = value{"unknown_class"};
      row["reason_text"] = value{w.reason};
      for (const char* k : {"order", "memory_mb", "processes", "leaving", "quanta", "given", "demand", "fair_share"})
        row[k] = value{std::int64_t{0}};
      by_id.emplace(w.id, value{std::move(row)});
    }
  value::array out;
  out.reserve(by_id.size());
  for (auto& [id, row] : by_id) out.push_back(std::move(row));
  return out;
}

namespace {
std::int64_t int_of(const value::map& m, std::string_view key) {
  auto it = m.find(key);
  if (it == m.end()) return 0;
  if (const auto* i = it->second.as_int()) return *i;
  if (const auto* u = it->second.as_uint()) return static_cast<std::int64_t>(*u);
  return 0;
}
}  // namespace

value::array user_rows(const value::array& jobs) {
  struct sums {
    std::int64_t jobs = 0, scheduled = 0, pending = 0, refused = 0, processes = 0, quanta = 0, demand = 0;
  };
  std::map<std::string, sums> by_user;
  for (const auto& j : jobs) {
    const auto* m = j.as_map();
    if (m == nullptr) continue;
    auto& s = by_user[str_of(*m, "user")];
    ++s.jobs;
    const auto status = str_of(*m, "status");
    ++(status == "scheduled" ? s.scheduled : status == "pending" ? s.pending : s.refused);
    s.processes += int_of(*m, "processes");
    s.quanta += int_of(*m, "quanta");
    s.demand += int_of(*m, "demand");
  }
  value::array out;
  for (const auto& [user, s] : by_user) {
    value::map m;
    m["user"] = value{user};
    m["jobs"] = value{s.jobs};
    m["scheduled"] = value{s.scheduled};
    m["pending"] = value{s.pending};
    m["refused"] = value{s.refused};
    m["processes"] = value{s.processes};
    m["quanta"] = value{s.quanta};
    m["demand"] = value{s.demand};
    out.emplace_back(std::move(m));
  }
  return out;
}

void add_status_counts(const gathered_answers& a, value::map& r) {
  std::int64_t scheduled = 0, pending = 0, refused = 0, schedulable = 0;
  for (const auto& [from, m] : a) {
    if (from == eviction_answer) continue;
    if (const auto* j = map_of(m, "jobs")) {
      scheduled += int_of(*j, "scheduled");
      pending += int_of(*j, "pending");
      refused += int_of(*j, "refused");
    }
    schedulable += int_of(m, "schedulable");
  }
  value::map jobs;
  jobs["total"] = value{scheduled + pending + refused};
  jobs["scheduled"] = value{scheduled};
  jobs["pending"] = value{pending};
  jobs["refused"] = value{refused};
  r["jobs"] = value{std::move(jobs)};
  auto ev = a.find(eviction_answer);
  value::map nodes;
  if (ev != a.end())
    if (const auto* n = map_of(ev->second, "nodes")) nodes = *n;
  nodes["schedulable"] = value{schedulable};
  r["nodes"] = value{std::move(nodes)};
}

}  // namespace rmbus::actors
