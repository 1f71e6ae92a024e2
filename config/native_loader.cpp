// The native road: one TOML file -> rm_config. The schema is documented in docs/configuration.md; every table
// rejects keys it does not know, every value is type-checked where it stands, and cross-references are
// checked by the rules both roads share (detail/resolve).

#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "config/detail/closest_name.hpp"
#include "config/detail/declarations.hpp"
#include "config/detail/nodefile.hpp"
#include "config/detail/values.hpp"
#include "config/endpoint.hpp"
#include "config/loader.hpp"
#include "config/log_level.hpp"
#include "config/timing_bounds.hpp"

namespace rmbus::config {

namespace {

using detail::located;

class toml_reader {
 public:
  toml_reader(std::string file, error_list& errors) : file_(std::move(file)), errors_(errors) {}

  source_loc loc(const toml::node& node) const { return {file_, static_cast<int>(node.source().begin.line)}; }
  error_list& errors() { return errors_; }
  const std::string& file() const { return file_; }

  // Reports every key of `table` not in `known`, with the nearest known key when one is close (as DUCC's
  // keys get it).
  void only_keys(const toml::table& table, const std::string& where, std::initializer_list<std::string_view> known) {
    for (const auto& [key, node] : table) {
      bool ok = false;
      for (auto k : known) ok = ok || key.str() == k;
      if (!ok) {
        std::string list;
        for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        std::string message = "unknown key '" + std::string(key.str()) + "' in " + where;
        if (auto near = detail::closest_name(key.str(), std::vector<std::string_view>(known)))
          message += "; did you mean " + *near + "?";
        errors_.add(loc(node), message + " (known: " + list + ")");
      }
    }
  }

  std::optional<located<std::int64_t>> integer(const toml::table& t, std::string_view key, const std::string& where,
                                                std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                                                std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    const toml::node* node = t.get(key);
    if (node == nullptr) return std::nullopt;
    auto v = node->value_exact<std::int64_t>();
    if (!v) {
      errors_.add(loc(*node), where + "." + std::string(key) + " must be an integer");
      return std::nullopt;
    }
    if (*v < min || *v > max) {
      errors_.add(loc(*node), where + "." + std::string(key) + " = " + std::to_string(*v) + " is out of range (" +
                                  std::to_string(min) + ".." + std::to_string(max) + ")");
      return std::nullopt;
    }
    return located<std::int64_t>{*v, loc(*node)};
  }

  std::optional<located<int>> int32(const toml::table& t, std::string_view key, const std::string& where,
                                    std::int64_t min = std::numeric_limits<int>::min()) {
    auto v = integer(t, key, where, min, std::numeric_limits<int>::max());
    if (!v) return std::nullopt;
    return located<int>{static_cast<int>(v->value), v->loc};
  }

  std::optional<located<bool>> boolean(const toml::table& t, std::string_view key, const std::string& where) {
    const toml::node* node = t.get(key);
    if (node == nullptr) return std::nullopt;
    auto v = node->value_exact<bool>();
    if (!v) {
      errors_.add(loc(*node), where + "." + std::string(key) + " must be true or false");
      return std::nullopt;
    }
    return located<bool>{*v, loc(*node)};
  }

  std::optional<located<std::string>> string(const toml::table& t, std::string_view key, const std::string& where) {
    const toml::node* node = t.get(key);
    if (node == nullptr) return std::nullopt;
    auto v = node->value_exact<std::string>();
    if (!v) {
      errors_.add(loc(*node), where + "." + std::string(key) + " must be a string");
      return std::nullopt;
    }
    return located<std::string>{*v, loc(*node)};
  }

  // A size: an integer number of MB, or a string such as "16G" or "512M".
  std::optional<located<std::uint64_t>> size(const toml::node& node, const std::string& what) {
    if (auto mb = node.value_exact<std::int64_t>()) {
      if (*mb < 0) {
        errors_.add(loc(node), what + " must not be negative");
        return std::nullopt;
      }
      return located<std::uint64_t>{static_cast<std::uint64_t>(*mb), loc(node)};
    }
    if (auto text = node.value_exact<std::string>()) {
      if (auto mb = detail::parse_size_mb(*text)) return located<std::uint64_t>{*mb, loc(node)};
      errors_.add(loc(node), what + " = \"" + *text + "\" is not a size (write e.g. \"16G\", \"512M\" or an integer "
                                                          "number of MB)");
      return std::nullopt;
    }
    errors_.add(loc(node), what + " must be a size (\"16G\", \"512M\" or an integer number of MB)");
    return std::nullopt;
  }
  std::optional<located<std::uint64_t>> size(const toml::table& t, std::string_view key, const std::string& where) {
    const toml::node* node = t.get(key);
    if (node == nullptr) return std::nullopt;
    return size(*node, where + "." + std::string(key));
  }

  // A quantum: a size with its unit, never a bare number. DUCC's ducc.rm.share.quantum counts GB, so a bare
  // `quantum = 1` copied from it would silently have meant 1 MB here.
  std::optional<located<std::uint64_t>> quantum(const toml::table& t, const std::string& where) {
    const toml::node* node = t.get("quantum");
    if (node == nullptr) return std::nullopt;
    if (auto n = node->value_exact<std::int64_t>()) {
      const auto v = std::to_string(*n);
      errors_.add(loc(*node), where + ".quantum = " + v + " has no unit: write \"" + v + "G\" or \"" + v +
                                  "M\" (DUCC's ducc.rm.share.quantum = " + v + " means " + v + " GB)");
      return std::nullopt;
    }
    return size(*node, where + ".quantum");
  }

  std::optional<located<std::vector<std::string>>> strings(const toml::table& t, std::string_view key,
                                                           const std::string& where) {
    const toml::node* node = t.get(key);
    if (node == nullptr) return std::nullopt;
    const toml::array* array = node->as_array();
    std::string what = where + "." + std::string(key);
    if (array == nullptr) {
      errors_.add(loc(*node), what + " must be an array of strings");
      return std::nullopt;
    }
    located<std::vector<std::string>> out{{}, loc(*node)};
    for (const auto& element : *array) {
      auto v = element.value_exact<std::string>();
      if (!v) {
        errors_.add(loc(element), what + " must hold strings only");
        return std::nullopt;
      }
      out.value.push_back(*v);
    }
    return out;
  }

  // The array of tables `key` (e.g. [[nodepool]]), or nothing.
  std::vector<const toml::table*> tables(const toml::table& root, std::string_view key) {
    std::vector<const toml::table*> out;
    const toml::node* node = root.get(key);
    if (node == nullptr) return out;
    const toml::array* array = node->as_array();
    if (array == nullptr) {
      errors_.add(loc(*node), "'" + std::string(key) + "' must be written as [[" + std::string(key) + "]] tables");
      return out;
    }
    for (const auto& element : *array) {
      if (const auto* table = element.as_table()) {
        out.push_back(table);
      } else {
        errors_.add(loc(element), "'" + std::string(key) + "' must be written as [[" + std::string(key) + "]] tables");
      }
    }
    return out;
  }

  const toml::table* section(const toml::table& root, std::string_view key) {
    const toml::node* node = root.get(key);
    if (node == nullptr) return nullptr;
    if (const auto* table = node->as_table()) return table;
    errors_.add(loc(*node), "'" + std::string(key) + "' must be a table ([" + std::string(key) + "])");
    return nullptr;
  }

 private:
  std::string file_;
  error_list& errors_;
};

template <class T, class U>
void assign(T& out, const std::optional<located<U>>& v) {
  if (v) out = static_cast<T>(v->value);
}

void read_scheduling(toml_reader& r, const toml::table& t, core::scheduling_settings& s, detail::site_decls& site) {
  const std::string w = "scheduling";
  r.only_keys(t, "[scheduling]",
              {"quantum", "fragmentation_threshold", "defragmentation", "initialization_cap", "expand_by_doubling",
               "use_prediction", "prediction_fudge_ms", "global_allotment", "reserve_overage", "reserved_dram",
               "default_memory", "default_threads", "default_tasks", "jd_host_class", "jd_host_user",
               "preemption_policy"});
  if (auto q = r.quantum(t, w)) {
    if (q->value == 0) r.errors().add(q->loc, "scheduling.quantum must be greater than 0");
    else s.quantum_mb = q->value;
  }
  assign(s.fragmentation_threshold, r.int32(t, "fragmentation_threshold", w, 0));
  assign(s.defragmentation, r.boolean(t, "defragmentation", w));
  assign(s.initialization_cap, r.int32(t, "initialization_cap", w, 0));  // 0: no initialization cap, as in DUCC
  assign(s.expand_by_doubling, r.boolean(t, "expand_by_doubling", w));
  assign(s.use_prediction, r.boolean(t, "use_prediction", w));
  assign(s.prediction_fudge_ms, r.integer(t, "prediction_fudge_ms", w, 0));
  if (auto a = r.size(t, "global_allotment", w)) s.global_allotment_mb = a->value;
  assign(s.reserve_overage_mb, r.size(t, "reserve_overage", w));
  assign(s.reserved_dram_mb, r.size(t, "reserved_dram", w));
  if (auto m = r.size(t, "default_memory", w)) {
    if (m->value == 0) r.errors().add(m->loc, "scheduling.default_memory must be greater than 0");
    else s.default_memory_mb = m->value;
  }
  assign(s.default_threads, r.int32(t, "default_threads", w, 1));
  assign(s.default_tasks, r.int32(t, "default_tasks", w, 1));
  assign(site.jd_host_class, r.string(t, "jd_host_class", w));
  assign(site.jd_host_user, r.string(t, "jd_host_user", w));
  if (auto p = r.string(t, "preemption_policy", w)) {
    if (auto v = detail::parse_preemption_policy(p->value)) s.preemption_policy = *v;
    else
      r.errors().add(p->loc, "scheduling.preemption_policy must be \"ducc\" or \"sparing\", not \"" +
                                 p->value + "\"");
  }
}

// A file the process writes (log, accounting): relative to the configuration file's folder, like nodefiles.
std::string resolve_path(const std::filesystem::path& base_dir, const std::string& file) {
  if (file.empty()) return file;
  std::filesystem::path p = file;
  return (p.is_relative() ? base_dir / p : p).string();
}

// [security]: CURVE on the bus and the admin endpoint. Relative paths are resolved against the configuration's
// folder, so a site's keys live next to its configuration; the key files are read at start-up (bus/curve.hpp).
void read_security(toml_reader& r, const toml::table& root, const std::filesystem::path& base_dir,
                   security_settings& sec) {
  const auto* t = r.section(root, "security");
  if (t == nullptr) return;
  r.only_keys(*t, "[security]", {"curve", "key", "server_key", "keys"});
  assign(sec.curve, r.boolean(*t, "curve", "security"));
  for (auto [key, target] : {std::pair<std::string_view, std::string*>{"key", &sec.key},
                             {"server_key", &sec.server_key},
                             {"keys", &sec.keys}}) {
    if (auto v = r.string(*t, key, "security")) {
      if (v->value.empty()) r.errors().add(v->loc, "security." + std::string(key) + ": a file path must not be empty");
      else *target = v->value;
    }
  }
  for (auto* path : {&sec.key, &sec.server_key, &sec.keys}) {
    if (path->empty()) continue;
    const std::filesystem::path p = *path;
    if (p.is_relative()) *path = (base_dir / p).lexically_normal().string();
  }
}

void read_runtime(toml_reader& r, const toml::table& root, runtime_settings& rt, const std::filesystem::path& base_dir) {
  bool round_timeout_set = false;
  bool settle_set = false;
  if (const auto* t = r.section(root, "timing")) {
    const std::string w = "timing";
    r.only_keys(*t, "[timing]",
                {"heartbeat_interval_ms", "node_stability", "init_stability", "fast_recovery",
                 "orchestrator_publish_ms", "state_publish_ratio", "round_timeout_ms", "mass_loss_percent",
                 "mass_loss_evict_percent", "settle_ms"});
    assign(rt.heartbeat_interval_ms, r.integer(*t, "heartbeat_interval_ms", w, 1, max_period_ms));
    assign(rt.node_stability, r.integer(*t, "node_stability", w, 1, max_ticks));
    assign(rt.init_stability, r.integer(*t, "init_stability", w, 0, max_ticks));
    assign(rt.fast_recovery, r.boolean(*t, "fast_recovery", w));
    assign(rt.mass_loss_percent, r.integer(*t, "mass_loss_percent", w, 1, 100));
    assign(rt.mass_loss_evict_percent, r.integer(*t, "mass_loss_evict_percent", w, 1, 100));
    assign(rt.orchestrator_publish_ms, r.integer(*t, "orchestrator_publish_ms", w, 1, max_period_ms));
    assign(rt.state_publish_ratio, r.integer(*t, "state_publish_ratio", w, 1, max_ticks));
    auto timeout = r.integer(*t, "round_timeout_ms", w, 1, max_period_ms);
    assign(rt.round_timeout_ms, timeout);
    round_timeout_set = timeout.has_value();
    auto settle = r.integer(*t, "settle_ms", w, 0, max_period_ms);
    assign(rt.settle_ms, settle);
    settle_set = settle.has_value();
  }
  if (!round_timeout_set) rt.round_timeout_ms = rt.orchestrator_publish_ms;
  if (!settle_set) rt.settle_ms = rt.heartbeat_interval_ms;
  if (const auto* t = r.section(root, "bus")) {
    r.only_keys(*t, "[bus]", {"pub", "sub", "admin", "metrics", "accept_any_orchestrator", "schedule_changes_full_every"});
    assign(rt.accept_any_orchestrator, r.boolean(*t, "accept_any_orchestrator", "bus"));
    assign(rt.schedule_changes_full_every, r.integer(*t, "schedule_changes_full_every", "bus", 0, 1000000));
    for (auto [key, target] : {std::pair<std::string_view, std::string*>{"pub", &rt.bus_pub},
                               {"sub", &rt.bus_sub},
                               {"admin", &rt.admin}}) {
      if (auto v = r.string(*t, key, "bus")) {
        // pub and sub may list several forwarders; the admin endpoint is one socket this process binds.
        if (auto problem = key == "admin" ? check_bus_endpoint(v->value) : check_bus_endpoint_list(v->value)) r.errors().add(v->loc, "bus." + std::string(key) + ": " + *problem);
        else *target = v->value;
      }
    }
    if (auto v = r.string(*t, "metrics", "bus")) {
      if (auto problem = check_metrics_address(v->value)) r.errors().add(v->loc, "bus.metrics: " + *problem);
      else rt.metrics = v->value;
    }
  }
  if (const auto* t = r.section(root, "log")) {
    r.only_keys(*t, "[log]", {"level", "file", "max_bytes", "max_files", "compress"});
    if (auto v = r.string(*t, "file", "log")) rt.logging.file = resolve_path(base_dir, v->value);
    assign(rt.logging.max_bytes, r.integer(*t, "max_bytes", "log", min_log_bytes, max_log_bytes));
    assign(rt.logging.max_files, r.integer(*t, "max_files", "log", 1, max_log_files));
    assign(rt.logging.compress, r.boolean(*t, "compress", "log"));
    if (auto v = r.string(*t, "level", "log")) {
      if (!parse_log_level(v->value)) {
        r.errors().add(v->loc, "log.level: unknown log level '" + v->value + "' (known: " +
                                   std::string(log_level_names()) + ")");
      } else {
        rt.log_level = v->value;
        for (char& c : rt.log_level) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
    }
  }
  if (const auto* t = r.section(root, "health")) {
    r.only_keys(*t, "[health]", {"enabled", "disk_warn_percent"});
    assign(rt.health.enabled, r.boolean(*t, "enabled", "health"));
    assign(rt.health.disk_warn_percent, r.integer(*t, "disk_warn_percent", "health", 0, 100));
  }
  if (const auto* t = r.section(root, "accounting")) {
    r.only_keys(*t, "[accounting]", {"enabled", "file"});
    assign(rt.accounting.enabled, r.boolean(*t, "enabled", "accounting"));
    if (auto v = r.string(*t, "file", "accounting")) rt.accounting.file = resolve_path(base_dir, v->value);
  }
  if (const auto* t = r.section(root, "ha")) {
    const std::string w = "ha";
    r.only_keys(*t, "[ha]", {"enabled", "beacon_ms", "takeover_ms", "rank", "advertise_admin"});
    assign(rt.ha.enabled, r.boolean(*t, "enabled", w));
    assign(rt.ha.beacon_ms, r.integer(*t, "beacon_ms", w, min_ha_beacon_ms, max_ha_ms));
    assign(rt.ha.takeover_ms, r.integer(*t, "takeover_ms", w, 2 * min_ha_beacon_ms, max_ha_ms));
    assign(rt.ha.rank, r.integer(*t, "rank", w, 0, max_ha_rank));
    if (auto v = r.string(*t, "advertise_admin", w)) {
      if (auto problem = check_bus_endpoint(v->value)) r.errors().add(v->loc, "ha.advertise_admin: " + *problem);
      else rt.ha.advertise_admin = v->value;
    }
    if (rt.ha.takeover_ms < 2 * rt.ha.beacon_ms)
      r.errors().add(r.loc(*t), "ha.takeover_ms (" + std::to_string(rt.ha.takeover_ms) +
                                         ") must be at least twice ha.beacon_ms (" + std::to_string(rt.ha.beacon_ms) +
                                         "): one late beacon must not start a takeover");
  }
  if (const auto* t = r.section(root, "limits")) {
    const std::string w = "limits";
    r.only_keys(*t, "[limits]", {"max_body_bytes", "max_string_bytes", "max_array_len", "max_map_len", "max_depth",
                                      "max_nodes", "forget_down_ms", "max_heartbeats_queued"});
    assign(rt.limits.max_body_bytes, r.integer(*t, "max_body_bytes", w, 1));
    assign(rt.limits.max_string_bytes, r.integer(*t, "max_string_bytes", w, 1));
    assign(rt.limits.max_array_len, r.integer(*t, "max_array_len", w, 1));
    assign(rt.limits.max_map_len, r.integer(*t, "max_map_len", w, 1));
    assign(rt.limits.max_depth, r.integer(*t, "max_depth", w, 1));
    assign(rt.limits.max_nodes, r.integer(*t, "max_nodes", w, 1));
    assign(rt.limits.forget_down_ms, r.integer(*t, "forget_down_ms", w, 0, max_forget_down_ms));
    assign(rt.limits.max_heartbeats_queued, r.integer(*t, "max_heartbeats_queued", w, 1));
  }
}

struct nodefile_ref {
  std::size_t pool;
  located<std::string> file;
};

std::string table_name(const toml_reader& r, const toml::table& t, std::string_view kind, std::size_t index) {
  (void)r;
  if (auto name = t["name"].value_exact<std::string>()) return std::string(kind) + " '" + *name + "'";
  return std::string(kind) + " #" + std::to_string(index + 1);
}

void read_nodepools(toml_reader& r, const toml::table& root, detail::site_decls& site, std::vector<nodefile_ref>& files) {
  auto tables = r.tables(root, "nodepool");
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const auto& t = *tables[i];
    std::string w = table_name(r, t, "nodepool", i);
    r.only_keys(t, w, {"name", "parent", "quantum", "search_order", "domain", "nodes", "node_patterns", "nodefile"});
    detail::nodepool_decl pool;
    pool.loc = r.loc(t);
    auto name = r.string(t, "name", w);
    if (!name || name->value.empty()) {
      if (!name) r.errors().add(pool.loc, w + " has no name (required)");
      else r.errors().add(name->loc, w + ": the name must not be empty");
      continue;
    }
    pool.name = name->value;
    pool.parent = r.string(t, "parent", w);
    if (pool.parent && pool.parent->value.empty()) pool.parent.reset();  // "" = top-level
    pool.quantum_mb = r.quantum(t, w);
    pool.search_order = r.int32(t, "search_order", w);
    pool.domain = r.string(t, "domain", w);
    if (auto nodes = r.strings(t, "nodes", w)) {
      pool.has_node_source = true;
      for (auto& n : nodes->value) pool.nodes.push_back({n, nodes->loc});
    }
    if (auto patterns = r.strings(t, "node_patterns", w)) {
      pool.has_node_source = true;
      for (auto& p : patterns->value) pool.patterns.push_back({p, patterns->loc});
    }
    if (auto file = r.string(t, "nodefile", w)) {
      pool.has_node_source = true;
      files.push_back({site.nodepools.size(), *file});
    }
    site.nodepools.push_back(std::move(pool));
  }
}

void read_classes(toml_reader& r, const toml::table& root, detail::site_decls& site) {
  auto tables = r.tables(root, "class");
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const auto& t = *tables[i];
    std::string w = table_name(r, t, "class", i);
    r.only_keys(t, w, {"name", "parent", "abstract", "policy", "priority", "weight", "nodepool", "initialization_cap",
                       "expand_by_doubling", "use_prediction", "prediction_fudge_ms", "max_processes", "users",
                       "default", "reclaim_grace_ms", "probe_first"});
    detail::class_decl c;
    c.loc = r.loc(t);
    auto name = r.string(t, "name", w);
    if (!name || name->value.empty()) {
      r.errors().add(name ? name->loc : c.loc, w + " has no name (required)");
      continue;
    }
    c.name = name->value;
    c.parent = r.string(t, "parent", w);
    if (auto a = r.boolean(t, "abstract", w)) c.is_abstract = a->value;
    if (auto p = r.string(t, "policy", w)) {
      if (auto policy = detail::parse_policy(p->value)) {
        c.policy = located<core::policy>{*policy, p->loc};
      } else {
        r.errors().add(p->loc, w + ": bad policy '" + p->value + "' (expected FAIR_SHARE, FIXED_SHARE or RESERVE)");
      }
    }
    c.priority = r.int32(t, "priority", w);
    c.weight = r.int32(t, "weight", w);
    c.nodepool = r.string(t, "nodepool", w);
    c.initialization_cap = r.int32(t, "initialization_cap", w);
    c.expand_by_doubling = r.boolean(t, "expand_by_doubling", w);
    c.use_prediction = r.boolean(t, "use_prediction", w);
    if (auto f = r.integer(t, "prediction_fudge_ms", w)) c.prediction_fudge_ms = f;
    c.max_processes = r.int32(t, "max_processes", w);
    c.users = r.strings(t, "users", w);
    c.is_default = r.boolean(t, "default", w);
    if (auto g = r.integer(t, "reclaim_grace_ms", w)) c.reclaim_grace_ms = g;
    c.probe_first = r.boolean(t, "probe_first", w);
    site.classes.push_back(std::move(c));
  }
}

void read_users(toml_reader& r, const toml::table& root, detail::site_decls& site) {
  auto tables = r.tables(root, "user");
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const auto& t = *tables[i];
    std::string w = table_name(r, t, "user", i);
    r.only_keys(t, w, {"name", "max_allotment", "class_allotments"});
    detail::user_decl u;
    u.loc = r.loc(t);
    auto name = r.string(t, "name", w);
    if (!name || name->value.empty()) {
      r.errors().add(name ? name->loc : u.loc, w + " has no name (required)");
      continue;
    }
    u.name = name->value;
    u.max_allotment_mb = r.size(t, "max_allotment", w);
    if (const toml::node* node = t.get("class_allotments")) {
      if (const auto* table = node->as_table()) {
        for (const auto& [cls, value] : *table) {
          if (auto mb = r.size(value, w + ".class_allotments." + std::string(cls.str()))) {
            u.class_allotments_mb.push_back({{std::string(cls.str()), mb->value}, mb->loc});
          }
        }
      } else {
        r.errors().add(r.loc(*node), w + ".class_allotments must be a table of class = size");
      }
    }
    site.users.push_back(std::move(u));
  }
}

void read_groups(toml_reader& r, const toml::table& root, detail::site_decls& site) {
  auto tables = r.tables(root, "group");
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const auto& t = *tables[i];
    std::string w = table_name(r, t, "group", i);
    r.only_keys(t, w, {"name", "parent", "weight", "priority", "users"});
    detail::group_decl g;
    g.loc = r.loc(t);
    auto name = r.string(t, "name", w);
    if (!name || name->value.empty()) {
      r.errors().add(name ? name->loc : g.loc, w + " has no name (required)");
      continue;
    }
    g.name = name->value;
    g.parent = r.string(t, "parent", w);
    g.weight = r.int32(t, "weight", w);
    g.priority = r.int32(t, "priority", w);
    g.users = r.strings(t, "users", w);
    site.groups.push_back(std::move(g));
  }
}

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

rm_config parse_native(std::string_view text, const std::string& name, std::filesystem::path base_dir) {
  if (base_dir.empty()) base_dir = std::filesystem::path(name).parent_path();
  error_list errors;
  toml::table root;
  try {
    root = toml::parse(text, std::string_view(name));
  } catch (const toml::parse_error& e) {
    errors.add(name, static_cast<int>(e.source().begin.line), "TOML syntax: " + std::string(e.description()));
    errors.throw_if_any();
  }
  toml_reader r(name, errors);
  r.only_keys(root, "the top level",
              {"scheduling", "timing", "bus", "log", "health", "accounting", "ha", "limits", "security", "nodepool",
               "class", "user", "group"});
  rm_config cfg;
  detail::site_decls site;
  site.whole = {name, 0};
  if (const auto* t = r.section(root, "scheduling")) read_scheduling(r, *t, cfg.scheduling.settings, site);
  read_runtime(r, root, cfg.runtime, base_dir);
  read_security(r, root, base_dir, cfg.runtime.security);
  cfg.scheduling.settings.epoch_ms = cfg.runtime.orchestrator_publish_ms * cfg.runtime.state_publish_ratio;

  std::vector<nodefile_ref> files;
  read_nodepools(r, root, site, files);
  read_classes(r, root, site);
  read_users(r, root, site);
  read_groups(r, root, site);
  std::set<std::filesystem::path> pool_files;
  auto resolve_path = [&](const std::string& f) {
    std::filesystem::path p = f;
    return p.is_relative() ? base_dir / p : p;
  };
  for (const auto& ref : files) {
    std::error_code ec;
    auto p = resolve_path(ref.file.value);
    auto canonical = std::filesystem::weakly_canonical(p, ec);
    pool_files.insert(ec ? p : canonical);
  }
  for (const auto& ref : files) {
    detail::read_nodefile(resolve_path(ref.file.value), ref.file.loc, pool_files, site.nodepools[ref.pool], errors);
  }
  cfg.scheduling = detail::resolve_site(site, cfg.scheduling.settings, errors);
  errors.throw_if_any();
  return cfg;
}

rm_config load_native(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) throw config_error({{path.string(), 0, "cannot read configuration file"}});
  return parse_native(*text, path.string(), path.parent_path());
}

std::vector<std::string> runtime_problems(const runtime_settings& rt) {
  std::vector<std::string> problems;
  for (auto [name, value] : {std::pair<const char*, const std::string*>{"bus pub", &rt.bus_pub},
                             {"bus sub", &rt.bus_sub},
                             {"admin", &rt.admin}}) {
    const bool list = value != &rt.admin;  // pub and sub may list several forwarders
    if (auto p = list ? check_bus_endpoint_list(*value) : check_bus_endpoint(*value))
      problems.push_back(std::string(name) + ": " + *p);
  }
  if (auto p = check_metrics_address(rt.metrics)) problems.push_back("metrics: " + *p);
  if (!parse_log_level(rt.log_level)) {
    problems.push_back("unknown log level '" + rt.log_level + "' (known: " + std::string(log_level_names()) + ")");
  }
  auto period = [&](const char* what, std::int64_t ms) {
    if (ms <= 0 || ms > max_period_ms) {
      problems.push_back(std::string(what) + " must be 1.." + std::to_string(max_period_ms) + " ms");
    }
  };
  auto ticks = [&](const char* what, int n, int min) {
    if (n < min || n > max_ticks) {
      problems.push_back(std::string(what) + " must be " + std::to_string(min) + ".." + std::to_string(max_ticks));
    }
  };
  period("heartbeat interval", rt.heartbeat_interval_ms);
  period("orchestrator publish rate", rt.orchestrator_publish_ms);
  period("round timeout", rt.round_timeout_ms);
  ticks("node stability", rt.node_stability, 1);
  ticks("init stability", rt.init_stability, 0);
  ticks("state publish ratio", rt.state_publish_ratio, 1);
  const auto& lg = rt.logging;
  if (lg.max_bytes < min_log_bytes || lg.max_bytes > max_log_bytes)
    problems.push_back("log max_bytes must be " + std::to_string(min_log_bytes) + ".." + std::to_string(max_log_bytes));
  if (lg.max_files < 1 || lg.max_files > max_log_files)
    problems.push_back("log max_files must be 1.." + std::to_string(max_log_files));
  if (rt.health.disk_warn_percent < 0 || rt.health.disk_warn_percent > 100)
    problems.push_back("health disk_warn_percent must be 0..100");
  if (rt.ha.beacon_ms < min_ha_beacon_ms || rt.ha.beacon_ms > max_ha_ms)
    problems.push_back("ha beacon_ms must be " + std::to_string(min_ha_beacon_ms) + ".." + std::to_string(max_ha_ms));
  if (rt.ha.takeover_ms < 2 * rt.ha.beacon_ms || rt.ha.takeover_ms > max_ha_ms)
    problems.push_back("ha takeover_ms must be at least twice beacon_ms and at most " + std::to_string(max_ha_ms));
  if (rt.ha.rank < 0 || rt.ha.rank > max_ha_rank)
    problems.push_back("ha rank must be 0.." + std::to_string(max_ha_rank));
  const auto& l = rt.limits;
  if (l.max_body_bytes == 0 || l.max_string_bytes == 0 || l.max_array_len == 0 || l.max_map_len == 0 ||
      l.max_depth == 0) {
    problems.push_back("every decode limit must be greater than 0");
  }
  return problems;
}

}  // namespace rmbus::config
