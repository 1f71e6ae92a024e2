#pragma once
// Which nodepool a node belongs to, by DUCC's rule (shared/ducc-rm.md sections 2.1 and 4.2): first the regular
// expression rules of `.regex` nodefiles / node_patterns (pools in definition order, first match wins), each
// matched in full against the node's name, its short name and its address; then an exact name (as reported,
// its short form, or a listed short name qualified with the pool's domain); then the address; a node named
// nowhere goes to the first top-level nodepool.
//
// Pure and deterministic: the answer depends only on the configuration and the (name, ip) asked about.
// Regular expressions are compiled once, at construction. Thread-safety: const after construction; place() may
// be called from any number of threads.

#include <map>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "core/policy.hpp"

namespace rmbus::config {

struct placement {
  std::string top_level;  // the top-level nodepool (which scheduler owns the node)
  std::string nodepool;   // the pool the node is in (the top-level pool itself, or one nested in it)

  bool operator==(const placement&) const = default;
};

class node_placement {
 public:
  // Longest text matched against a regular expression (DNS names are at most 253 characters); longer names and
  // addresses are only looked up exactly.
  static constexpr std::size_t max_matched_length = 253;

  // REQUIRES: `cfg` was produced by a loader (at least one nodepool, parents sound, patterns compile).
  explicit node_placement(const core::scheduler_config& cfg);

  placement place(std::string_view name, std::string_view ip) const;

 private:
  struct rule {
    std::regex pattern;
    std::size_t pool;
  };
  placement of_pool(std::size_t pool) const;
  static std::string_view short_name(std::string_view name);

  std::vector<std::string> names_;      // pool names, definition order
  std::vector<std::string> top_level_;  // top-level pool of each pool
  std::vector<rule> rules_;
  std::map<std::string, std::size_t, std::less<>> exact_;  // every listed spelling -> pool
  std::size_t default_pool_ = 0;
};

}  // namespace rmbus::config
