#pragma once
// The last line of defence before a schedule is published: the RM never tells the orchestrator to start a
// process on a node that it would put above its order.
//
// Publication applies the rule to every round before it goes out, over the nodes the round's changes touch
// (actors/plan_tables.hpp); find_overbooked_nodes applies it to a whole schedule. A node's holding is the quanta of its shares
// that are `new`, `running` or `preempt` (a preempted process still runs until the work map shows it
// gone); `evict` shares are left out, since the protocol tells the orchestrator to consider them gone (a
// node that came back smaller lists the shares above its new size as `evict`). A node is overbooked when
// its holding is above its order and at least one of its shares is `new`: a `new` share is a start the
// orchestrator would carry out. A node above its order by running processes alone is what the orchestrator
// reported (a process it started late, recovered); publishing it starts nothing, and holding it back would
// also hold back the preemptions that resolve it. A bug anywhere upstream (a scheduler that forgot what its
// predecessor granted, two generations of a pool merged) then costs one round, never an oversubscribed
// node: publication publishes the pool's last good plan instead.
//
// Without CAF, so that it can be fed a schedule directly in tests. Not thread-safe; plain functions.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/rm_state.hpp"

namespace rmbus::actors {

struct overbooked_node {
  std::string node;
  std::uint64_t quanta = 0;  // the node's order
  std::uint64_t held = 0;    // quanta of its new, running and preempted shares
  std::vector<std::string> shares;  // every share counted there, in the order listed
  std::vector<messages::share_status> statuses;  // theirs, in the same order

  friend bool operator==(const overbooked_node&, const overbooked_node&) = default;
};

// The node's order in quanta, or nothing when the node is not known (then it cannot be checked).
using node_quanta_lookup = std::function<std::optional<std::uint64_t>(std::string_view node)>;

// Whether a share of this status counts in its node's holding (all but `evict`).
inline bool occupies(messages::share_status s) { return s != messages::share_status::evict; }

// Adds to the nodes `found` (sorted by name) the shares of `job` counted on them, for the operator's log line.
void note_shares_counted(std::vector<overbooked_node>& found, const messages::job_schedule& job);

// Every node above its order in `jobs`, by node name. A share id listed twice is counted twice: it would be
// started twice.
std::vector<overbooked_node> find_overbooked_nodes(const std::vector<messages::job_schedule>& jobs,
                                                   const node_quanta_lookup& quanta_of);

// One line for the log: "n01 holds 4 of 2 quanta (a.1 running, a.2 running, b.1 new, b.2 new); n02 ...".
std::string describe(const std::vector<overbooked_node>& nodes);

}  // namespace rmbus::actors
