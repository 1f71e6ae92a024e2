#pragma once
// The scheduler's policy as plain, already-validated values: resource classes, the nodepool tree, per-user
// allotments and the global scheduling settings. config/ builds these from files (native TOML or DUCC's own
// ducc.classes + ducc.properties) and resolves every default, so core/ never sees an unset field.
//
// Defaults are those of DUCC's shipped default.ducc.properties (see shared/ducc-rm.md section 4.3).
// Memory is in MB here, as on the wire (1 GB = 1024 MB); the scheduler converts it to quanta.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rmbus::core {

enum class policy { fair_share, fixed_share, reserve };

// How fair-share preemption is decided (core/preemption_policy.hpp). `ducc`: every job above its count sheds
// its surplus at once, as DUCC does. `sparing` (rmbus extension): preempt only as much as starved claimants
// need, from the users furthest above their share, and serve those claimants first.
enum class preemption_policy { ducc, sparing };

// One resource class (DUCC "Class" stanza) after inheritance and with every default resolved.
struct resource_class {
  std::string name;
  core::policy policy = core::policy::fair_share;
  int priority = 10;           // lower is scheduled first; all classes of one priority share one policy
  int weight = 100;            // FAIR_SHARE apportionment weight, > 0
  std::string nodepool;        // the nodepool the class schedules in
  int initialization_cap = 1;  // processes allowed until the first one has initialized
  bool expand_by_doubling = true;
  bool use_prediction = true;
  std::int64_t prediction_fudge_ms = 120000;
  int max_processes = 0;             // 0 = no class limit
  std::vector<std::string> users;    // users allowed in the class; empty = everyone
  bool is_default = false;           // default class for its policy (fair share: jobs; reserve: other work)
  // rmbus extensions (docs/ducc-differences.md). A FAIR_SHARE process of this class chosen for preemption
  // keeps running this long (ms) with a deadline, and is preempted only if the need still stands then.
  std::int64_t reclaim_grace_ms = 0;
  // Each new job gets exactly one process until one has initialized and finished a work item.
  bool probe_first = false;

  bool operator==(const resource_class&) const = default;
};

// One nodepool (DUCC "Nodepool" stanza). A pool without a parent is top-level: top-level pools are
// scheduled independently of one another; nested pools live inside their top-level pool.
struct nodepool_def {
  std::string name;
  std::string parent;                       // empty: top-level
  std::uint64_t quantum_mb = 0;             // top-level pools only; 0 = the global quantum
  int search_order = 100;                   // lower is searched first for expansion
  std::vector<std::string> nodes;           // node names (short or fully qualified)
  std::vector<std::string> node_patterns;   // ECMAScript regular expressions matched against name or ip
  std::string domain;                       // DNS domain qualifying this pool's short node names (DUCC
                                            // `domain`); config/ copies the first pool's domain to pools
                                            // that set none

  bool operator==(const nodepool_def&) const = default;
};

// Per-user override of the allotment for non-preemptable work (DUCC "User" stanza).
struct user_limit {
  std::string user;
  std::optional<std::uint64_t> max_allotment_mb;

  bool operator==(const user_limit&) const = default;
};

struct scheduling_settings {
  std::uint64_t quantum_mb = 1024;             // ducc.rm.share.quantum (1 GB)
  int fragmentation_threshold = 8;             // ducc.rm.fragmentation.threshold
  bool defragmentation = true;                 // ducc.rm.defragmentation
  int initialization_cap = 1;                  // ducc.rm.initialization.cap
  bool expand_by_doubling = true;              // ducc.rm.expand.by.doubling
  bool use_prediction = true;                  // ducc.rm.prediction
  std::int64_t prediction_fudge_ms = 120000;   // ducc.rm.prediction.fudge
  std::int64_t epoch_ms = 10000;               // orchestrator publish rate x ducc.rm.state.publish.ratio
  std::optional<std::uint64_t> global_allotment_mb;  // ducc.rm.global_allotment; unset = unlimited
  std::uint64_t reserve_overage_mb = 0;        // ducc.rm.reserve_overage
  std::uint64_t reserved_dram_mb = 0;          // ducc.rm.reserved.dram, subtracted from every node
  std::uint64_t default_memory_mb = 4096;      // ducc.rm.default.memory
  int default_threads = 1;                     // ducc.rm.default.threads
  int default_tasks = 10;                      // ducc.rm.default.tasks
  core::preemption_policy preemption_policy = core::preemption_policy::ducc;  // rmbus extension


  bool operator==(const scheduling_settings&) const = default;
};

// One group of a FAIR_SHARE class's share tree (native [[group]]; IBM EGO's consumer tree, seed 002): a
// project or department between the class and its users, nested to any depth. Its parent is the class (a
// top-level group) or another group of the same class; a user listed here has its work in that class
// counted under this group. Users in no group stay directly under the class, as in DUCC. Among siblings,
// groups of a lower `priority` number are served first (DUCC's convention for class priorities); equal
// priorities share by `weight`. A user is a consumer of weight 1 and priority 0 among its siblings.
struct share_group {
  std::string name;
  std::string parent;               // a class name, or another group's name
  int weight = 1;                   // share ratio among its siblings, > 0
  int priority = 0;                 // share priority among its siblings: lower is served first
  std::vector<std::string> users;   // users counted under this group within its class

  bool operator==(const share_group&) const = default;
};

// Everything the scheduling core needs to know about the site's policy.
struct scheduler_config {
  scheduling_settings settings;
  std::vector<nodepool_def> nodepools;   // in definition order; the first top-level pool takes unknown nodes
  std::vector<resource_class> classes;
  std::vector<user_limit> users;
  std::vector<share_group> groups;       // in definition order; empty: DUCC's class > user > job

  bool operator==(const scheduler_config&) const = default;
};

}  // namespace rmbus::core
