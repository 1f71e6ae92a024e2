#include "tools/admin/admin_output.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "tools/admin/clock_text.hpp"

namespace rmbus::tools::admin {

namespace {

using messages::value;

const value* field(const value::map& m, std::string_view key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}
std::string str(const value::map& m, std::string_view key) {
  const auto* v = field(m, key);
  const auto* s = v ? v->as_string() : nullptr;
  return s ? *s : std::string{};
}
// Integers of either sign as text; "" when absent.
std::string num(const value::map& m, std::string_view key) {
  const auto* v = field(m, key);
  if (v == nullptr) return {};
  if (const auto* u = v->as_uint()) return std::to_string(*u);
  if (const auto* i = v->as_int()) return std::to_string(*i);
  return {};
}
std::uint64_t unum(const value::map& m, std::string_view key) {
  const auto* v = field(m, key);
  const auto* u = v ? v->as_uint() : nullptr;
  return u ? *u : 0;
}
bool flag(const value::map& m, std::string_view key) {
  const auto* v = field(m, key);
  const auto* b = v ? v->as_bool() : nullptr;
  return b != nullptr && *b;
}
const value::array& list(const value::map& m, std::string_view key) {
  static const value::array none;
  const auto* v = field(m, key);
  const auto* a = v ? v->as_array() : nullptr;
  return a ? *a : none;
}
const value::map& sub(const value::map& m, std::string_view key) {
  static const value::map none;
  const auto* v = field(m, key);
  const auto* s = v ? v->as_map() : nullptr;
  return s ? *s : none;
}
std::vector<std::string> strings(const value::map& m, std::string_view key) {
  std::vector<std::string> out;
  for (const auto& e : list(m, key))
    if (const auto* s = e.as_string()) out.push_back(*s);
  return out;
}

nlohmann::json to_json(const value& v) {
  switch (v.type()) {
    case value::kind::nil:
      return nullptr;
    case value::kind::boolean:
      return *v.as_bool();
    case value::kind::integer:
      return *v.as_int();
    case value::kind::unsigned_integer:
      return *v.as_uint();
    case value::kind::floating:
      return *v.as_double();
    case value::kind::string:
      return *v.as_string();
    case value::kind::array: {
      auto a = nlohmann::json::array();
      for (const auto& e : *v.as_array()) a.push_back(to_json(e));
      return a;
    }
    case value::kind::map: {
      auto o = nlohmann::json::object();
      for (const auto& [k, e] : *v.as_map()) o[k] = to_json(e);
      return o;
    }
  }
  return nullptr;
}

// Columns padded to their widest cell; numbers right-aligned, text left-aligned; the last column unpadded.
class table {
 public:
  explicit table(std::vector<std::string> header, std::vector<bool> right) : right_(std::move(right)) {
    rows_.push_back(std::move(header));
  }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.size() == 1; }
  std::string text() const {
    std::vector<std::size_t> w(rows_.front().size(), 0);
    for (const auto& r : rows_)
      for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
    std::string out;
    for (const auto& r : rows_) {
      std::string line;
      for (std::size_t i = 0; i < r.size(); ++i) {
        const bool last = i + 1 == r.size();
        const auto pad = std::string(w[i] - r[i].size(), ' ');
        if (i > 0) line += "  ";
        if (right_[i])
          line += pad + r[i];
        else
          line += last ? r[i] : r[i] + pad;
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

std::string join(const std::vector<std::string>& parts, std::string_view sep = ", ") {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string{sep}) + p;
  return out;
}

// "label" padded to the status table's first column.
std::string label(std::string_view l) { return std::string{l} + std::string(l.size() < 12 ? 12 - l.size() : 1, ' '); }

std::string seconds_ago(std::uint64_t ms) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  o << static_cast<double>(ms) / 1000.0 << " s ago";
  return o.str();
}

std::string status_text(const value::map& r, std::int64_t now_ms) {
  std::ostringstream o;
  const auto up_ms = unum(r, "uptime_ms");
  o << label("instance") << str(r, "instance") << "\n";
  if (field(r, "version") != nullptr) o << label("version") << str(r, "version") << "\n";
  o << label("cycle") << num(r, "cycle") << "\n";
  if (field(r, "last_round_at_ms") != nullptr)
    o << label("last round") << seconds_ago(unum(r, "last_round_ms_ago")) << " (at "
      << clock_time(static_cast<std::int64_t>(unum(r, "last_round_at_ms")), now_ms) << ")\n";
  else
    o << label("last round") << "none yet\n";
  o << label("uptime") << up_ms / 1000 << " s\n";
  // Why no round runs (or that rounds run), as the RM's work-map differencing last said.
  if (const auto& sc = sub(r, "scheduling"); field(sc, "text") != nullptr)
    o << label("scheduling") << str(sc, "text") << "\n";
  std::string pools = join(strings(r, "pools"));
  if (const auto restarting = strings(r, "restarting"); !restarting.empty())
    pools += " (restarting, no round since: " + join(restarting) + ")";
  if (const auto silent = strings(r, "unanswered"); !silent.empty()) pools += " (no answer: " + join(silent) + ")";
  o << label("pools") << pools << "\n";
  if (const auto& n = sub(r, "nodes"); field(n, "expected") != nullptr) {
    o << label("nodes") << num(n, "up") << " up, " << num(n, "missing") << " missing, " << num(n, "down")
      << " down of " << num(n, "expected") << " expected";
    if (unum(n, "never_seen") > 0) o << " (" << num(n, "never_seen") << " never seen)";
    o << "; " << num(n, "schedulable") << " schedulable, " << num(n, "varied_off") << " varied off, "
      << num(n, "drained") << " drained\n";
  }
  if (const auto& j = sub(r, "jobs"); field(j, "total") != nullptr)
    o << label("jobs") << num(j, "total") << ": " << num(j, "scheduled") << " scheduled, " << num(j, "pending")
      << " pending, " << num(j, "refused") << " refused\n";
  if (const auto& s = sub(r, "safety"); field(s, "guard_refusals") != nullptr) {
    o << label("safety") << num(s, "guard_refusals") << " plan(s) refused by the guard, "
      << num(s, "over_order_repairs") << " node(s) brought back under their order\n";
    if (unum(s, "guard_refusals") > 0)
      o << label("warning") << "the publication guard refused a plan that would put a node above its order (see "
        << "the invariant_violation events and the log): report it, the core should never plan so\n";
  }
  // With [ha] enabled: this process's role and epoch, the active it heard, and the peers heard.
  if (field(r, "role") != nullptr) {
    o << label("role") << str(r, "role") << "\n"
      << label("epoch") << num(r, "epoch") << "\n"
      << label("rank") << num(r, "rank") << "\n";
    if (field(r, "active") != nullptr)
      o << label("active") << str(r, "active")
        << (field(r, "active_admin") != nullptr ? " (admin " + str(r, "active_admin") + ")" : std::string{}) << "\n";
    for (const auto& p : list(r, "peers"))
      if (const auto* m = p.as_map())
        o << label("peer") << str(*m, "instance") << "  " << str(*m, "state") << "  rank " << num(*m, "rank")
          << "  epoch " << num(*m, "epoch") << "  heard " << num(*m, "heard_ms_ago") << " ms ago\n";
    for (const auto& i : strings(r, "rank_conflicts"))
      o << label("warning") << i << " has this RM's rank " << num(r, "rank")
        << ": two candidates of one rank can coin the same epoch; give each its own [ha] rank\n";
    if (field(r, "ha_warning") != nullptr) o << label("warning") << str(r, "ha_warning") << "\n";
  }
  return o.str();
}

// vary-off, vary-on, drain, undrain: one row per node named.
std::string vary_text(std::string_view cmd, const value::map& r) {
  const bool off = cmd == "vary_off";
  table t{{"NODE", "RESULT"}, {false, false}};
  // `nodes` lists every known node of the request; `already` those of them that were so before it;
  // `never_seen` those the configuration expects that have not reported (the mark waits for them).
  const auto already = strings(r, "already");
  const auto never_seen = strings(r, "never_seen");
  std::map<std::string, std::uint64_t> running;  // drain: shares running on each node
  for (const auto& e : list(r, "running"))
    if (const auto* m = e.as_map()) running[str(*m, "node")] = unum(*m, "shares");
  const auto done = [&](const std::string& n) -> std::string {
    const auto in = [&](const std::vector<std::string>& xs) { return std::find(xs.begin(), xs.end(), n) != xs.end(); };
    if (in(already)) {
      if (cmd == "vary_off") return "already varied off";
      if (cmd == "vary_on") return "already schedulable (was not varied off)";
      if (cmd == "drain") return "already drained";
      return "already schedulable (was not drained)";
    }
    std::string text = cmd == "vary_off" ? "varied off" : cmd == "vary_on" ? "varied on" : cmd == "drain" ? "drained" : "undrained";
    if (cmd == "drain" && !in(never_seen)) {
      const auto k = running.count(n) ? running.at(n) : 0;
      text += k == 0 ? ": no new work; nothing running" : ": no new work; " + std::to_string(k) + " share(s) still running";
    }
    if (in(never_seen)) text += " (never seen yet: applies when it first reports)";
    return text;
  };
  for (const auto& n : strings(r, "nodes")) t.add({n, done(n)});
  for (const auto& n : strings(r, "unknown"))
    t.add({n, "unknown: never heard of (no heartbeat, no recovered process); nothing done"});
  std::string out = t.text();
  // What a vary-off evicted, by job: "evicted 8 shares: alice-1 8 (a1 8)".
  const auto& evicted = list(r, "evicted");
  if (off && field(r, "evicted") != nullptr) {
    std::map<std::string, std::map<std::string, int>> by_job;  // job -> node -> shares
    for (const auto& e : evicted)
      if (const auto* m = e.as_map()) ++by_job[str(*m, "job")][str(*m, "node")];
    if (by_job.empty()) {
      out += "evicted nothing\n";
    } else {
      out += "evicted " + std::to_string(evicted.size()) + " share(s):\n";
      table j{{"  JOB", "SHARES", "ON"}, {false, true, false}};
      for (const auto& [job, nodes] : by_job) {
        int total = 0;
        std::vector<std::string> on;
        for (const auto& [node, n] : nodes) {
          total += n;
          on.push_back(node + " " + std::to_string(n));
        }
        j.add({"  " + job, std::to_string(total), join(on)});
      }
      out += j.text();
    }
  }
  return out;
}

std::string orders_cell(int order, std::uint64_t quantum_mb) {
  return std::to_string(order) + " (" + gb_text(static_cast<std::uint64_t>(order) * quantum_mb) + ")";
}

std::map<int, std::string> by_order(const value::map& m) {
  std::map<int, std::string> out;
  for (const auto& [k, v] : m) {
    try {
      const int order = std::stoi(k);
      if (const auto* u = v.as_uint())
        out[order] = std::to_string(*u);
      else if (const auto* i = v.as_int())
        out[order] = std::to_string(*i);
    } catch (const std::exception&) {
      // a key that is not an order: not ours to show
    }
  }
  return out;
}

std::string qload_text(const value::map& r) {
  std::string out;
  table pools{{"POOL", "QUANTUM", "NODES UP", "QUANTA", "FREE"}, {false, true, true, true, true}};
  // CAP: what the job caps allow (processes, by order): what How Much was asked to give. Not "demand", which
  // everywhere else (explain, rmbus-top, rmbus-web, rm.state) is what the remaining work could use.
  bool any_unmet = false;
  for (const auto& p : list(r, "pools"))
    if (const auto* pm = p.as_map()) any_unmet = any_unmet || !list(*pm, "unmet").empty();
  std::vector<std::string> class_header{"POOL", "CLASS", "PRIORITY", "WEIGHT", "ORDER", "CAP", "AWARDED"};
  std::vector<bool> class_right{false, false, true, true, true, true, true};
  if (any_unmet) {
    class_header.push_back("UNMET BECAUSE");
    class_right.push_back(false);
  }
  table classes{class_header, class_right};
  table groups{{"POOL", "CLASS", "GROUP", "PARENT", "WEIGHT", "ORDER", "CAP", "AWARDED", "FAIR SHARE"},
               {false, false, false, false, true, true, true, true, true}};
  for (const auto& p : list(r, "pools")) {
    const auto* pm = p.as_map();
    if (pm == nullptr) continue;
    const auto pool = str(*pm, "pool");
    const auto q = unum(*pm, "quantum_mb");
    pools.add({pool, gb_text(q), num(*pm, "nodes_up"), num(*pm, "quanta"), num(*pm, "free_quanta")});
    // The demand no machine can meet, by class and order: (processes, why).
    std::map<std::string, std::map<int, std::pair<std::string, std::string>>> unmet;
    for (const auto& u : list(*pm, "unmet"))
      if (const auto* um = u.as_map()) {
        const auto jobs = unum(*um, "jobs");
        unmet[str(*um, "class")][static_cast<int>(unum(*um, "order"))] = {
            num(*um, "processes"), (jobs > 1 ? std::to_string(jobs) + " jobs: " : std::string{}) + str(*um, "text")};
      }
    auto rows = [&](table& t, const value::map& c, std::vector<std::string> lead, std::vector<std::string> tail,
                    const std::map<int, std::pair<std::string, std::string>>* class_unmet) {
      // The caps under their own name, else under the name they had first.
      const auto cap = by_order(sub(c, field(c, "cap_by_order") != nullptr ? "cap_by_order" : "demand_by_order"));
      const auto awarded = by_order(sub(c, "awarded_by_order"));
      std::map<int, bool> orders;
      for (const auto& [o, _] : cap) orders[o] = true;
      for (const auto& [o, _] : awarded) orders[o] = true;
      if (class_unmet != nullptr)
        for (const auto& [o, _] : *class_unmet) orders[o] = true;
      if (orders.empty()) orders[0] = true;
      for (const auto& [o, _] : orders) {
        const auto* why = class_unmet != nullptr && class_unmet->count(o) ? &class_unmet->at(o) : nullptr;
        auto row = lead;
        row.push_back(o == 0 ? "-" : orders_cell(o, q));
        row.push_back(cap.count(o) ? cap.at(o) : why != nullptr ? why->first : "0");
        row.push_back(awarded.count(o) ? awarded.at(o) : "0");
        for (const auto& x : tail) row.push_back(x);
        if (class_unmet != nullptr && any_unmet) row.push_back(why != nullptr ? why->second : "");
        t.add(std::move(row));
      }
    };
    for (const auto& c : list(*pm, "classes"))
      if (const auto* cm = c.as_map()) {
        const auto name = str(*cm, "class");
        auto it = unmet.find(name);
        static const std::map<int, std::pair<std::string, std::string>> none;
        rows(classes, *cm, {pool, name, num(*cm, "priority"), num(*cm, "weight")}, {},
             it == unmet.end() ? &none : &it->second);
        if (it != unmet.end()) unmet.erase(it);
      }
    // A class whose only work no machine can hold has no load of its own.
    for (const auto& [name, by] : unmet) rows(classes, value::map{}, {pool, name, "-", "-"}, {}, &by);
    for (const auto& g : list(*pm, "groups"))
      if (const auto* gm = g.as_map())
        rows(groups, *gm,
             {pool, str(*gm, "class"), str(*gm, "group"), str(*gm, "parent"), num(*gm, "weight")},
             {num(*gm, "pure_fair_share_quanta")}, nullptr);
  }
  out += pools.text() + "\n";
  out += classes.empty() ? "no class has work\n" : classes.text();
  if (!groups.empty()) out += "\n" + groups.text();  // only where share groups are configured
  return out;
}

std::string qoccupancy_text(const value::map& r, bool details) {
  table t{{"NODE", "POOL", "NODEPOOL", "STATE", "MEMORY", "QUANTA", "FREE", "SHARES", "JOBS"},
          {false, false, false, false, true, true, true, true, false}};
  std::string shares_detail;
  for (const auto& p : list(r, "pools")) {
    const auto* pm = p.as_map();
    if (pm == nullptr) continue;
    const auto pool = str(*pm, "pool");
    for (const auto& n : list(*pm, "nodes")) {
      const auto* nm = n.as_map();
      if (nm == nullptr) continue;
      auto state = str(*nm, "state");
      const bool quiesced = flag(*nm, "quiesced");
      const bool drained = flag(*nm, "drained");
      if (quiesced) state += " (quiesced)";
      // Slurm's words: draining while its work runs on, drained once it is empty.
      if (drained) state += list(*nm, "shares").empty() ? " (drained)" : " (draining)";
      // Free quanta only where new work can go: a varied-off, down, blacklisted, quiescing or drained node has
      // none.
      const bool schedulable = str(*nm, "state") == "up" && !quiesced && !drained;
      std::map<std::string, int> jobs, leaving;
      std::size_t count = 0;
      for (const auto& s : list(*nm, "shares")) {
        const auto* sm = s.as_map();
        if (sm == nullptr) continue;
        ++count;
        ++jobs[str(*sm, "job")];
        if (str(*sm, "status") == "preempt" || str(*sm, "status") == "evict") ++leaving[str(*sm, "job")];
        if (details)
          shares_detail += "  " + str(*nm, "node") + "  share " + str(*sm, "share") + "  job " +
                           str(*sm, "job") + "  quanta " + num(*sm, "quanta") + "  " + str(*sm, "status") +
                           "\n";
      }
      std::vector<std::string> job_cells;
      // "alice-1 x8 (8 leaving)": shares being preempted or evicted stay listed until their processes end.
      for (const auto& [j, k] : jobs)
        job_cells.push_back((k > 1 ? j + " x" + std::to_string(k) : j) +
                            (leaving.count(j) ? " (" + std::to_string(leaving.at(j)) + " leaving)" : ""));
      t.add({str(*nm, "node"), pool, str(*nm, "nodepool"), state, gb_text(unum(*nm, "memory_mb")),
             num(*nm, "quanta"), schedulable ? num(*nm, "free_quanta") : "-", std::to_string(count),
             join(job_cells, " ")});
    }
  }
  // Nodes the configuration names that never reported: nothing is known of them but their marks.
  for (const auto& n : list(r, "never_seen"))
    if (const auto* nm = n.as_map()) {
      std::string state = "never seen";
      for (const auto& m : strings(*nm, "marks")) state += m == "varied_off" ? " (varied off)" : " (" + m + ")";
      t.add({str(*nm, "node"), str(*nm, "pool"), str(*nm, "nodepool"), state, "-", "-", "-", "0", ""});
    }
  std::string out = t.empty() ? "no nodes\n" : t.text();
  if (details && !shares_detail.empty()) out += "\nshares:\n" + shares_detail;
  return out;
}

std::string explanation_text(const value::map& r, std::int64_t now_ms) {
  std::string out;
  if (!str(r, "pool").empty()) out += "pool " + str(r, "pool") + "\n";
  out += with_clock_times(str(sub(r, "explanation"), "text"), now_ms);
  if (!out.empty() && out.back() != '\n') out += "\n";
  return out;
}

std::string whatif_text(const value::map& r, std::int64_t now_ms) {
  const auto& plan = sub(r, "plan");
  std::string out = "would be " + str(plan, "status");
  out += ": " + num(plan, "given") + " process(es) of order " + num(plan, "order") + " (" +
         gb_text(unum(plan, "memory_mb")) + " each)";
  if (!str(plan, "reason").empty()) out += "; " + str(plan, "reason");
  out += "\n";
  std::map<std::string, int> on;
  for (const auto& s : list(plan, "shares"))
    if (const auto* sm = s.as_map()) ++on[str(*sm, "node")];
  if (!on.empty()) {
    std::vector<std::string> cells;
    for (const auto& [n, k] : on) cells.push_back(n + " " + std::to_string(k));
    out += "placed on: " + join(cells) + "\n";
  }
  const auto& pre = list(r, "would_preempt");
  if (!pre.empty()) {
    out += "would preempt " + std::to_string(pre.size()) + " process(es):\n";
    table t{{"  JOB", "SHARE", "NODE"}, {false, false, false}};
    for (const auto& p : pre)
      if (const auto* pm = p.as_map()) t.add({"  " + str(*pm, "job"), str(*pm, "share"), str(*pm, "node")});
    out += t.text();
  }
  return out + explanation_text(r, now_ms);
}

// jobs: one row per job, as squeue lists them; DEMAND is what its remaining work could use.
std::string jobs_text(const value::map& r) {
  table t{{"JOB", "USER", "CLASS", "POOL", "STATE", "PROCS", "MEMORY", "DEMAND", "REASON"},
          {false, false, false, false, false, true, true, true, false}};
  for (const auto& j : list(r, "jobs"))
    if (const auto* m = j.as_map())
      t.add({str(*m, "job"), str(*m, "user"), str(*m, "class").empty() ? "-" : str(*m, "class"),
             str(*m, "pool").empty() ? "-" : str(*m, "pool"), str(*m, "status"), num(*m, "processes"),
             gb_text(unum(*m, "memory_mb")), num(*m, "demand"), str(*m, "reason") == "none" ? "" : str(*m, "reason_text")});
  return t.empty() ? "no jobs\n" : t.text();
}

std::string users_text(const value::map& r) {
  table t{{"USER", "JOBS", "PENDING", "PROCS", "QUANTA", "DEMAND"}, {false, true, true, true, true, true}};
  for (const auto& u : list(r, "users"))
    if (const auto* m = u.as_map())
      t.add({str(*m, "user"), num(*m, "jobs"), num(*m, "pending"), num(*m, "processes"), num(*m, "quanta"),
             num(*m, "demand")});
  return t.empty() ? "no users\n" : t.text();
}

}  // namespace

outcome outcome_of(std::string_view cmd, const messages::admin_reply& reply) {
  if (reply.ok) return outcome::success;
  // A pool's fresh scheduler has not scheduled a round: nothing shown, ask again.
  if (const auto* v = field(reply.results, "restarting"); v != nullptr && v->as_array() && !v->as_array()->empty())
    return outcome::restarting;
  // Part of it was done: nodes varied while others were unknown, or some pools answered and some did not.
  if (cmd == "vary_off" || cmd == "vary_on" || cmd == "drain" || cmd == "undrain") {
    const auto* v = field(reply.results, "nodes");
    const auto* a = v ? v->as_array() : nullptr;
    return a != nullptr && !a->empty() ? outcome::partial : outcome::refused;
  }
  if (cmd == "jobs" || cmd == "users") return field(reply.results, cmd) != nullptr ? outcome::partial : outcome::refused;
  if (cmd == "qload" || cmd == "qoccupancy") {
    const auto* v = field(reply.results, "pools");
    const auto* a = v ? v->as_array() : nullptr;
    return a != nullptr && !a->empty() ? outcome::partial : outcome::refused;
  }
  return outcome::refused;
}

int exit_code(outcome o) {
  switch (o) {
    case outcome::success:
      return exit_success;
    case outcome::partial:
      return exit_partial;
    case outcome::refused:
      return exit_refused;
    case outcome::restarting:
      return exit_restarting;
  }
  return exit_refused;
}

std::string json_of(const messages::admin_reply& reply) {
  auto o = nlohmann::json::object();
  for (const auto& [k, v] : reply.results) o[k] = to_json(v);
  o["ok"] = reply.ok;
  if (!reply.ok) o["error"] = reply.error;
  return o.dump() + "\n";
}

std::string json_of_client_error(const std::string& error) {
  nlohmann::json o{{"ok", false}, {"error", error}, {"reached", false}};
  return o.dump() + "\n";
}

std::string text_of(std::string_view cmd, const messages::admin_reply& reply, bool details, std::int64_t now_ms) {
  const auto& r = reply.results;
  if (outcome_of(cmd, reply) == outcome::restarting) return {};  // nothing it shows would hold the running work
  if (cmd == "status") return reply.ok ? status_text(r, now_ms) : std::string{};
  if (cmd == "vary_off" || cmd == "vary_on" || cmd == "drain" || cmd == "undrain") return vary_text(cmd, r);
  if (cmd == "qload") return field(r, "pools") ? qload_text(r) : std::string{};
  if (cmd == "qoccupancy") return field(r, "pools") ? qoccupancy_text(r, details) : std::string{};
  if (cmd == "jobs") return field(r, "jobs") ? jobs_text(r) : std::string{};
  if (cmd == "users") return field(r, "users") ? users_text(r) : std::string{};
  if (cmd == "explain") return reply.ok ? explanation_text(r, now_ms) : std::string{};
  if (cmd == "whatif") return reply.ok ? whatif_text(r, now_ms) : std::string{};
  if (cmd == "handover") return reply.ok ? "handover: this RM stepped down; " + str(r, "to") + " takes over\n" : std::string{};
  if (cmd == "reconfigure") {
    if (!reply.ok) return {};
    std::string out = "reconfigured: every RM process reloads its configuration\n";
    const auto changes = strings(r, "changes");
    if (field(r, "changes") != nullptr && changes.empty()) out += "nothing changed\n";
    for (const auto& c : changes) out += "  " + c + "\n";
    return out;
  }
  return {};
}

std::string gb_text(std::uint64_t mb) {
  if (mb < 1024) return std::to_string(mb) + " MB";
  if (mb % 1024 == 0) return std::to_string(mb / 1024) + " GB";
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  o << static_cast<double>(mb) / 1024.0 << " GB";
  return o.str();
}

}  // namespace rmbus::tools::admin
