#pragma once
// The rules rmbus-soak checks after every SIGKILL and restart of rmbus, as pure functions over the rm.state
// messages it receives (no sockets, no clock, so each rule has a unit test):
//
//   1. recovery   every process the orchestrator was running when the RM died is listed by the restarted RM
//                 on its node, with its share id (running; or preempt when the first round already takes it
//                 back for fair share), never as "new"; with HA, in the new active's first state from a work
//                 map that echoes its epoch (before it, it grants nothing and its map may predate the last
//                 starts: soak_driver counts what those states missed);
//   2. order      no node holds more quanta than its order, counting what the orchestrator may run there:
//                 every share listed running or new, and a share being preempted or evicted while the
//                 orchestrator runs its process (it occupies its node until that process is gone). A share
//                 taken back before its process started holds no memory: the RM keeps its space until the
//                 orchestrator acts, but the orchestrator never starts it (docs/protocol.md 4.2);
//   3. share ids  a share id always names the same job on the same node, and a share the RM publishes as
//                 "new" never carries an id seen in an earlier life of the RM;
//   4. schedule   within a bounded number of rounds: when the schedule was steady before the kill (the same
//                 processes per job three rounds running), exactly that schedule again; when the kill came in
//                 the middle of a change, the pre-kill schedule, or every user at its weighted fair share
//                 computed independently (tools/sim/fair_share.hpp) to within one process of each of its
//                 jobs, or a steady schedule (three identical rounds). The last is needed because the RM's
//                 How Much does not always end at that fair share, killed or not (docs/reliability.md).
//
// Thread-safety: none (one owner).

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "messages/rm_state.hpp"

namespace rmbus::soak {

// A process as the orchestrator runs it.
struct running_process {
  std::string job;
  std::string share_id;
  std::string node;
};

struct recovery_count {
  std::size_t running = 0;    // listed on its node with its id, status running
  std::size_t preempted = 0;  // listed on its node with its id, status preempt or evict
  std::vector<std::string> problems;  // one line per process not recovered (missing, moved, or "new")
  std::size_t recovered() const { return running + preempted; }
};

// Rule 1 over the first rm.state of the restarted RM.
recovery_count count_recovered(const messages::rm_state& state, const std::vector<running_process>& processes);

// Rule 2: one line per node holding more quanta than its order, naming the state's cycle and the node's
// shares. Nodes absent from `node_order` are not checked (the soak's cluster names every node it runs).
// `processes`: the share ids of the processes the orchestrator runs or is starting as it acts on `state`; a share
// being preempted or evicted counts only when its process is among them. Null: every listed share counts (the
// RM's own accounting, which also holds the space of shares taken back before they started).
std::vector<std::string> over_order(const messages::rm_state& state, const std::map<std::string, std::uint64_t>& node_order,
                                    const std::set<std::string>* processes = nullptr);

// Rule 3: every share id ever seen, with the job and node it named and the life of the RM that first
// published it (0 = the first process, 1 after the first restart, ...).
class share_ledger {
 public:
  // Records the state's shares; returns one line per violation.
  std::vector<std::string> observe(const messages::rm_state& state, int life);
  std::size_t size() const { return ids_.size(); }

 private:
  struct seen {
    std::string job;
    std::string node;
    int life = 0;
  };
  std::map<std::string, seen> ids_;
};

// Active processes (shares new or running) per job, jobs with none left out.
std::map<std::string, std::uint64_t> processes_per_job(const messages::rm_state& state);

// What the soak's orchestrator asks for: one job (rule 4's fair share needs the demands).
struct soak_job {
  std::string id;
  std::string user;
  std::string class_name;
  std::uint64_t order = 1;          // quanta per process
  std::uint64_t max_processes = 1;  // its demand in processes
};

struct soak_class {
  std::string name;
  int weight = 100;
  int priority = 10;
};

// Rule 4's second target: every user's quanta (active shares) are within one process of each of its jobs of
// its weighted fair share of `capacity` quanta. `why` (when given) says which user is off, and by how much.
bool at_fair_share(const messages::rm_state& state, const std::vector<soak_job>& jobs,
                   const std::vector<soak_class>& classes, double capacity, std::string* why = nullptr);

}  // namespace rmbus::soak
