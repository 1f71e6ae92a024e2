#include "actors/overbooking.hpp"

#include <algorithm>
#include <unordered_map>

namespace rmbus::actors {

void note_shares_counted(std::vector<overbooked_node>& found, const messages::job_schedule& job) {
  for (const auto& s : job.shares) {
    if (!occupies(s.status)) continue;
    auto it = std::lower_bound(found.begin(), found.end(), s.node,
                               [](const overbooked_node& o, const std::string& n) { return o.node < n; });
    if (it != found.end() && it->node == s.node) {
      it->shares.push_back(s.id);
      it->statuses.push_back(s.status);
    }
  }
}

std::vector<overbooked_node> find_overbooked_nodes(const std::vector<messages::job_schedule>& jobs,
                                                   const node_quanta_lookup& quanta_of) {
  // Quanta held per node: one pass over every share, keyed by views into `jobs` (no copies of names).
  struct holding {
    std::uint64_t quanta = 0;
    bool starts = false;  // a `new` share is there
  };
  std::unordered_map<std::string_view, holding> held;
  for (const auto& j : jobs)
    for (const auto& s : j.shares)
      if (occupies(s.status)) {
        auto& h = held[s.node];
        h.quanta += s.quanta;
        h.starts = h.starts || s.status == messages::share_status::new_;
      }
  std::vector<overbooked_node> out;
  for (const auto& [node, h] : held) {
    if (!h.starts) continue;
    const auto quanta = h.quanta;
    const auto order = quanta_of(node);
    if (!order || quanta <= *order) continue;
    out.push_back({std::string{node}, *order, quanta, {}, {}});
  }
  if (out.empty()) return out;
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  // Only for the few nodes found: the share ids, for the operator's log line.
  for (const auto& j : jobs) note_shares_counted(out, j);
  return out;
}

std::string describe(const std::vector<overbooked_node>& nodes) {
  std::string out;
  for (const auto& n : nodes) {
    if (!out.empty()) out += "; ";
    out += n.node + " holds " + std::to_string(n.held) + " of " + std::to_string(n.quanta) + " quanta (";
    for (std::size_t i = 0; i < n.shares.size(); ++i) {
      out += (i > 0 ? ", " : "") + n.shares[i];
      if (i < n.statuses.size()) out += " " + std::string{messages::to_string(n.statuses[i])};
    }
    out += ")";
  }
  return out;
}

}  // namespace rmbus::actors
