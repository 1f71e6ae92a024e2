#pragma once
// What a round's rm.state lists, built from publication's tables (actors/plan_tables.hpp): every configured
// pool's table and differencing's refusals, merged by job id. A job id in two places is listed once: a
// refusal by differencing over a pool's entry, and of two pools the later by name (the rule rm.state has
// always followed).
//
// `listing_changes` is the same listing as the changes since the round published before it
// (rm.schedule.changes, docs/protocol.md 4.3.1), at the cost of what the round changed rather than of the
// whole schedule: the only jobs that can differ are those applied to a table since the last commit, those
// of tables dropped since, and refusals now and then; each is looked up as it was listed and as it is.
// `apply_listing_changes` turns the last listing into this one with them, so that rm.state itself is kept
// between rounds rather than copied out of the tables every round.
//
// Without CAF, so that it can be tested alone.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/plan_tables.hpp"
#include "messages/internal/round_start.hpp"
#include "messages/rm_schedule_changes.hpp"

namespace rmbus::actors {

// What the last published listing was made of, beyond what the tables still hold (their versions before are
// plan_tables::applied() until the next commit).
struct listed_before {
  std::set<std::string> pools;                              // the pools listed
  std::map<std::string, messages::refused_work> refused;    // differencing's refusals listed, by job id
  std::map<std::string, plan_tables::job_table> dropped;    // tables listed then, dropped since
};

// Every job of the round, sorted by id: the tables of `pools` plus `refused`.
messages::schedule_listing list_round(const plan_tables& tables, const std::set<std::string>& pools,
                                      const std::vector<messages::refused_work>& refused);

// The jobs new or changed since the listing `before` (entries whole, by id) and the ids gone, in a changes
// message of round `cycle` on `base_cycle`. REQUIRES: the tables are as applied for this round, not yet
// committed.
messages::rm_schedule_changes listing_changes(const plan_tables& tables, const std::set<std::string>& pools,
                                              const std::vector<messages::refused_work>& refused,
                                              const listed_before& before, std::uint64_t cycle,
                                              std::uint64_t base_cycle);

// The shares of job `now` being preempted or evicted that were not so in its version `before` (null: the job
// is new), in the order `now` lists them: each is one rm.events event of the round.
std::vector<const messages::share_schedule*> shares_newly_removed(const messages::job_schedule& now,
                                                                  const messages::job_schedule* before);

// Applies changes to a schedule listed by id (`changed`: entries new or changed, whole; `removed`: ids gone),
// keeping it sorted: entries replaced in place, and the jobs coming or going inserted or erased where they
// lie in one pass (containers/vector_edits.hpp). Its encoded entries, when it keeps them (one per job),
// follow: the changed ones packed again, the others moved. So does its tally when it keeps one (a new one is
// set).
void apply_listing_changes(messages::rm_state& state, std::vector<messages::job_schedule> changed,
                           const std::vector<std::string>& removed);

}  // namespace rmbus::actors
