// The DUCC road: ducc.properties + ducc.classes (+ ducc.users) + nodefiles -> rm_config.

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <unistd.h>

#include <spdlog/spdlog.h>

#include "config/detail/ducc_classes.hpp"
#include "config/detail/ducc_rm_keys.hpp"
#include "config/detail/java_properties.hpp"
#include "config/detail/nodefile.hpp"
#include "config/detail/text_checks.hpp"
#include "config/detail/values.hpp"
#include "config/endpoint.hpp"
#include "config/loader.hpp"
#include "config/timing_bounds.hpp"

namespace rmbus::config {

namespace {

using detail::property_map;

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::filesystem::path relative_to(const std::filesystem::path& dir, const std::string& name) {
  std::filesystem::path p = name;
  return p.is_relative() ? dir / p : p;
}

// Reads the class file and the optional registry into `site` and resolves it.
core::scheduler_config read_class_files(const std::filesystem::path& classes_path,
                                        const std::filesystem::path& users_path, const source_loc& classes_named_at,
                                        detail::site_decls& site, const core::scheduling_settings& settings,
                                        error_list& errors) {
  std::vector<detail::nodefile_ref> nodefiles;
  site.whole = {classes_path.string(), 0};
  auto text = read_file(classes_path);
  if (!text) {
    errors.add(classes_named_at, "cannot read class file '" + classes_path.string() + "'");
    return {};
  }
  detail::check_utf8_lines(*text, classes_path.string(), errors);
  detail::parse_ducc_classes(*text, classes_path.string(), site, nodefiles, errors);
  if (!users_path.empty()) {
    if (auto users = read_file(users_path)) {
      detail::site_decls registry;
      std::vector<detail::nodefile_ref> ignored;
      detail::check_utf8_lines(*users, users_path.string(), errors);
      detail::parse_ducc_classes(*users, users_path.string(), registry, ignored, errors);
      for (const auto& p : registry.nodepools) {
        errors.add(p.loc, "a user registry may hold User stanzas only, not Nodepool '" + p.name + "'");
      }
      for (const auto& c : registry.classes) {
        errors.add(c.loc, "a user registry may hold User stanzas only, not Class '" + c.name + "'");
      }
      for (auto& u : registry.users) site.users.push_back(std::move(u));
    } else {
      errors.add(users_path.string(), 0, "cannot read user registry");
    }
  }
  // Nodefiles are read once every pool is known, so an import of another pool's file can be skipped.
  auto dir = classes_path.parent_path();
  std::set<std::filesystem::path> pool_files;
  for (const auto& ref : nodefiles) {
    std::error_code ec;
    auto p = relative_to(dir, ref.file.value);
    auto canonical = std::filesystem::weakly_canonical(p, ec);
    pool_files.insert(ec ? p : canonical);
  }
  for (const auto& ref : nodefiles) {
    detail::read_nodefile(relative_to(dir, ref.file.value), ref.file.loc, pool_files, site.nodepools[ref.pool],
                          errors);
  }
  return detail::resolve_site(site, settings, errors);
}

// rmbus's own settings that DUCC configures elsewhere (log4j) or not at all, in their own rmbus.* namespace
// of ducc.properties. As with ducc.rm.*, any other rmbus.* key is an error.
const std::set<std::string, std::less<>> rmbus_keys = {
    "rmbus.log.file",       "rmbus.log.max.bytes",            "rmbus.log.max.files",
    "rmbus.log.compress",   "rmbus.health.enabled",           "rmbus.health.disk.warn.percent",
    "rmbus.accounting.enabled", "rmbus.accounting.file",  "rmbus.ha.beacon.ms",
    "rmbus.ha.takeover.ms",     "rmbus.ha.rank",          "rmbus.ha.advertise.admin",
    "rmbus.rm.preemption.policy", "rmbus.bus.schedule.changes.full.every",
};

class property_reader {
 public:
  property_reader(const property_map& props, std::string file, error_list& errors)
      : props_(props), file_(std::move(file)), errors_(errors) {}

  // The expanded value of `key`, if present.
  std::optional<std::pair<std::string, source_loc>> get(std::string_view key) const {
    auto it = props_.find(std::string(key));
    if (it == props_.end()) return std::nullopt;
    return std::make_pair(detail::expand_property(props_, it->second.value), source_loc{file_, it->second.line});
  }

  template <class T>
  void integer(std::string_view key, T& out, std::int64_t min, std::int64_t factor = 1,
               std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    auto v = get(key);
    if (!v) return;
    auto n = detail::parse_integer(v->first);
    if (!n) {
      errors_.add(v->second, std::string(key) + " must be an integer, not '" + v->first + "'");
      return;
    }
    if (*n < min || *n > max) {
      errors_.add(v->second, std::string(key) + " = " + v->first + " is out of range (" + std::to_string(min) +
                                 ".." + std::to_string(max) + ")");
      return;
    }
    constexpr auto limit = static_cast<std::int64_t>(
        std::min<std::uint64_t>(std::numeric_limits<T>::max(), std::numeric_limits<std::int64_t>::max()));
    if (*n > std::numeric_limits<std::int64_t>::max() / factor || *n * factor > limit) {
      errors_.add(v->second, std::string(key) + " = " + v->first + " is too large");
      return;
    }
    out = static_cast<T>(*n * factor);
  }

  void boolean(std::string_view key, bool& out) {
    auto v = get(key);
    if (!v) return;
    auto b = detail::parse_boolean(v->first);
    if (!b) {
      errors_.add(v->second, std::string(key) + " must be true or false, not '" + v->first + "'");
      return;
    }
    out = *b;
  }

  void text(std::string_view key, std::string& out) {
    if (auto v = get(key)) out = v->first;
  }

 private:
  const property_map& props_;
  std::string file_;
  error_list& errors_;
};

// The host this process runs on, as DUCC's head list names hosts (full name; short names match too).
std::string this_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {};
  return name;
}

// DUCC 3.0's reliable head nodes: `ducc.head.reliable.list` names the hosts that may run the head daemons (one
// active, the others backups). A non-empty list turns HA on, every listed head a candidate; this host's rank
// is its position in the list (0 first), matched by full or short name, unless rmbus.ha.rank says otherwise.
void read_reliable_heads(const property_map& props, property_reader& r, const std::string& file,
                         error_list& errors, ha_settings& ha) {
  r.integer("rmbus.ha.beacon.ms", ha.beacon_ms, min_ha_beacon_ms, 1, max_ha_ms);
  r.integer("rmbus.ha.takeover.ms", ha.takeover_ms, 2 * min_ha_beacon_ms, 1, max_ha_ms);
  if (auto v = r.get("rmbus.ha.advertise.admin")) {
    if (auto problem = check_bus_endpoint(v->first)) errors.add(v->second, "rmbus.ha.advertise.admin: " + *problem);
    else ha.advertise_admin = v->first;
  }
  if (ha.takeover_ms < 2 * ha.beacon_ms)
    errors.add(file, 0, "rmbus.ha.takeover.ms (" + std::to_string(ha.takeover_ms) +
                            ") must be at least twice rmbus.ha.beacon.ms (" + std::to_string(ha.beacon_ms) + ")");
  const bool rank_given = props.contains("rmbus.ha.rank");
  r.integer("rmbus.ha.rank", ha.rank, 0, 1, max_ha_rank);
  auto list = r.get("ducc.head.reliable.list");
  if (!list) {
    if (rank_given) errors.add(file, 0, "rmbus.ha.rank is set but ducc.head.reliable.list is not: HA is off");
    return;
  }
  std::vector<std::string> heads;
  std::string head;
  for (char c : list->first + " ") {
    if (c == ' ' || c == ',' || c == '\t') {
      if (!head.empty()) heads.push_back(std::move(head));
      head.clear();
    } else {
      head += c;
    }
  }
  if (heads.empty()) return;  // an empty list: DUCC's default, not reliable
  ha.enabled = true;
  if (rank_given) return;
  const auto host = this_host();
  const auto short_of = [](const std::string& h) { return h.substr(0, h.find('.')); };
  for (std::size_t i = 0; i < heads.size(); ++i) {
    if (heads[i] == host || short_of(heads[i]) == short_of(host)) {
      ha.rank = static_cast<int>(std::min<std::size_t>(i, max_ha_rank));
      return;
    }
  }
  std::string names;
  for (const auto& h : heads) names += (names.empty() ? "" : ", ") + h;
  errors.add(list->second, "ducc.head.reliable.list: this host '" + host + "' is not in the list (" + names +
                               "); set rmbus.ha.rank to give it a rank");
}

}  // namespace

core::scheduler_config load_ducc_classes(const std::filesystem::path& classes_path,
                                         const std::filesystem::path& users_path,
                                         const core::scheduling_settings& settings) {
  error_list errors;
  detail::site_decls site;
  auto out = read_class_files(classes_path, users_path, {classes_path.string(), 0}, site, settings, errors);
  errors.throw_if_any();
  return out;
}

rm_config load_ducc(const std::filesystem::path& properties_path) {
  error_list errors;
  const std::string file = properties_path.string();
  auto text = read_file(properties_path);
  if (!text) {
    errors.add(file, 0, "cannot read properties file");
    errors.throw_if_any();
  }
  detail::check_utf8_lines(*text, file, errors);
  auto props = detail::parse_java_properties(*text);
  // Keys outside ducc.rm.* belong to other DUCC daemons and are none of our business, except the few read
  // below. Inside it, a key no DUCC release ships and no DUCC RM reads can only be a typo: refused, with the
  // known key it most likely meant (detail/ducc_rm_keys.hpp).
  for (const auto& [key, prop] : props) {
    if (key.starts_with("rmbus.") && !rmbus_keys.contains(key)) {
      std::string list;
      for (const auto& k : rmbus_keys) list += (list.empty() ? "" : ", ") + k;
      errors.add(file, prop.line, "unknown key '" + key + "' (known rmbus.* keys: " + list + ")");
    }
    if (!key.starts_with("ducc.rm.")) continue;
    const auto* known = detail::find_ducc_rm_key(key);
    if (known == nullptr) {
      std::string message = "unknown key '" + key + "' (not a ducc.rm.* key any DUCC release ships or its RM reads)";
      if (auto near = detail::closest_ducc_rm_key(key)) message += "; did you mean " + *near + "?";
      errors.add(file, prop.line, message);
    } else if (!known->used) {
      spdlog::debug("{}:{}: {} ignored: {}", file, prop.line, key, known->what);
    }
  }
  property_reader r(props, file, errors);
  rm_config cfg;
  auto& s = cfg.scheduling.settings;
  auto& rt = cfg.runtime;
  constexpr std::int64_t gb = 1024;
  r.integer("ducc.rm.share.quantum", s.quantum_mb, 1, gb);
  r.integer("ducc.rm.fragmentation.threshold", s.fragmentation_threshold, 0);
  r.boolean("ducc.rm.defragmentation", s.defragmentation);
  r.integer("ducc.rm.initialization.cap", s.initialization_cap, 0);  // 0: no initialization cap, as in DUCC
  r.boolean("ducc.rm.expand.by.doubling", s.expand_by_doubling);
  r.boolean("ducc.rm.prediction", s.use_prediction);
  r.integer("ducc.rm.prediction.fudge", s.prediction_fudge_ms, 0);
  if (props.contains("ducc.rm.global_allotment")) {
    std::uint64_t allotment = 0;
    r.integer("ducc.rm.global_allotment", allotment, 0, gb);
    s.global_allotment_mb = allotment;
  }
  r.integer("ducc.rm.reserve_overage", s.reserve_overage_mb, 0, gb);
  r.integer("ducc.rm.reserved.dram", s.reserved_dram_mb, 0, gb);
  r.integer("ducc.rm.default.memory", s.default_memory_mb, 1, gb);
  r.integer("ducc.rm.default.threads", s.default_threads, 1);
  r.integer("ducc.rm.default.tasks", s.default_tasks, 1);
  if (auto v = r.get("rmbus.rm.preemption.policy")) {  // rmbus extension; DUCC's behaviour unless given
    if (auto p = detail::parse_preemption_policy(v->first)) s.preemption_policy = *p;
    else errors.add(v->second, "rmbus.rm.preemption.policy must be ducc or sparing, not '" + v->first + "'");
  }
  {
    bool use_global = true;  // parsed so a typo is caught; only the global allotment exists (docs)
    r.boolean("ducc.rm.use_global_allotment", use_global);
    std::int64_t override_dram_gb = 0;  // parsed so a typo in its value is caught; a testing aid of DUCC's
    r.integer("ducc.rm.override.dram", override_dram_gb, 0);
  }
  r.integer("ducc.agent.node.metrics.publish.rate", rt.heartbeat_interval_ms, 1, 1, max_period_ms);
  r.integer("ducc.rm.node.stability", rt.node_stability, 1, 1, max_ticks);
  r.integer("ducc.rm.init.stability", rt.init_stability, 0, 1, max_ticks);
  r.boolean("ducc.rm.fast.recovery", rt.fast_recovery);
  r.integer("ducc.orchestrator.state.publish.rate", rt.orchestrator_publish_ms, 1, 1, max_period_ms);
  r.integer("ducc.rm.state.publish.ratio", rt.state_publish_ratio, 1, 1, max_ticks);
  rt.round_timeout_ms = rt.orchestrator_publish_ms;
  rt.settle_ms = rt.heartbeat_interval_ms;
  auto beside_properties = [&](std::string& path) {
    if (!path.empty()) path = relative_to(properties_path.parent_path(), path).string();
  };
  r.text("rmbus.log.file", rt.logging.file);
  beside_properties(rt.logging.file);
  r.integer("rmbus.log.max.bytes", rt.logging.max_bytes, min_log_bytes, 1, max_log_bytes);
  r.integer("rmbus.log.max.files", rt.logging.max_files, 1, 1, max_log_files);
  r.boolean("rmbus.log.compress", rt.logging.compress);
  r.boolean("rmbus.health.enabled", rt.health.enabled);
  r.integer("rmbus.health.disk.warn.percent", rt.health.disk_warn_percent, 0, 1, 100);
  r.boolean("rmbus.accounting.enabled", rt.accounting.enabled);
  r.text("rmbus.accounting.file", rt.accounting.file);
  beside_properties(rt.accounting.file);
  r.integer("rmbus.bus.schedule.changes.full.every", rt.schedule_changes_full_every, 0, 1, 1000000);
  s.epoch_ms = rt.orchestrator_publish_ms * rt.state_publish_ratio;
  read_reliable_heads(props, r, file, errors, rt.ha);

  detail::site_decls site;
  r.text("ducc.jd.host.class", site.jd_host_class);
  r.text("ducc.jd.host.user", site.jd_host_user);
  std::string classes_name = "ducc.classes";
  std::string users_name = "ducc.users";
  r.text("ducc.rm.class.definitions", classes_name);
  r.text("ducc.rm.user.registry", users_name);
  auto classes_at = r.get("ducc.rm.class.definitions");
  source_loc named_at = classes_at ? classes_at->second : source_loc{file, 0};
  auto dir = properties_path.parent_path();
  auto users_path = relative_to(dir, users_name);
  // Optional, as in DUCC: a registry that is not there is no registry. A path that cannot even be looked at
  // (too long, a folder without access) is the key's error, never an exception of the filesystem library.
  std::error_code ec;
  const bool users_exist = std::filesystem::exists(users_path, ec);
  if (ec) {
    auto users_at = r.get("ducc.rm.user.registry");
    errors.add(users_at ? users_at->second : source_loc{file, 0},
               "ducc.rm.user.registry: cannot look at '" + users_path.string() + "': " + ec.message());
  }
  if (!users_exist) users_path.clear();
  auto settings = s;
  cfg.scheduling = read_class_files(relative_to(dir, classes_name), users_path, named_at, site, settings, errors);
  errors.throw_if_any();
  return cfg;
}

}  // namespace rmbus::config
