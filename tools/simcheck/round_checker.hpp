#pragma once
// The rules a simulated round must keep, checked against the truth of the simulated cluster, not against
// what the RM believes (issue 50):
//
//   over_order         a node's quanta (the processes the orchestrator has running or starting there, plus the
//                      `new` shares of the plan it has not started yet) above its order. Excused: a node where
//                      the orchestrator itself started a withdrawn share late, while that process runs (the RM
//                      cannot know of it before a map shows it), and a node where the plan starts nothing and
//                      the processes the orchestrator is not stopping fit (the excess is a stop not done yet);
//   repair_late        ...but from the second round after the RM applied a map that shows such a process, the
//                      plan must hold no more than the node's order there (the rest preempted or evicted);
//   new_on_dead_node   a share granted `new` this round on a node the intake last reported down, or varied off,
//                      or a `new` share whose process the orchestrator never started left on a node down;
//   process_lost       a process the orchestrator runs, that a map the RM applied listed, missing from the plan;
//   share_id_reused    a share id granted `new` again after it left the plan, or for another job or node.
//
// Plain values in, violations out: the unit test feeds it a broken plan to show that each rule can fail.
// Not thread-safe; one owner per run (the ledger of share ids is kept between rounds).

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/schedule_plan.hpp"

namespace rmbus::simcheck {

struct node_fact {
  std::string name;
  int order = 0;
  bool down = false;        // as the intake last reported it
  bool varied_off = false;
  bool rogue_process = false;     // the orchestrator runs a share there it started after the RM withdrew it
  bool repair_due = false;        // such a process was in a map the RM applied two rounds ago or more
};

struct process_fact {
  std::string share;
  std::string node;
  int quanta = 0;
  bool seen_by_rm = false;  // listed in a work map the RM applied
  bool stopping = false;    // the orchestrator was told to preempt or evict it and has not yet
};

struct plan_share_fact {
  std::string job;
  std::string share;
  std::string node;
  int quanta = 0;
  core::share_status status = core::share_status::new_share;
};

struct round_facts {
  int round = 0;
  std::vector<node_fact> nodes;
  std::vector<process_fact> processes;  // running or starting in the orchestrator
  std::vector<plan_share_fact> plan;
};

struct violation {
  std::string rule;  // one of the names above
  int round = 0;
  std::string node;  // empty when the rule is not about one node
  std::string detail;
};

// Every share of a core plan, flattened.
std::vector<plan_share_fact> plan_facts(const core::schedule_plan& plan);

class round_checker {
 public:
  // Checks one round; remembers the plan's share ids for the next (share_id_reused).
  std::vector<violation> check(const round_facts& facts);

 private:
  struct first_sight {
    std::string job;
    std::string node;
  };
  std::map<std::string, first_sight> ids_seen_;  // every share id a plan ever listed
  std::set<std::string> in_last_plan_;
};

}  // namespace rmbus::simcheck
