#include "config/startup_summary.hpp"

#include <sstream>

#include "config/detail/values.hpp"

namespace rmbus::config {

namespace {

std::string gb(std::uint64_t mb) {
  if (mb % 1024 == 0) return std::to_string(mb / 1024) + " GB";
  return std::to_string(mb) + " MB";
}

// The policy as the configuration files spell it.
std::string policy_name(core::policy p) { return std::string{detail::policy_name(p)}; }

std::string seconds(std::int64_t ms) {
  std::ostringstream o;
  o << ms / 1000;
  if (ms % 1000 != 0) o << "." << (ms % 1000) / 100;
  o << " s";
  return o.str();
}

}  // namespace

std::vector<std::string> startup_summary(const rm_config& cfg, const startup_facts& facts) {
  std::vector<std::string> out;
  const auto& sc = cfg.scheduling;
  const auto& rt = cfg.runtime;
  out.push_back("configuration: " + facts.source + (facts.roles == "all" ? "" : "; roles " + facts.roles));
  bool first_top = true;
  for (const auto& p : sc.nodepools) {
    std::string line = "nodepool " + p.name;
    if (!p.parent.empty()) line += " (in " + p.parent + ")";
    line += ": ";
    if (p.parent.empty())
      line += "quantum " + gb(p.quantum_mb != 0 ? p.quantum_mb : sc.settings.quantum_mb) + ", ";
    line += std::to_string(p.nodes.size()) + " node(s) expected";
    if (!p.node_patterns.empty())
      line += " and any matching " + std::to_string(p.node_patterns.size()) + " pattern(s)";
    if (p.parent.empty() && first_top) line += ", and every node no pool names";
    if (p.parent.empty()) first_top = false;
    std::string classes;
    for (const auto& c : sc.classes) {
      if (c.nodepool != p.name) continue;
      classes += (classes.empty() ? "" : ", ") + c.name + " (" + policy_name(c.policy);
      if (c.policy == core::policy::fair_share) classes += " weight " + std::to_string(c.weight);
      classes += std::string{c.is_default ? ", default" : ""} + ")";
    }
    line += "; classes: " + (classes.empty() ? std::string{"none"} : classes);
    out.push_back(line);
  }
  // The policy in force, however it was set (native key, ducc.properties, or neither: "ducc").
  out.push_back(std::string{"preemption policy: "} +
                (sc.settings.preemption_policy == core::preemption_policy::sparing
                     ? "sparing (preempts only for starved claimants, only what they need)"
                     : "ducc (every fair-share job above its count sheds the surplus)"));
  std::string endpoints = "endpoints: bus pub " + rt.bus_pub + ", bus sub " + rt.bus_sub;
  endpoints += facts.embedded_forwarder ? " (embedded forwarder)" : " (an existing forwarder)";
  endpoints += ", admin " + rt.admin + ", metrics " + facts.metrics;
  if (rt.security.curve) endpoints += "; CURVE on";
  out.push_back(endpoints);
  const auto wait_ms = rt.heartbeat_interval_ms * std::max(0, rt.init_stability);
  std::string start = "scheduling starts " +
                      (wait_ms == 0 ? std::string{"with the first work map"}
                                    : "after init stability: " + std::to_string(rt.init_stability) +
                                          " heartbeat intervals of " + seconds(rt.heartbeat_interval_ms) +
                                          " = " + seconds(wait_ms) + " from now");
  if (rt.fast_recovery && wait_ms != 0)
    start += ", or at once on a work map naming live processes (a restart)";
  out.push_back(start);
  return out;
}

}  // namespace rmbus::config
