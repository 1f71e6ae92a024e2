#include "actors/pool_queries.hpp"

#include <fnmatch.h>

#include <algorithm>

#include "actors/admin_values.hpp"
#include "actors/internal.hpp"
#include "core/unmet_demand.hpp"

namespace rmbus::actors {

namespace {

value by_order(const std::map<int, std::int64_t>& m) {
  value::map out;
  for (const auto& [o, n] : m) out[std::to_string(o)] = value{n};
  return value{std::move(out)};
}

value explanation_of(const core::job_explanation& e) {
  value::map m;
  m["job"] = value{e.id.str()};
  m["known"] = value{e.known};
  m["class"] = value{e.class_name};
  m["order"] = value{static_cast<std::int64_t>(e.order)};
  m["demand"] = value{e.demand};
  m["cap"] = value{e.cap.cap};
  m["cap_decided_by"] = value{std::string{e.cap.decided_by}};
  m["pure_fair_share"] = value{e.pure_fair_share};
  m["given"] = value{static_cast<std::int64_t>(e.given)};
  m["placed"] = value{static_cast<std::int64_t>(e.placed)};
  m["preempting"] = value{static_cast<std::int64_t>(e.preempting)};
  if (e.reclaiming > 0) m["reclaiming"] = value{static_cast<std::int64_t>(e.reclaiming)};  // under a reclaim grace
  m["reason"] = value{std::string{core::to_string(e.reason)}};
  m["blocked"] = value{e.blocked};
  // Optional: present only when the estimate has something to rest on.
  if (e.estimated_end) m["estimated_end"] = to_value(*e.estimated_end);
  if (e.estimated_start) m["estimated_start"] = to_value(*e.estimated_start);
  m["text"] = value{e.text()};
  if (!e.group.empty()) m["group"] = value{e.group};
  if (!e.held_back.empty()) {  // below its fair share: by design, starvation, or blocked (issue 17)
    m["held_back"] = value{e.held_back};
    m["held_back_kind"] = value{e.held_back_kind};
    m["held_back_text"] = value{e.held_back_text};
  }
  if (!e.path.empty()) {
    value::array path;
    for (const auto& l : e.path) {
      value::map lm;
      lm["level"] = value{l.level};
      lm["name"] = value{l.name};
      lm["weight"] = value{static_cast<std::int64_t>(l.weight)};
      lm["priority"] = value{static_cast<std::int64_t>(l.priority)};
      lm["demand_quanta"] = value{l.demand_qshares};
      lm["cap_quanta"] = value{l.demand_qshares};  // the job caps' quanta: qload's CAP, under its own name
      lm["awarded_quanta"] = value{l.awarded_qshares};
      path.emplace_back(std::move(lm));
    }
    m["path"] = value{std::move(path)};
  }
  return value{std::move(m)};
}

// qload: per class and order the job caps (`cap_by_order`, and under its first name `demand_by_order`) and
// How Much's counts; share groups when configured; the demand no machine can meet; the pool's totals.
value::map qload_of(const core::nodepool_scheduler& s) {
  value::map r;
  const auto v = s.view();
  value::array classes;
  for (const auto& c : v.classes) {
    value::map cm;
    cm["class"] = value{c.name};
    cm["priority"] = value{static_cast<std::int64_t>(c.priority)};
    cm["weight"] = value{static_cast<std::int64_t>(c.weight)};
    cm["demand_by_order"] = by_order(c.demand_by_order);
    cm["cap_by_order"] = by_order(c.demand_by_order);
    cm["awarded_by_order"] = by_order(c.awarded_by_order);
    classes.emplace_back(std::move(cm));
  }
  r["quantum_mb"] = value{v.quantum_mb};
  r["classes"] = value{std::move(classes)};
  if (!v.groups.empty()) {  // only with share groups configured
    value::array groups;
    for (const auto& g : v.groups) {
      value::map gm;
      gm["class"] = value{g.class_name};
      gm["group"] = value{g.name};
      gm["parent"] = value{g.parent};
      gm["depth"] = value{static_cast<std::int64_t>(g.depth)};
      gm["weight"] = value{static_cast<std::int64_t>(g.weight)};
      gm["priority"] = value{static_cast<std::int64_t>(g.priority)};
      gm["demand_by_order"] = by_order(g.demand_by_order);
      gm["cap_by_order"] = by_order(g.demand_by_order);
      gm["awarded_by_order"] = by_order(g.awarded_by_order);
      gm["pure_fair_share_quanta"] = value{g.pure_fair_share_qshares};
      groups.emplace_back(std::move(gm));
    }
    r["groups"] = value{std::move(groups)};
  }
  value::array unmet;
  for (const auto& u : v.unmet) {
    value::map um;
    um["class"] = value{u.class_name};
    um["order"] = value{static_cast<std::int64_t>(u.order)};
    um["jobs"] = value{u.jobs};
    um["processes"] = value{u.processes};
    um["reason"] = value{std::string{core::to_string(u.reason)}};
    um["text"] = value{u.text};
    unmet.emplace_back(std::move(um));
  }
  r["unmet"] = value{std::move(unmet)};
  std::int64_t total = 0, free = 0, up = 0;
  for (const auto& mv : v.machines) {
    if (mv.state != core::machine_state::up) continue;
    ++up;
    total += mv.quanta;
    free += mv.free_quanta;
  }
  r["nodes_up"] = value{up};
  r["quanta"] = value{total};
  r["free_quanta"] = value{free};
  return r;
}

// qoccupancy's filters: `state` (a machine state, or "drained" / "quiesced" for the flags) and `node` (a shell
// pattern, fnmatch(3)); absent: every machine.
bool machine_wanted(const core::machine_view& m, const value::map& args) {
  const auto state = str_of(args, "state");
  if (!state.empty() && state != core::to_string(m.state) && !(state == "drained" && m.drained) &&
      !(state == "quiesced" && m.quiesced))
    return false;
  const auto pattern = str_of(args, "node");
  return pattern.empty() || ::fnmatch(pattern.c_str(), m.name.str().c_str(), 0) == 0;
}

value::map qoccupancy_of(const core::nodepool_scheduler& s, const value::map& args) {
  auto v = s.view();
  std::erase_if(v.machines, [&](const core::machine_view& m) { return !machine_wanted(m, args); });
  value::map r;
  r["quantum_mb"] = value{v.quantum_mb};
  r["nodes"] = machines_of(v);
  return r;
}

// jobs: one row per job of the last round, filtered by `user`, `class` and `state` (scheduled, pending,
// refused) when given.
value::map jobs_of(const core::schedule_plan* plan, const value::map& args) {
  value::array rows;
  const auto user = str_of(args, "user");
  const auto cls = str_of(args, "class");
  const auto state = str_of(args, "state");
  if (plan != nullptr)
    for (const auto& j : plan->jobs) {
      if ((!user.empty() && j.user.str() != user) || (!cls.empty() && j.class_name != cls) ||
          (!state.empty() && core::to_string(j.status) != state))
        continue;
      std::int64_t processes = 0, leaving = 0;
      for (const auto& sh : j.shares) {
        const bool going = sh.status == core::share_status::preempt || sh.status == core::share_status::evict;
        ++(going ? leaving : processes);
      }
      value::map m;
      m["job"] = value{j.id.str()};
      m["user"] = value{j.user.str()};
      m["class"] = value{j.class_name};
      m["status"] = value{std::string{core::to_string(j.status)}};
      m["reason"] = value{std::string{core::to_string(j.reason)}};
      m["reason_text"] = value{j.reason_text};
      m["order"] = value{static_cast<std::int64_t>(j.order)};
      m["memory_mb"] = value{j.memory_mb_per_process};
      m["processes"] = value{processes};
      m["leaving"] = value{leaving};
      m["quanta"] = value{processes * j.order};
      m["given"] = value{static_cast<std::int64_t>(j.given)};
      m["demand"] = value{j.demand};
      m["fair_share"] = value{j.fair_share};
      rows.emplace_back(std::move(m));
    }
  value::map r;
  r["jobs"] = value{std::move(rows)};
  return r;
}

// status: the pool's jobs by status and its machines, as of its last round.
value::map status_of(const core::nodepool_scheduler& s, const core::schedule_plan* plan) {
  value::map jobs;
  std::int64_t scheduled = 0, pending = 0, refused = 0;
  if (plan != nullptr)
    for (const auto& j : plan->jobs) {
      if (j.status == core::job_status::scheduled) ++scheduled;
      else if (j.status == core::job_status::pending) ++pending;
      else ++refused;
    }
  jobs["scheduled"] = value{scheduled};
  jobs["pending"] = value{pending};
  jobs["refused"] = value{refused};
  std::int64_t known = 0, schedulable = 0;
  for (std::size_t i = 0; i < s.machine_count(); ++i) {
    const auto b = s.machine_at(i);
    if (b.foreign) continue;
    ++known;
    if (b.state == core::machine_state::up && !b.quiesced && !b.drained) ++schedulable;
  }
  value::map r;
  r["jobs"] = value{std::move(jobs)};
  r["machines"] = value{known};
  r["schedulable"] = value{schedulable};
  if (plan != nullptr) r["last_round_at_ms"] = value{plan->now_ms};
  return r;
}

}  // namespace

bool needs_a_round(const std::string& cmd) { return cmd != "status"; }

value::map answer_pool_query(const core::nodepool_scheduler& s, const core::schedule_plan* last_plan,
                             const std::string& cmd, const value::map& args) {
  value::map r;
  if (cmd == "qload") return qload_of(s);
  if (cmd == "qoccupancy") return qoccupancy_of(s, args);
  if (cmd == "jobs") return jobs_of(last_plan, args);
  if (cmd == "status") return status_of(s, last_plan);
  if (cmd == "explain") {
    r["explanation"] = explanation_of(s.explain(core::job_id{str_of(args, "job")}));
  } else if (cmd == "whatif") {
    auto it = args.find("work");
    auto w = it == args.end() ? messages::result<messages::work_item>{messages::decode_error{"admin", "work", "missing"}}
                              : work_item_of("admin", it->second);
    if (!w) {
      r["error"] = value{w.error().message()};
      return r;
    }
    const auto res = s.whatif(to_core(w.value()));
    r["plan"] = to_value(res.plan);
    r["explanation"] = explanation_of(res.explanation);
    value::array pre;
    for (const auto& p : res.preempted) {
      value::map pm;
      pm["job"] = value{p.job.str()};
      pm["share"] = value{p.share.str()};
      pm["node"] = value{p.node.str()};
      pre.emplace_back(std::move(pm));
    }
    r["would_preempt"] = value{std::move(pre)};
  } else {
    r["error"] = value{"pool scheduler cannot answer '" + cmd + "'"};
  }
  return r;
}

}  // namespace rmbus::actors
