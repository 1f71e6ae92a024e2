#pragma once
// Publication's copy of every pool's schedule, kept between rounds from the pools' numbered plans
// (messages/internal/pool_plan.hpp), and the quanta each node holds across all of them, so that a round
// costs what it changed and the overbooking guard checks only the nodes a change touched.
//
// Receiving: a full plan always follows; a change plan follows when it comes from the generation of the last
// plan received of its pool and builds on that plan's seq. Anything else breaks the pool's chain (a plan lost
// between processes, a late one, a chain cleared): the caller asks the scheduler for a full plan
// (rm.internal.plansync) and every change plan of the pool is refused until a full one comes.
//
// Applying: plans received are applied to their pool's table when a round is published, each first change of
// a job remembered (its version before), so that the round can be taken back pool by pool when the guard
// refuses it (rollback) or kept (commit). The holdings follow the tables: a node's holding is the quanta of
// its `new`, `running` and `preempt` shares over every table (actors/overbooking.hpp's rule); `overbooked`
// checks the nodes whose holding was counted up since the last commit, plus any the caller names (a node
// whose order fell). A node counted only down cannot have gone above its order, and every node was checked
// when it was last counted up.
//
// Without CAF, so that it can be tested alone. Not thread-safe; one owner.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/overbooking.hpp"
#include "messages/internal/pool_plan.hpp"

namespace rmbus::actors {

struct plan_verdict {
  bool follows = true;
  std::string reason;  // when it does not: for a person (the log)
};

class plan_tables {
 public:
  using job_table = std::map<std::string, messages::job_schedule>;  // job id -> its schedule
  // A job's version before the plans applied since the last commit; null when the job is new. Held by
  // pointer: a first plan remembers every job as new, and an empty optional would be a whole entry's size.
  using version_before = std::unique_ptr<messages::job_schedule>;
  // A job applied since the last commit: its version before (null: new) and its version now, the table's own
  // entry (null: gone), so that the readers of a round's changes look nothing up in the tables.
  struct applied_job {
    version_before before;
    const messages::job_schedule* now = nullptr;
  };

  // ---- the chains ----------------------------------------------------------------------------------
  // Whether `p` follows the last plan received of its pool. When it does the chain moves on to it; when it
  // does not, the pool's chain is broken until a full plan comes.
  plan_verdict receive(const messages::pool_plan& p);
  // The pool's next plan must be full (its plans were refused, or dropped unapplied).
  void break_chain(const std::string& pool);
  bool in_step(const std::string& pool) const;

  // ---- the tables ----------------------------------------------------------------------------------
  // Applies `p` (received and following) to its pool's table: a full plan replaces it, a change plan
  // replaces the jobs it lists and erases those it names gone. The second form takes the plan's entries
  // into the table instead of copying them (a full map's round changes thousands of jobs, each with its
  // shares); `p` is left without them.
  void apply(const messages::pool_plan& p);
  void apply(messages::pool_plan&& p);
  // Takes back everything applied to `pool` since the last commit.
  void rollback(const std::string& pool);
  // Keeps what was applied: the versions before are forgotten.
  void commit();
  // A pool no longer configured: its table and chain go (its shares no longer count).
  void drop(const std::string& pool);
  // Forgets everything (HA step-down).
  void clear();

  // The jobs applied since the last commit, pool -> job id -> its versions before and now.
  const std::map<std::string, std::map<std::string, applied_job>>& applied() const { return before_; }
  const job_table* table(const std::string& pool) const;
  const std::map<std::string, job_table>& tables() const { return tables_; }

  // ---- the guard -----------------------------------------------------------------------------------
  // The nodes above their order with a `new` share there (actors/overbooking.hpp), among those whose holding
  // was counted up since the last commit and `also`, by node name, each with the shares counted there.
  std::vector<overbooked_node> overbooked(const node_quanta_lookup& quanta_of,
                                          const std::set<std::string>& also = {}) const;
  // The pools whose jobs applied since the last commit have a share on one of `nodes`.
  std::vector<std::string> touching(const std::set<std::string>& nodes) const;
  // The quanta a node holds over every table (0 when none), and of its shares how many are `new`.
  std::uint64_t held(const std::string& node) const;
  std::uint64_t starting(const std::string& node) const;

 private:
  struct chain {
    std::uint64_t generation = 0;
    std::uint64_t seq = 0;
    bool in_step = false;
  };
  struct holding {
    std::uint64_t quanta = 0;
    std::uint64_t starts = 0;  // `new` shares there
    bool raised = false;       // counted up since the last commit (listed in raised_)
  };
  using holding_entry = std::pair<const std::string, holding>;
  // Both forms of apply: `Plan` is a const or a movable pool_plan.
  template <class Plan>
  void apply_plan(Plan&& p);
  // Counts (sign +1) or uncounts (-1) the shares of `j`, or shares [from, to) of a list.
  void count(const messages::job_schedule& j, int sign);
  void count(const std::vector<messages::share_schedule>& shares, std::size_t from, std::size_t to, int sign);
  // Uncounts `before` and counts `now`, a job's two versions, skipping the shares that hold the same.
  void count_change(const messages::job_schedule& before, const messages::job_schedule& now);
  // Records the version before of job `id` of `pool` (once per commit: a later one is dropped) and returns
  // the job's record, whose version now the caller sets.
  applied_job& remember(const std::string& pool, const std::string& id, const job_table& table);
  applied_job& remember(const std::string& pool, const std::string& id, version_before old);

  std::map<std::string, chain> chains_;
  std::map<std::string, job_table> tables_;
  std::map<std::string, std::map<std::string, applied_job>> before_;
  std::unordered_map<std::string, holding> holdings_;
  // The holdings counted up since the last commit: the guard's nodes. Kept while listed, even at zero, so
  // that the pointers hold (an unordered_map's elements do not move when it grows).
  std::vector<holding_entry*> raised_;
};

}  // namespace rmbus::actors
