#include "config/detail/ducc_rm_keys.hpp"

#include <algorithm>

#include "config/detail/closest_name.hpp"

namespace rmbus::config::detail {

namespace {

std::vector<ducc_rm_key> sorted(std::vector<ducc_rm_key> keys) {
  std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return keys;
}

}  // namespace

const std::vector<ducc_rm_key>& ducc_rm_keys() {
  static const std::vector<ducc_rm_key> keys = sorted({
      // Used.
      {"ducc.rm.share.quantum", true, "quantum of top-level pools without share-quantum (GB)"},
      {"ducc.rm.class.definitions", true, "class file, relative to the properties file"},
      {"ducc.rm.user.registry", true, "optional user registry, relative to the properties file"},
      {"ducc.rm.state.publish.ratio", true,
       "work maps per scheduling round; with the orchestrator's rate, the epoch"},
      {"ducc.rm.node.stability", true, "missed heartbeats before a node is missing"},
      {"ducc.rm.init.stability", true, "heartbeat intervals before the first round"},
      {"ducc.rm.fast.recovery", true, "start on the first work map once nodes report"},
      {"ducc.rm.initialization.cap", true, "processes until one has initialized; 0: no initialization cap"},
      {"ducc.rm.expand.by.doubling", true, "ramp up by doubling after initialization"},
      {"ducc.rm.prediction", true, "cut the cap by the projected end of the work"},
      {"ducc.rm.prediction.fudge", true, "ms added to the prediction horizon"},
      {"ducc.rm.fragmentation.threshold", true, "processes below which a job is needy (defragmentation)"},
      {"ducc.rm.defragmentation", true, "run defragmentation"},
      {"ducc.rm.global_allotment", true, "per-user non-preemptable memory (GB)"},
      {"ducc.rm.reserve_overage", true, "GB a reservation's machine may exceed its request"},
      {"ducc.rm.reserved.dram", true, "GB held back from every node"},
      {"ducc.rm.default.memory", true, "GB of a request that names none"},
      {"ducc.rm.default.threads", true, "threads per process of a job that names none"},
      {"ducc.rm.default.tasks", true, "work items of a job that names none"},
      // Ignored: DUCC's JMS endpoints (rmbus talks over its bus: docs/protocol.md).
      {"ducc.rm.state.update.endpoint", false, "DUCC's JMS topic for RM state; rmbus publishes on its bus"},
      {"ducc.rm.state.update.endpoint.type", false, "DUCC's JMS endpoint type"},
      {"ducc.rm.admin.endpoint", false,
       "DUCC's JMS admin queue; rmbus serves admin requests on its admin endpoint"},
      {"ducc.rm.admin.endpoint.type", false, "DUCC's JMS endpoint type"},
      {"ducc.rm.via.or.admin.endpoint", false,
       "DUCC 2.2+: the orchestrator's JMS queue relaying admin requests to the RM; rmbus has no relay"},
      {"ducc.rm.via.or.admin.endpoint.type", false, "DUCC's JMS endpoint type"},
      // Ignored: DUCC's Java plumbing.
      {"ducc.rm.configuration.class", false, "DUCC's Java class for the RM component"},
      {"ducc.rm.scheduler", false, "DUCC's Java class for the scheduler; rmbus has one scheduler"},
      {"ducc.rm.persistence.impl", false, "DUCC's Java class for RM state in its database; rmbus keeps none"},
      {"ducc.rm.jvm.args", false, "the RM's JVM options"},
      // Ignored: features DUCC itself no longer uses, or testing aids.
      {"ducc.rm.eviction.policy", false,
       "vestigial in DUCC's RM (shared/ducc-rm.md 1.9); rmbus has one rule"},
      {"ducc.rm.use_global_allotment", false, "type-checked; only the global allotment exists"},
      {"ducc.rm.override.dram", false, "type-checked; DUCC's testing aid forcing every node's size"},
      {"ducc.rm.state.publish.rate", false,
       "DUCC 1.x: the RM's own publication period; later releases schedule per work map "
       "(state.publish.ratio)"},
  });
  return keys;
}

const ducc_rm_key* find_ducc_rm_key(std::string_view name) {
  const auto& keys = ducc_rm_keys();
  auto it = std::lower_bound(keys.begin(), keys.end(), name,
                             [](const auto& k, std::string_view n) { return k.name < n; });
  return it != keys.end() && it->name == name ? &*it : nullptr;
}

std::optional<std::string> closest_ducc_rm_key(std::string_view name) {
  std::vector<std::string_view> names;
  for (const auto& k : ducc_rm_keys()) names.push_back(k.name);
  return closest_name(name, names);
}

}  // namespace rmbus::config::detail
