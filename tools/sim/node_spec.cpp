#include "tools/sim/node_spec.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace rmbus::sim {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Digits only, no sign, at most 12 of them (no overflow possible in 64 bits).
bool parse_count(std::string_view s, std::uint64_t& out) {
  if (s.empty() || s.size() > 12) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  out = v;
  return true;
}

// Pool names and prefixes end up in node names and report columns: keep them to a safe alphabet. DUCC's
// "--default--" pool name must pass, so dashes are allowed anywhere.
bool valid_label(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

[[noreturn]] void fail(std::string_view description, std::string_view group, const std::string& what) {
  throw node_spec_error("node description \"" + std::string(description) + "\": group \"" +
                        std::string(group) + "\": " + what);
}

}  // namespace

bool parse_size_mb(std::string_view text, std::uint64_t& out) {
  text = trim(text);
  if (text.size() < 2) return false;
  const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
  std::uint64_t n = 0;
  if (!parse_count(text.substr(0, text.size() - 1), n)) return false;
  std::uint64_t mb = 0;
  if (unit == 'G') {
    if (n > max_node_memory_mb / 1024) return false;
    mb = n * 1024;
  } else if (unit == 'M') {
    mb = n;
  } else {
    return false;
  }
  if (mb == 0 || mb > max_node_memory_mb) return false;
  out = mb;
  return true;
}

std::string format_size_mb(std::uint64_t memory_mb) {
  if (memory_mb != 0 && memory_mb % 1024 == 0) return std::to_string(memory_mb / 1024) + "G";
  return std::to_string(memory_mb) + "M";
}

std::vector<node_group> parse_node_groups(std::string_view description) {
  std::vector<node_group> groups;
  if (trim(description).empty()) throw node_spec_error("node description is empty (expected e.g. \"4x32G\")");
  std::uint64_t total = 0;
  std::size_t start = 0;
  while (start <= description.size()) {
    const std::size_t comma = description.find(',', start);
    const std::size_t end = comma == std::string_view::npos ? description.size() : comma;
    const std::string_view raw = description.substr(start, end - start);
    const std::string_view text = trim(raw);
    if (text.empty()) fail(description, raw, "empty group (two commas in a row, or a trailing comma)");

    node_group g;
    std::string_view rest = text;
    if (const auto colon = rest.find(':'); colon != std::string_view::npos) {
      g.prefix = std::string(rest.substr(colon + 1));
      rest = rest.substr(0, colon);
      if (!valid_label(g.prefix))
        fail(description, text,
             "name prefix \"" + g.prefix + "\" must be 1-64 letters, digits, '-', '_' or '.'");
    }
    if (const auto at = rest.find('@'); at != std::string_view::npos) {
      g.pool = std::string(rest.substr(at + 1));
      rest = rest.substr(0, at);
      if (!valid_label(g.pool))
        fail(description, text, "pool \"" + g.pool + "\" must be 1-64 letters, digits, '-', '_' or '.'");
    }
    std::string_view size_text = rest;
    if (const auto x = rest.find_first_of("xX"); x != std::string_view::npos) {
      const std::string_view count_text = rest.substr(0, x);
      size_text = rest.substr(x + 1);
      if (!parse_count(count_text, g.count) || g.count == 0)
        fail(description, text,
             "count \"" + std::string(count_text) + "\" must be a whole number of at least 1");
    }
    if (!parse_size_mb(size_text, g.memory_mb)) {
      const std::string s(size_text);
      if (s.empty()) fail(description, text, "missing the memory size (expected e.g. 64G or 512M)");
      const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
      if (last != 'G' && last != 'M') fail(description, text, "size \"" + s + "\" needs a G or M suffix");
      fail(description, text,
           "size \"" + s + "\" must be a whole number above 0 and at most " +
               format_size_mb(max_node_memory_mb));
    }
    if (g.prefix.empty()) g.prefix = g.pool.empty() ? "node" : g.pool;
    total += g.count;
    if (total > max_nodes_total)
      fail(description, text, "more than " + std::to_string(max_nodes_total) + " nodes in total");
    groups.push_back(std::move(g));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return groups;
}

std::vector<node_def> expand_nodes(const std::vector<node_group>& groups) {
  std::uint64_t total = 0;
  std::map<std::string, std::uint64_t> per_prefix;  // nodes named so far, and how many in all (for padding)
  for (const auto& g : groups) {
    total += g.count;
    if (total > max_nodes_total)
      throw node_spec_error("more than " + std::to_string(max_nodes_total) + " nodes");
    per_prefix[g.prefix] += g.count;
  }
  std::map<std::string, std::uint64_t> next;
  std::set<std::string> names;
  std::vector<node_def> nodes;
  nodes.reserve(static_cast<std::size_t>(total));
  for (const auto& g : groups) {
    const std::size_t width = std::max<std::size_t>(3, std::to_string(per_prefix[g.prefix]).size());
    for (std::uint64_t i = 0; i < g.count; ++i) {
      std::string number = std::to_string(++next[g.prefix]);
      if (number.size() < width) number.insert(0, width - number.size(), '0');
      node_def n{g.prefix + "-" + number, g.memory_mb, g.pool};
      if (!names.insert(n.name).second)
        throw node_spec_error("node name \"" + n.name + "\" would be used twice");
      nodes.push_back(std::move(n));
    }
  }
  return nodes;
}

std::vector<node_def> parse_nodes(std::string_view description) {
  return expand_nodes(parse_node_groups(description));
}

}  // namespace rmbus::sim
