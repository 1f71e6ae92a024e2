#pragma once
// What a configuration file SAID, before defaults, inheritance and cross-checks: the meeting point of the two
// configuration roads. The TOML reader and the ducc.classes reader each turn their syntax into these
// declarations (checking types and ranges of single values, which they can locate best); resolve_site()
// then applies the same rules to both (inheritance, defaults, every cross-reference check), which is why both
// roads give the same in-memory configuration and the same errors.
//
// Every value remembers where it was written, so a rule broken anywhere names the file and line.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config_error.hpp"
#include "core/policy.hpp"

namespace rmbus::config::detail {

template <class T>
struct located {
  T value{};
  source_loc loc;
};

struct nodepool_decl {
  std::string name;
  source_loc loc;  // the stanza / table header
  std::optional<located<std::string>> parent;
  std::optional<located<std::uint64_t>> quantum_mb;
  std::optional<located<int>> search_order;
  std::optional<located<std::string>> domain;
  // True when the pool names its nodes at all (a nodefile key, or node lists in TOML). DUCC allows at most one
  // pool without: it takes every node nobody else names.
  bool has_node_source = false;
  std::vector<located<std::string>> nodes;     // as read, imports expanded, each with its own file and line
  std::vector<located<std::string>> patterns;  // regular expressions
};

struct class_decl {
  std::string name;
  source_loc loc;
  std::optional<located<std::string>> parent;  // class to inherit keys from
  bool is_abstract = false;                    // template only; never inherited
  std::optional<located<core::policy>> policy;
  std::optional<located<int>> priority;
  std::optional<located<int>> weight;
  std::optional<located<std::string>> nodepool;
  std::optional<located<int>> initialization_cap;
  std::optional<located<bool>> expand_by_doubling;
  std::optional<located<bool>> use_prediction;
  std::optional<located<std::int64_t>> prediction_fudge_ms;
  std::optional<located<int>> max_processes;
  std::optional<located<std::vector<std::string>>> users;
  std::optional<located<bool>> is_default;  // never inherited
  // rmbus extensions (docs/configuration.md)
  std::optional<located<std::int64_t>> reclaim_grace_ms;
  std::optional<located<bool>> probe_first;
};

struct user_decl {
  std::string name;
  source_loc loc;
  std::optional<located<std::uint64_t>> max_allotment_mb;
  // max_allotment.<class> values: validated (the class must exist) but, as in DUCC, never applied.
  std::vector<located<std::pair<std::string, std::uint64_t>>> class_allotments_mb;
};

// A share group (native [[group]] only; DUCC has none).
struct group_decl {
  std::string name;
  source_loc loc;
  std::optional<located<std::string>> parent;  // a FAIR_SHARE class or another group
  std::optional<located<int>> weight;
  std::optional<located<int>> priority;
  std::optional<located<std::vector<std::string>>> users;
};

struct site_decls {
  std::vector<nodepool_decl> nodepools;
  std::vector<class_decl> classes;
  std::vector<user_decl> users;
  std::vector<group_decl> groups;
  std::string jd_host_class = "JobDriver";  // ducc.jd.host.class: this class authorises jd_host_user
  std::string jd_host_user = "System";      // ducc.jd.host.user
  source_loc whole;                         // the file to blame for "no nodepool at all"
};

// Applies inheritance and defaults, checks every cross-reference, and returns the policy part of the
// configuration. Problems are added to `errors` (the result is then meaningless). `settings` supplies the
// global defaults of class keys and is copied into the result.
core::scheduler_config resolve_site(const site_decls& site, const core::scheduling_settings& settings,
                                    error_list& errors);

}  // namespace rmbus::config::detail
