#include "tools/sim/scenario.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace rmbus::sim {

std::string_view to_string(class_policy p) {
  switch (p) {
    case class_policy::fair_share:
      return "FAIR_SHARE";
    case class_policy::fixed_share:
      return "FIXED_SHARE";
    case class_policy::reserve:
      return "RESERVE";
  }
  return "?";
}

std::vector<class_spec> embedded_default_classes() {
  // config/embedded_default.cpp: DUCC's shipped ducc.classes (abstract parents resolved).
  return {
      {"background", class_policy::fair_share, 1, 10, false},
      {"low", class_policy::fair_share, 50, 10, false},
      {"normal", class_policy::fair_share, 100, 10, true},
      {"high", class_policy::fair_share, 200, 10, false},
      {"weekly", class_policy::fair_share, 100, 10, false},
      {"urgent", class_policy::fair_share, 400, 10, false},
      {"standalone", class_policy::fair_share, 150, 10, false},
      {"fixed", class_policy::fixed_share, 100, 5, true},
      {"debug", class_policy::fixed_share, 100, 7, false},
      {"JobDriver", class_policy::fixed_share, 100, 9, false},
      {"reserve", class_policy::reserve, 100, 1, true},
  };
}

const class_spec* class_of(const std::vector<class_spec>& classes, std::string_view class_name,
                           messages::work_kind kind) {
  if (!class_name.empty()) {
    for (const auto& c : classes)
      if (c.name == class_name) return &c;
    return nullptr;
  }
  // rmbus's rule (actors/workmap_diff.cpp): jobs go to the default FAIR_SHARE class; every other kind to
  // the default RESERVE class, else the default FIXED_SHARE class.
  const std::vector<class_policy> prefs =
      kind == messages::work_kind::job
          ? std::vector<class_policy>{class_policy::fair_share}
          : std::vector<class_policy>{class_policy::reserve, class_policy::fixed_share};
  for (auto p : prefs)
    for (const auto& c : classes)
      if (c.is_default && c.policy == p) return &c;
  return nullptr;
}

namespace {

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

}  // namespace

scenario_error::scenario_error(std::vector<std::string> problems)
    : std::runtime_error(join(problems, "\n")), problems_(std::move(problems)) {}

namespace {

constexpr std::int64_t max_period_ms = 24LL * 3600 * 1000;

bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '@';
  });
}

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a decimal number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "nothing";
  }
}

// Reads values out of toml++ tables, recording every problem with the file, line and column of the value
// (or of the table, for a missing key) instead of stopping at the first.
class reader {
 public:
  explicit reader(std::string file) : file_(std::move(file)) {}

  void add(const toml::node* at, const std::string& what) {
    if (at != nullptr && at->source().begin.line > 0) {
      problems_.push_back(file_ + ":" + std::to_string(at->source().begin.line) + ":" +
                          std::to_string(at->source().begin.column) + ": " + what);
    } else {
      problems_.push_back(file_ + ": " + what);
    }
  }
  void add_at(std::uint32_t line, std::uint32_t column, const std::string& what) {
    problems_.push_back(file_ + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + what);
  }
  const std::vector<std::string>& problems() const { return problems_; }

  void only_keys(const toml::table& t, const std::string& where,
                 std::initializer_list<std::string_view> allowed) {
    for (const auto& [key, value] : t) {
      if (std::find(allowed.begin(), allowed.end(), key.str()) != allowed.end()) continue;
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      add(&value, where + ": unknown key '" + std::string(key.str()) + "' (allowed: " + list + ")");
    }
  }

  const toml::table* table(const toml::table& parent, std::string_view key, const std::string& where) {
    const toml::node* n = parent.get(key);
    if (n == nullptr) return nullptr;
    if (!n->is_table()) {
      add(n, where + ": expected a table, got " + type_name(*n));
      return nullptr;
    }
    return n->as_table();
  }

  std::optional<std::string> string(const toml::table& t, std::string_view key, const std::string& where,
                                    bool required = false) {
    const toml::node* n = t.get(key);
    if (n == nullptr) {
      if (required) add(&t, where + ": missing required key '" + std::string(key) + "'");
      return std::nullopt;
    }
    if (!n->is_string()) {
      add(n, path(where, key) + ": expected a string, got " + type_name(*n));
      return std::nullopt;
    }
    const std::string& v = n->as_string()->get();
    if (v.size() > 4096) {
      add(n, path(where, key) + ": longer than 4096 characters");
      return std::nullopt;
    }
    return v;
  }

  std::optional<std::int64_t> integer(const toml::table& t, std::string_view key, const std::string& where,
                                      std::int64_t min, std::int64_t max, bool required = false) {
    const toml::node* n = t.get(key);
    if (n == nullptr) {
      if (required) add(&t, where + ": missing required key '" + std::string(key) + "'");
      return std::nullopt;
    }
    if (!n->is_integer()) {
      add(n, path(where, key) + ": expected an integer, got " + type_name(*n));
      return std::nullopt;
    }
    const std::int64_t v = n->as_integer()->get();
    if (v < min || v > max) {
      add(n, path(where, key) + ": " + std::to_string(v) + " is out of range [" + std::to_string(min) + ", " +
                 std::to_string(max) + "]");
      return std::nullopt;
    }
    return v;
  }

  std::optional<bool> boolean(const toml::table& t, std::string_view key, const std::string& where) {
    const toml::node* n = t.get(key);
    if (n == nullptr) return std::nullopt;
    if (!n->is_boolean()) {
      add(n, path(where, key) + ": expected true or false, got " + type_name(*n));
      return std::nullopt;
    }
    return n->as_boolean()->get();
  }

  // Seconds of scenario time (integer or decimal) -> whole milliseconds.
  std::optional<std::int64_t> seconds(const toml::table& t, std::string_view key, const std::string& where,
                                      std::int64_t min_ms, std::int64_t max_ms, bool required = false) {
    const toml::node* n = t.get(key);
    if (n == nullptr) {
      if (required) add(&t, where + ": missing required key '" + std::string(key) + "'");
      return std::nullopt;
    }
    double s = 0;
    if (n->is_integer())
      s = static_cast<double>(n->as_integer()->get());
    else if (n->is_floating_point())
      s = n->as_floating_point()->get();
    else {
      add(n, path(where, key) + ": expected a number of seconds, got " + type_name(*n));
      return std::nullopt;
    }
    if (!std::isfinite(s) || s * 1000.0 < static_cast<double>(min_ms) ||
        s * 1000.0 > static_cast<double>(max_ms)) {
      std::ostringstream o;
      o << path(where, key) << ": " << s << " s is out of range [" << static_cast<double>(min_ms) / 1000.0
        << ", " << static_cast<double>(max_ms) / 1000.0 << "] s";
      add(n, o.str());
      return std::nullopt;
    }
    return static_cast<std::int64_t>(std::llround(s * 1000.0));
  }

  // A memory size: "4G" / "512M", or an integer number of MB.
  std::optional<std::uint64_t> size_mb(const toml::table& t, std::string_view key, const std::string& where,
                                       bool required = false) {
    const toml::node* n = t.get(key);
    if (n == nullptr) {
      if (required) add(&t, where + ": missing required key '" + std::string(key) + "'");
      return std::nullopt;
    }
    if (n->is_integer()) {
      const std::int64_t v = n->as_integer()->get();
      if (v <= 0 || static_cast<std::uint64_t>(v) > max_node_memory_mb) {
        add(n, path(where, key) + ": " + std::to_string(v) + " MB is out of range [1, " +
                   std::to_string(max_node_memory_mb) + "]");
        return std::nullopt;
      }
      return static_cast<std::uint64_t>(v);
    }
    if (n->is_string()) {
      std::uint64_t mb = 0;
      if (parse_size_mb(n->as_string()->get(), mb)) return mb;
      add(n, path(where, key) + ": '" + n->as_string()->get().substr(0, 64) +
                 "' is not a size (expected e.g. \"4G\" or \"512M\", or an integer number of MB)");
      return std::nullopt;
    }
    add(n,
        path(where, key) + ": expected a size like \"4G\" or an integer number of MB, got " + type_name(*n));
    return std::nullopt;
  }

 private:
  static std::string path(const std::string& where, std::string_view key) {
    return where.empty() ? std::string(key) : where + "." + std::string(key);
  }
  std::string file_;
  std::vector<std::string> problems_;
};

std::optional<class_policy> parse_policy(std::string_view s) {
  if (s == "FAIR_SHARE") return class_policy::fair_share;
  if (s == "FIXED_SHARE") return class_policy::fixed_share;
  if (s == "RESERVE") return class_policy::reserve;
  return std::nullopt;
}

void read_cluster(reader& r, const toml::table& root, scenario& sc) {
  const toml::table* t = r.table(root, "cluster", "cluster");
  if (t == nullptr) {
    if (root.get("cluster") == nullptr)
      r.add(&root, "missing the [cluster] table (it needs at least `nodes`)");
    return;
  }
  r.only_keys(*t, "[cluster]", {"nodes", "heartbeat_ms", "jitter_ms", "quantum"});
  if (auto d = r.string(*t, "nodes", "cluster", true)) {
    try {
      sc.cluster.nodes = parse_nodes(*d);
      sc.cluster.nodes_description = *d;
    } catch (const node_spec_error& e) {
      r.add(t->get("nodes"), std::string("cluster.nodes: ") + e.what());
    }
  }
  if (auto v = r.integer(*t, "heartbeat_ms", "cluster", 10, 60000)) sc.cluster.heartbeat_ms = *v;
  if (auto v = r.integer(*t, "jitter_ms", "cluster", 0, 60000)) {
    if (*v >= sc.cluster.heartbeat_ms)
      r.add(t->get("jitter_ms"), "cluster.jitter_ms: must be below cluster.heartbeat_ms (" +
                                     std::to_string(sc.cluster.heartbeat_ms) + ")");
    else
      sc.cluster.jitter_ms = *v;
  } else if (sc.cluster.jitter_ms >= sc.cluster.heartbeat_ms) {
    sc.cluster.jitter_ms = sc.cluster.heartbeat_ms / 4;  // the default jitter must fit a short period
  }
  if (auto v = r.size_mb(*t, "quantum", "cluster")) sc.cluster.quantum_mb = *v;
}

void read_orchestrator(reader& r, const toml::table& root, scenario& sc) {
  const toml::table* t = r.table(root, "orchestrator", "orchestrator");
  if (t == nullptr) return;
  r.only_keys(*t, "[orchestrator]",
              {"publish_ms", "start_ms", "init_ms", "preempt_exit_ms", "evict_exit_ms"});
  auto& o = sc.orchestrator;
  if (auto v = r.integer(*t, "publish_ms", "orchestrator", 10, 60000)) o.publish_ms = *v;
  if (auto v = r.integer(*t, "start_ms", "orchestrator", 0, max_period_ms)) o.start_ms = *v;
  if (auto v = r.integer(*t, "init_ms", "orchestrator", 0, max_period_ms)) o.init_ms = *v;
  if (auto v = r.integer(*t, "preempt_exit_ms", "orchestrator", 0, max_period_ms)) o.preempt_exit_ms = *v;
  if (auto v = r.integer(*t, "evict_exit_ms", "orchestrator", 0, max_period_ms)) o.evict_exit_ms = *v;
}

void read_classes(reader& r, const toml::table& root, scenario& sc) {
  sc.classes = embedded_default_classes();
  const toml::table* t = r.table(root, "class", "class");
  if (t == nullptr) return;
  for (const auto& [key, node] : *t) {
    const std::string name(key.str());
    const std::string where = "class." + name;
    if (!valid_name(name)) {
      r.add(&node, where + ": a class name is letters, digits, '-', '_', '.' or '@'");
      continue;
    }
    if (!node.is_table()) {
      r.add(&node, where + ": expected a table, got " + type_name(node));
      continue;
    }
    const auto& ct = *node.as_table();
    r.only_keys(ct, "[" + where + "]", {"policy", "weight", "priority", "default", "nodepool"});
    auto it =
        std::find_if(sc.classes.begin(), sc.classes.end(), [&](const auto& c) { return c.name == name; });
    class_spec c = it != sc.classes.end() ? *it : class_spec{name};
    if (auto p = r.string(ct, "policy", where)) {
      if (auto pol = parse_policy(*p))
        c.policy = *pol;
      else
        r.add(ct.get("policy"), where + ".policy: unknown value '" + p->substr(0, 64) +
                                    "' (expected FAIR_SHARE, FIXED_SHARE or RESERVE)");
    }
    if (auto v = r.integer(ct, "weight", where, 1, 1000000)) c.weight = static_cast<int>(*v);
    if (auto v = r.integer(ct, "priority", where, -1000000, 1000000)) c.priority = static_cast<int>(*v);
    if (auto v = r.boolean(ct, "default", where)) c.is_default = *v;
    if (auto v = r.string(ct, "nodepool", where)) {
      if (valid_name(*v))
        c.nodepool = *v;
      else
        r.add(ct.get("nodepool"),
              where + ".nodepool: a nodepool name is letters, digits, '-', '_', '.' or '@'");
    }
    if (it != sc.classes.end())
      *it = c;
    else
      sc.classes.push_back(c);
  }
}

struct job_source {
  std::uint32_t line = 0, column = 0;
};

void read_jobs(reader& r, const toml::table& root, scenario& sc,
               std::map<std::string, job_source>& where_of) {
  const toml::node* n = root.get("job");
  if (n == nullptr) return;
  if (!n->is_array_of_tables()) {
    r.add(n, "job: expected [[job]] tables, got " + type_name(*n));
    return;
  }
  std::map<std::string, int> per_user;
  std::size_t index = 0;
  for (const auto& e : *n->as_array()) {
    const auto& t = *e.as_table();
    const std::string where = "job[" + std::to_string(index++) + "]";
    r.only_keys(t, where,
                {"at_s", "id", "user", "class", "kind", "memory", "items", "threads", "item_ms", "init_ms",
                 "max_processes", "count", "every_s", "end_s"});
    const std::size_t before = r.problems().size();
    job_spec j;
    j.init_ms = sc.orchestrator.init_ms;
    if (auto v = r.seconds(t, "at_s", where, 0, max_scenario_ms)) j.at_ms = *v;
    if (auto v = r.string(t, "user", where, true)) {
      if (valid_name(*v))
        j.user = *v;
      else
        r.add(t.get("user"), where + ".user: '" + v->substr(0, 64) +
                                 "' must be 1-128 letters, digits, '-', '_', '.' or '@'");
    }
    bool kind_known = true;  // with an unknown kind, the rules that depend on the kind are not applied
    if (auto v = r.string(t, "kind", where)) {
      if (auto k = messages::parse_work_kind(*v))
        j.kind = *k;
      else {
        kind_known = false;
        r.add(t.get("kind"), where + ".kind: unknown value '" + v->substr(0, 64) +
                                 "' (expected job, service, ap or reservation)");
      }
    } else if (t.get("kind") != nullptr) {
      kind_known = false;
    }
    if (auto v = r.string(t, "class", where)) {
      j.class_name = *v;
      if (class_of(sc.classes, j.class_name, j.kind) == nullptr) {
        std::vector<std::string> names;
        for (const auto& c : sc.classes) names.push_back(c.name);
        r.add(t.get("class"), where + ".class: unknown class '" + v->substr(0, 64) +
                                  "' (known: " + join(names, ", ") + "; add a [class." + v->substr(0, 64) +
                                  "] table for a class of your RM's configuration)");
      }
    }
    if (auto v = r.size_mb(t, "memory", where, true)) j.memory_mb = *v;
    const bool is_job = j.kind == messages::work_kind::job;
    if (!kind_known) {
      // nothing: the kind is wrong, so whether items or end_s belong here cannot be told
    } else if (is_job) {
      if (auto v = r.integer(t, "items", where, 1, 1000000000, true))
        j.items = static_cast<std::uint64_t>(*v);
      if (t.get("end_s") != nullptr)
        r.add(t.get("end_s"), where +
                                  ".end_s: only services, APs and reservations have an end time; a job ends "
                                  "when its items are done");
    } else {
      if (t.get("items") != nullptr)
        r.add(t.get("items"), where + ".items: only jobs (kind = \"job\") have work items");
      if (auto v = r.seconds(t, "end_s", where, 0, max_scenario_ms)) j.end_ms = *v;
    }
    if (auto v = r.integer(t, "threads", where, 1, 1024)) j.threads = static_cast<std::uint64_t>(*v);
    if (auto v = r.integer(t, "item_ms", where, 1, max_period_ms)) j.item_ms = *v;
    // A reservation is a bare allocation: nothing initializes in it unless the scenario says so.
    if (j.kind == messages::work_kind::reservation) j.init_ms = 0;
    if (auto v = r.integer(t, "init_ms", where, 0, max_period_ms)) j.init_ms = *v;
    if (auto v = r.integer(t, "max_processes", where, 0, 100000))
      j.max_processes = static_cast<std::uint64_t>(*v);
    std::int64_t count = 1, every_ms = 0;
    if (auto v = r.integer(t, "count", where, 1, 10000)) count = *v;
    if (auto v = r.seconds(t, "every_s", where, 0, max_scenario_ms)) every_ms = *v;
    std::optional<std::string> id = r.string(t, "id", where);
    if (id && !valid_name(*id)) {
      r.add(t.get("id"),
            where + ".id: '" + id->substr(0, 64) + "' must be 1-128 letters, digits, '-', '_', '.' or '@'");
      id.reset();
    }
    if (r.problems().size() != before) continue;  // a broken entry is not expanded (its errors are enough)
    if (sc.jobs.size() + static_cast<std::size_t>(count) > max_jobs_total) {
      r.add(&t, where + ": more than " + std::to_string(max_jobs_total) + " jobs in total");
      return;
    }
    for (std::int64_t k = 0; k < count; ++k) {
      job_spec copy = j;
      copy.at_ms = j.at_ms + k * every_ms;
      if (id)
        copy.id = count == 1 ? *id : *id + "-" + std::to_string(k + 1);
      else
        copy.id = j.user + "-" + std::to_string(++per_user[j.user]);
      if (copy.at_ms > max_scenario_ms) {
        r.add(t.get("every_s"), where + ": copy " + std::to_string(k + 1) + " would arrive after 30 days");
        break;
      }
      if (copy.end_ms && *copy.end_ms <= copy.at_ms) {
        r.add(t.get("end_s"),
              where + ".end_s: must be after the arrival (at_s) of copy " + std::to_string(k + 1));
        break;
      }
      const job_source src{t.source().begin.line, t.source().begin.column};
      if (auto [it, fresh] = where_of.emplace(copy.id, src); !fresh) {
        r.add_at(src.line, src.column,
                 where + ": job id '" + copy.id + "' is already used by the job at line " +
                     std::to_string(it->second.line));
        break;
      }
      sc.jobs.push_back(std::move(copy));
    }
  }
}

void read_failures(reader& r, const toml::table& root, scenario& sc) {
  const toml::node* n = root.get("failure");
  if (n == nullptr) return;
  if (!n->is_array_of_tables()) {
    r.add(n, "failure: expected [[failure]] tables, got " + type_name(*n));
    return;
  }
  std::set<std::string> names;
  for (const auto& nd : sc.cluster.nodes) names.insert(nd.name);
  std::size_t index = 0;
  for (const auto& e : *n->as_array()) {
    const auto& t = *e.as_table();
    const std::string where = "failure[" + std::to_string(index++) + "]";
    r.only_keys(t, where, {"node", "down_at_s", "up_at_s", "flap_s"});
    const std::size_t before = r.problems().size();
    failure_spec f;
    if (auto v = r.string(t, "node", where, true)) {
      f.node = *v;
      if (!names.empty() && names.count(*v) == 0) {
        std::string example = sc.cluster.nodes.front().name + " .. " + sc.cluster.nodes.back().name;
        r.add(t.get("node"), where + ".node: no node '" + v->substr(0, 64) +
                                 "' in the cluster (its nodes are " + example + ")");
      }
    }
    if (auto v = r.seconds(t, "down_at_s", where, 0, max_scenario_ms, true)) f.down_at_ms = *v;
    f.up_at_ms = r.seconds(t, "up_at_s", where, 0, max_scenario_ms);
    // Flapping faster than 100 ms of scenario time would be noise, not a scenario (and unbounded work).
    f.flap_ms = r.seconds(t, "flap_s", where, 100, max_scenario_ms);
    if (f.up_at_ms && *f.up_at_ms <= f.down_at_ms)
      r.add(t.get("up_at_s"), where + ".up_at_s: must be after down_at_s");
    if (r.problems().size() == before) sc.failures.push_back(std::move(f));
  }
}

}  // namespace

scenario parse_scenario(std::string_view text, std::string_view source_name, std::string_view default_name) {
  const std::string file = source_name.empty() ? std::string("<scenario>") : std::string(source_name);
  toml::table root;
  try {
    root = toml::parse(text, std::string_view(file));
  } catch (const toml::parse_error& e) {
    throw scenario_error({file + ":" + std::to_string(e.source().begin.line) + ":" +
                          std::to_string(e.source().begin.column) +
                          ": TOML syntax: " + std::string(e.description())});
  }
  reader r{file};
  scenario sc;
  r.only_keys(
      root, "the top level",
      {"name", "description", "seed", "duration_s", "cluster", "orchestrator", "class", "job", "failure"});
  if (auto v = r.string(root, "name", "")) sc.name = *v;
  if (auto v = r.string(root, "description", "")) sc.description = *v;
  if (auto v = r.integer(root, "seed", "", 0, std::numeric_limits<std::int64_t>::max()))
    sc.seed = static_cast<std::uint64_t>(*v);
  sc.duration_ms = r.seconds(root, "duration_s", "", 1, max_scenario_ms);
  read_cluster(r, root, sc);
  read_orchestrator(r, root, sc);  // before jobs: a job's init_ms defaults to the orchestrator's
  read_classes(r, root, sc);       // before jobs: a job's class is checked against the table
  std::map<std::string, job_source> where_of;
  read_jobs(r, root, sc, where_of);
  read_failures(r, root, sc);
  if (root.get("job") == nullptr)
    r.add(&root, "no [[job]] entries: a scenario needs at least one piece of work");
  if (!r.problems().empty()) throw scenario_error(r.problems());
  std::stable_sort(sc.jobs.begin(), sc.jobs.end(), [](const job_spec& a, const job_spec& b) {
    return std::tie(a.at_ms, a.id) < std::tie(b.at_ms, b.id);
  });
  if (sc.name.empty()) sc.name = std::string(default_name.substr(0, 128));
  return sc;
}

scenario load_scenario_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw scenario_error({path + ": cannot open the scenario file"});
  constexpr std::size_t max_bytes = 16u << 20;
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) throw scenario_error({path + ": larger than 16 MiB: not a scenario file"});
  }
  std::string stem =
      path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (const auto dot = stem.rfind('.'); dot != std::string::npos && dot > 0) stem.resize(dot);
  return parse_scenario(text, path, stem.empty() ? "scenario" : stem);
}

}  // namespace rmbus::sim
