#include "config/render.hpp"

#include <sstream>
#include <string>

#include "config/detail/values.hpp"

namespace rmbus::config {

namespace {

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        // TOML allows no control character unescaped in a basic string, DEL (0x7f) included.
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          static const char* hex = "0123456789abcdef";
          out += "\\u00";
          out += hex[(c >> 4) & 0xf];
          out += hex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string quote_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + quote(items[i]);
  return out + "]";
}

const char* yes_no(bool b) { return b ? "true" : "false"; }

std::string size(std::uint64_t mb) { return quote(detail::size_text(mb)); }

}  // namespace

std::string render(const rm_config& cfg) {
  std::ostringstream o;
  const auto& s = cfg.scheduling.settings;
  const auto& rt = cfg.runtime;
  o << "# Resolved rmbus configuration: every default written out, class inheritance flattened.\n\n";
  o << "[scheduling]\n"
    << "quantum = " << size(s.quantum_mb) << "\n"
    << "fragmentation_threshold = " << s.fragmentation_threshold << "\n"
    << "defragmentation = " << yes_no(s.defragmentation) << "\n"
    << "initialization_cap = " << s.initialization_cap << "\n"
    << "expand_by_doubling = " << yes_no(s.expand_by_doubling) << "\n"
    << "use_prediction = " << yes_no(s.use_prediction) << "\n"
    << "prediction_fudge_ms = " << s.prediction_fudge_ms << "\n";
  if (s.global_allotment_mb) o << "global_allotment = " << size(*s.global_allotment_mb) << "\n";
  else o << "# global_allotment: unlimited\n";
  o << "reserve_overage = " << size(s.reserve_overage_mb) << "\n"
    << "reserved_dram = " << size(s.reserved_dram_mb) << "\n"
    << "default_memory = " << size(s.default_memory_mb) << "\n"
    << "default_threads = " << s.default_threads << "\n"
    << "default_tasks = " << s.default_tasks << "\n"
    << "preemption_policy = \"" << detail::preemption_policy_name(s.preemption_policy) << "\"\n"
    << "jd_host_user = \"\"   # class user lists below already include it\n"
    << "# epoch_ms = " << s.epoch_ms << " (orchestrator_publish_ms x state_publish_ratio)\n\n";
  o << "[timing]\n"
    << "heartbeat_interval_ms = " << rt.heartbeat_interval_ms << "\n"
    << "node_stability = " << rt.node_stability << "\n"
    << "init_stability = " << rt.init_stability << "\n"
    << "fast_recovery = " << yes_no(rt.fast_recovery) << "\n"
    << "orchestrator_publish_ms = " << rt.orchestrator_publish_ms << "\n"
    << "state_publish_ratio = " << rt.state_publish_ratio << "\n"
    << "round_timeout_ms = " << rt.round_timeout_ms << "\n"
    << "mass_loss_percent = " << rt.mass_loss_percent << "\n"
    << "mass_loss_evict_percent = " << rt.mass_loss_evict_percent << "\n"
    << "settle_ms = " << rt.settle_ms << "\n\n";
  o << "[bus]\n"
    << "pub = " << quote(rt.bus_pub) << "\n"
    << "sub = " << quote(rt.bus_sub) << "\n"
    << "admin = " << quote(rt.admin) << "\n"
    << "metrics = " << quote(rt.metrics) << "\n"
    << "accept_any_orchestrator = " << yes_no(rt.accept_any_orchestrator) << "\n"
    << "schedule_changes_full_every = " << rt.schedule_changes_full_every << "\n\n";
  o << "[log]\nlevel = " << quote(rt.log_level) << "\n";
  if (!rt.logging.file.empty()) o << "file = " << quote(rt.logging.file) << "\n";
  o << "max_bytes = " << rt.logging.max_bytes << "\n"
    << "max_files = " << rt.logging.max_files << "\n"
    << "compress = " << yes_no(rt.logging.compress) << "\n\n";
  o << "[health]\nenabled = " << yes_no(rt.health.enabled) << "\n"
    << "disk_warn_percent = " << rt.health.disk_warn_percent << "\n\n";
  o << "[accounting]\nenabled = " << yes_no(rt.accounting.enabled) << "\n";
  if (!rt.accounting.file.empty()) o << "file = " << quote(rt.accounting.file) << "\n";
  o << "\n";
  if (rt.ha.enabled) {
    o << "[ha]\nenabled = true\n"
      << "beacon_ms = " << rt.ha.beacon_ms << "\n"
      << "takeover_ms = " << rt.ha.takeover_ms << "\n"
      << "rank = " << rt.ha.rank << "\n";
    if (!rt.ha.advertise_admin.empty()) o << "advertise_admin = " << quote(rt.ha.advertise_admin) << "\n";
    o << "\n";
  }
  o << "[limits]\n"
    << "max_body_bytes = " << rt.limits.max_body_bytes << "\n"
    << "max_string_bytes = " << rt.limits.max_string_bytes << "\n"
    << "max_array_len = " << rt.limits.max_array_len << "\n"
    << "max_map_len = " << rt.limits.max_map_len << "\n"
    << "max_depth = " << rt.limits.max_depth << "\n"
    << "max_nodes = " << rt.limits.max_nodes << "\n"
    << "forget_down_ms = " << rt.limits.forget_down_ms << "\n"
    << "max_heartbeats_queued = " << rt.limits.max_heartbeats_queued << "\n";
  if (rt.security.curve) {
    o << "\n[security]\ncurve = true\n"
      << "key = " << quote(rt.security.key) << "\n"
      << (rt.security.server_key.empty() ? std::string{} : "server_key = " + quote(rt.security.server_key) + "\n")
      << "keys = " << quote(rt.security.keys) << "\n";
  }
  // DUCC allows one pool without a node source, and a node no pool names goes to the first top-level pool,
  // whatever it lists. A pool that lists no node although it has a source (a nodefile naming none) is written
  // `nodes = []`, so that reading the rendering back does not find two pools without one.
  std::string first_top_level;
  for (const auto& p : cfg.scheduling.nodepools)
    if (p.parent.empty()) {
      first_top_level = p.name;
      break;
    }
  bool one_unlisted = false;
  for (const auto& p : cfg.scheduling.nodepools) {
    o << "\n[[nodepool]]\nname = " << quote(p.name) << "\n";
    if (!p.parent.empty()) o << "parent = " << quote(p.parent) << "\n";
    else o << "quantum = " << size(p.quantum_mb == 0 ? s.quantum_mb : p.quantum_mb) << "\n";
    o << "search_order = " << p.search_order << "\n";
    if (!p.domain.empty()) o << "domain = " << quote(p.domain) << "\n";
    if (!p.nodes.empty()) o << "nodes = " << quote_list(p.nodes) << "\n";
    if (!p.node_patterns.empty()) o << "node_patterns = " << quote_list(p.node_patterns) << "\n";
    if (!p.nodes.empty() || !p.node_patterns.empty()) continue;
    if (one_unlisted) {
      o << "nodes = []  # lists no node\n";
    } else if (p.name == first_top_level) {
      o << "# no node list: takes every node no other pool names\n";
    } else {
      o << "# no node list: a node no pool names goes to the first top-level pool, " << quote(first_top_level) << "\n";
    }
    one_unlisted = true;
  }
  for (const auto& c : cfg.scheduling.classes) {
    o << "\n[[class]]\nname = " << quote(c.name) << "\n"
      << "policy = \"" << detail::policy_name(c.policy) << "\"\n"
      << "priority = " << c.priority << "\n"
      << "weight = " << c.weight << "\n"
      << "nodepool = " << quote(c.nodepool) << "\n"
      << "initialization_cap = " << c.initialization_cap << "\n"
      << "expand_by_doubling = " << yes_no(c.expand_by_doubling) << "\n"
      << "use_prediction = " << yes_no(c.use_prediction) << "\n"
      << "prediction_fudge_ms = " << c.prediction_fudge_ms << "\n"
      << "max_processes = " << c.max_processes << "\n"
      << "users = " << quote_list(c.users) << (c.users.empty() ? "   # everyone" : "") << "\n"
      << "default = " << yes_no(c.is_default) << "\n";
    // rmbus extensions: printed only when set, so that a DUCC-only configuration renders as before.
    if (c.reclaim_grace_ms != 0) o << "reclaim_grace_ms = " << c.reclaim_grace_ms << "\n";
    if (c.probe_first) o << "probe_first = true\n";
  }
  for (const auto& u : cfg.scheduling.users) {
    o << "\n[[user]]\nname = " << quote(u.user) << "\n";
    if (u.max_allotment_mb) o << "max_allotment = " << size(*u.max_allotment_mb) << "\n";
  }
  for (const auto& g : cfg.scheduling.groups) {
    o << "\n[[group]]\nname = " << quote(g.name) << "\n"
      << "parent = " << quote(g.parent) << "\n"
      << "weight = " << g.weight << "\n"
      << "priority = " << g.priority << "\n"
      << "users = " << quote_list(g.users) << "\n";
  }
  return o.str();
}

}  // namespace rmbus::config
