#pragma once
// The compact description of a simulated cluster: which nodes exist, how much memory each offers, and what
// they are called.
//
//   description := group ("," group)*
//   group       := [COUNT "x"] SIZE ["@" POOL] [":" PREFIX]
//   SIZE        := integer followed by G or M (case-insensitive): 64G = 65536 MB, 512M = 512 MB
//
// Examples: "200x64G@default,20x256G@bigmem", "4x32G", "2x16G:small,1x128G:big".
//
// Nodes are named <prefix>-NNN (zero-padded to at least three digits), numbered from 001 per prefix across
// the whole description, so "2x32G,2x64G" gives node-001..node-004. The prefix defaults to the pool name,
// or "node" when no pool is given. The pool after "@" is informational only (it labels nodes in reports):
// rmbus decides a node's nodepool from ITS configuration (node lists and patterns match the node's name), so
// to land nodes in a pool the names must be ones that configuration lists; the prefix is there for that.
//
// Pure: no I/O. Every error names the offending group and what is wrong with it.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rmbus::sim {

// Bounds on untrusted descriptions: big enough for any simulation this tool can drive, small enough that a
// typo ("2000000x64G") is an error and not an attempt to allocate millions of agents.
inline constexpr std::uint64_t max_nodes_total = 10000;
inline constexpr std::uint64_t max_node_memory_mb = 64ULL * 1024 * 1024;  // 64 TB

struct node_group {
  std::uint64_t count = 1;
  std::uint64_t memory_mb = 0;
  std::string pool;    // informational label, may be empty
  std::string prefix;  // name prefix (defaulted: pool, else "node")

  friend bool operator==(const node_group&, const node_group&) = default;
};

struct node_def {
  std::string name;
  std::uint64_t memory_mb = 0;
  std::string pool;  // informational label from the description

  friend bool operator==(const node_def&, const node_def&) = default;
};

class node_spec_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses a description into its groups. Throws node_spec_error naming the bad group, e.g.
// `node description "4x32Q": group "4x32Q": size "32Q" needs a G or M suffix`.
std::vector<node_group> parse_node_groups(std::string_view description);

// Expands groups into named nodes, in description order. Throws node_spec_error when two groups would
// produce the same name (impossible through numbering per prefix, kept as a guard) or the total exceeds
// max_nodes_total.
std::vector<node_def> expand_nodes(const std::vector<node_group>& groups);

// parse_node_groups then expand_nodes.
std::vector<node_def> parse_nodes(std::string_view description);

// "64G" when the size is whole gigabytes, else "1536M": the inverse of the SIZE syntax.
std::string format_size_mb(std::uint64_t memory_mb);

// A size as used by scenario files and node descriptions: digits then G or M (case-insensitive). Returns
// false (leaving `out` untouched) when the text is not such a size or is zero or larger than
// max_node_memory_mb.
bool parse_size_mb(std::string_view text, std::uint64_t& out);

}  // namespace rmbus::sim
