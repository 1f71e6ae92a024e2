#pragma once
// Every mark an operator puts on a node, in one place: varied off (DUCC's vary_off: unschedulable, its
// fair-share work evicted) and drained (Slurm's DRAIN: no new work, what runs finishes). Eviction holds the
// one copy of a process's marks (actors/eviction.cpp); it sends them to the schedulers, again after a
// reconfiguration, and lists them for admin. Marks outlive the node's absence: a node the configuration
// expects may be marked before it first reports, and keeps its marks while it is down. They do not survive
// a restart of the RM (as in DUCC).
//
// Thread-safety: none; one owner.

#include <set>
#include <string>
#include <vector>

namespace rmbus::actors {

enum class admin_mark { varied_off, drained };
const char* to_string(admin_mark m);  // "varied_off", "drained"

class admin_marks {
 public:
  // Sets or clears `mark` on `node`; whether it was already so (set while set, or cleared while clear).
  bool set(admin_mark mark, const std::string& node, bool on);
  bool has(admin_mark mark, const std::string& node) const;
  // Every node carrying `mark`, by name.
  const std::set<std::string>& nodes(admin_mark mark) const;
  // The marks of one node, in enum order.
  std::vector<admin_mark> of(const std::string& node) const;

 private:
  std::set<std::string>& set_of(admin_mark mark);
  std::set<std::string> varied_off_;
  std::set<std::string> drained_;
};

}  // namespace rmbus::actors
