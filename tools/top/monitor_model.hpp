#pragma once
// What rmbus-top knows of a running RM: the messages the RM publishes for monitors, folded into one picture.
//
// rm.state and rm.nodes are complete snapshots, so each one REPLACES the last: a monitor started after the RM
// (or one that missed messages) is whole again after the next round, and nothing can drift by accumulation.
// rm.cycle is kept per top-level nodepool (the last one each). rm.events, and the bodies the monitor itself
// could not decode, go to a bounded ring of recent events; preemptions and evictions are also remembered per
// job (while the job is in rm.state) so the job list can say which jobs lost processes lately. Bus health
// (sequence gaps, publisher restarts, bad messages) is the monitor's own subscriber's, set by the shell.
//
// Everything derived (nodes by state per pool, totals per class, share group and user, the ordered job list)
// is computed from the snapshots on demand. Every table fed from the bus is bounded (model_limits), because a hostile or
// broken publisher must not make the monitor grow without end.
//
// Times are milliseconds on a clock the caller passes in; the model reads no clock, so tests are exact.
// Thread-safety: none; one owner (the executable guards it with a mutex).

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "messages/rm_cycle.hpp"
#include "messages/rm_event.hpp"
#include "messages/not_scheduling.hpp"
#include "messages/rm_nodes.hpp"
#include "messages/rm_schedule_changes.hpp"
#include "messages/rm_state.hpp"
#include "messages/schedule_follower.hpp"

namespace rmbus::top {

using millis = std::int64_t;  // a point in time (or a duration) on the caller's clock

struct model_limits {
  std::size_t max_events = 100;          // recent events kept
  std::size_t max_event_text = 512;      // bytes of one event's details kept
  std::size_t max_event_kinds = 64;      // distinct rm.events kinds counted (an open set on the wire)
  std::size_t max_pools = 256;           // rm.cycle pools remembered
  std::size_t max_job_records = 100000;  // jobs with preemptions or evictions remembered
};

struct recent_event {
  millis at_ms = 0;
  std::string kind;
  std::string text;  // the event's details, "key=value" in key order, cut to max_event_text
};

// The monitor's own subscriber, plus the bodies the monitor could not decode (counted in bad_messages).
struct bus_health {
  std::uint64_t received = 0;
  std::uint64_t gaps = 0;
  std::uint64_t missing = 0;  // messages skipped over by the gaps
  std::uint64_t restarts = 0;
  std::uint64_t bad_messages = 0;
  std::map<std::string, std::uint64_t> by_topic;
};

struct pool_summary {
  std::string pool;
  std::map<messages::node_state, std::uint64_t> nodes_by_state;
  std::uint64_t nodes = 0;
  std::uint64_t quanta = 0;       // of the nodes up: what the pool can schedule on
  std::uint64_t free_quanta = 0;  // of the nodes up

  std::uint64_t count(messages::node_state s) const;
};

// One user in one class (or, as a class's total, every user of it), summed over its jobs. Counts are in
// processes; `active` are shares running or new (held and not being removed), `quanta` what those hold.
struct user_summary {
  std::string user;
  std::uint64_t jobs = 0;
  std::uint64_t active = 0;
  std::uint64_t quanta = 0;
  std::uint64_t given = 0;       // the How Much count
  std::uint64_t demand = 0;      // what the remaining work could use
  std::uint64_t fair_share = 0;  // pure weighted fair share, before bonus shares
  // What its jobs want now: their demand, but for a job the RM caps by design (rm.state `capped_by`:
  // prediction, the initialization cap, ...) what it was given; and how many jobs are so capped.
  std::uint64_t wanted = 0;
  std::uint64_t capped_jobs = 0;
  // Rows summed into this one as parts (a group's users, a class's groups), and how many of them were below
  // their fair share; 0 parts: a row judged by its own sums.
  std::uint64_t parts = 0;
  std::uint64_t parts_below = 0;

  // Wants more than it got and got less than its fair share: the row a person looks at first. A job capped
  // by design does not make it so (that is the policy, not starvation). A class or group is below when one
  // of its parts is: its summed figures would let one user's unmet demand hide behind another's fair share.
  bool below_fair_share() const;
};

// Counts off the bus may be anything up to 2^64-1: a sum of them sticks at the top instead of wrapping to a
// small, believable number.
std::uint64_t add_capped(std::uint64_t a, std::uint64_t b);
// Adds `u`'s sums (jobs, active, quanta, given, demand, fair share) to `total`'s, each capped, and counts `u`
// as one of its parts; with `as_part` false `u` is more of the same row (one job of a user's row).
void add_sums(user_summary& total, const user_summary& u, bool as_part = true);

// One share group ([[group]], EGO's consumer tree) within a class: the jobs whose innermost group it is, summed,
// and their users. rm.state names only a job's innermost group, so groups are listed flat under their class;
// a parent group is not known here, and its sums would be a guess.
struct group_summary {
  std::string group;
  user_summary total;               // total.user is ""
  std::vector<user_summary> users;  // by user name
};

struct class_summary {
  std::string class_name;             // "" for work refused before it reached a class
  user_summary total;                 // total.user is "": every job of the class, grouped or not
  std::vector<user_summary> users;    // users of the jobs in no group, by user name
  std::vector<group_summary> groups;  // by group name; empty when no job of the class names a group
};

// Preemptions and evictions rm.events reported for one job since the monitor started (or since the job
// appeared), forgotten when the job leaves rm.state.
struct job_losses {
  std::uint64_t preempted = 0;
  std::uint64_t evicted = 0;
  millis last_at_ms = 0;
};

struct job_row {
  std::string id;
  std::string user;
  std::string class_name;
  messages::job_status status = messages::job_status::pending;
  std::string reason;
  std::uint64_t memory_mb = 0;  // per process
  std::uint64_t active = 0;     // shares running or new
  std::uint64_t leaving = 0;    // shares being preempted or evicted
  std::uint64_t given = 0;
  std::uint64_t demand = 0;
  std::uint64_t fair_share = 0;
  std::string capped_by;  // rm.state: the cap step holding it below its fair share by design; "" if none
  // Processes held (running or new) under a reclaim deadline (rm.state share reclaim_at_ms): the RM preempts
  // them then unless the need goes away. `reclaim_at_ms` is the soonest deadline on the monitor's clock,
  // unknown when the rm.state came without the time it was sent.
  std::uint64_t reclaiming = 0;
  std::optional<millis> reclaim_at_ms;
  job_losses losses;
};

struct pool_cycle {
  messages::rm_cycle cycle;
  millis at_ms = 0;
};

class monitor_model {
 public:
  explicit monitor_model(model_limits limits = {});

  // `src` is the publisher's envelope name (shown in the header; the RM's instance name). `sent_at_ms` is its
  // envelope ts_ms, the RM's clock when it sent the state: a reclaim deadline (on the RM's clock too) is kept
  // as the time from then, so the two hosts' clocks need not agree.
  // `epoch` (HA, the envelope's): a schedule from below the highest epoch seen comes from a deposed RM and is
  // counted (stale_states) but not shown, as a fencing orchestrator would not act on it.
  void on_state(messages::rm_state state, millis now_ms, std::string src = {},
                std::optional<std::uint64_t> sent_at_ms = std::nullopt,
                std::optional<std::uint64_t> epoch = std::nullopt);
  // rm.schedule.changes (docs/protocol.md 4.3.1), for a monitor that reads the changes instead of rm.state:
  // followed by the snapshot-and-changes rule (messages/schedule_follower.hpp); each message that leaves a whole
  // picture is on_state of that picture. Messages waited through (joined late, or a gap) are counted.
  void on_schedule_changes(const messages::rm_schedule_changes& changes, millis now_ms, std::string src = {},
                           std::optional<std::uint64_t> sent_at_ms = std::nullopt,
                           std::optional<std::uint64_t> epoch = std::nullopt);
  std::uint64_t changes_waited() const { return changes_waited_; }
  void on_nodes(messages::rm_nodes nodes, millis now_ms);
  void on_cycle(messages::rm_cycle cycle, millis now_ms);
  void on_event(const messages::rm_event& event, millis now_ms);
  // A body the monitor could not decode is listed and counted here; one the subscriber already rejected
  // (counted_by_bus) is only listed, since the subscriber's count arrives through set_bus.
  void on_bad_message(const std::string& what, millis now_ms, bool counted_by_bus);
  void set_bus(bus_health health);

  const std::optional<messages::rm_state>& state() const { return state_; }
  const std::string& state_src() const { return state_src_; }
  // HA: the epoch of the schedule shown (none with HA off) and the schedules ignored from lower epochs.
  std::optional<std::uint64_t> state_epoch() const { return state_epoch_; }
  std::uint64_t stale_states() const { return stale_states_; }
  millis state_at_ms() const { return state_at_ms_; }
  const std::optional<messages::rm_nodes>& nodes() const { return nodes_; }
  const std::map<std::string, pool_cycle>& cycles() const { return cycles_; }
  const std::deque<recent_event>& events() const { return events_; }  // newest first
  const std::map<std::string, std::uint64_t>& events_by_kind() const { return events_by_kind_; }
  bus_health bus() const;

  // Both snapshots have arrived, or rm.nodes and the RM's word on why it runs no rounds (an idle RM has no
  // rm.state to send): enough to show the whole picture.
  bool complete() const;
  // The RM's last rm.events `not_scheduling` (messages/not_scheduling.hpp), aged to `now_ms`, while no
  // rm.state came after it; nothing once one did (the RM schedules again) or before any.
  std::optional<messages::not_scheduling> not_scheduling(millis now_ms) const;
  millis not_scheduling_at_ms() const { return not_scheduling_at_ms_; }
  // The last rm.state's round in full: rm.nodes arrived after it and every pool in rm.nodes has that
  // round's rm.cycle (the RM publishes state, cycles, nodes, events in that order each round).
  bool round_complete() const;
  // Time between the last two rm.state arrivals: the observed round period.
  std::optional<millis> round_interval() const;
  // No rm.state for more than three observed round periods (and at least 2 s, so jitter never flags it).
  // While the RM says why it runs no rounds, the silence of rm.state is not staleness: stale is then the
  // report's own silence, more than three observed report periods (15 s before two reports came; at least 2
  // s).
  bool stale(millis now_ms) const;

  std::vector<pool_summary> pools() const;     // by pool name
  std::vector<class_summary> classes() const;  // by class name
  // Processes held under a reclaim deadline, over every job (the sum of job_row::reclaiming).
  std::uint64_t reclaiming() const;
  // Pending first (they wait for something), then refused, then scheduled; by id within each.
  std::vector<job_row> jobs() const;

 private:
  void remember_event(millis now_ms, std::string kind, std::string text);
  void remember_loss(const messages::rm_event& event, millis now_ms);

  model_limits limits_;
  std::optional<messages::rm_state> state_;
  messages::schedule_follower follower_;
  std::uint64_t changes_waited_ = 0;
  std::string state_src_;
  std::optional<std::uint64_t> state_epoch_;
  std::uint64_t stale_states_ = 0;
  std::optional<std::uint64_t> state_sent_at_ms_;
  millis state_at_ms_ = 0;
  std::optional<millis> previous_state_at_ms_;
  std::optional<messages::rm_nodes> nodes_;
  // Arrival order of the snapshots, to tell a round's rm.nodes from an earlier one.
  std::uint64_t arrivals_ = 0;
  std::uint64_t state_arrival_ = 0;
  std::uint64_t nodes_arrival_ = 0;
  std::map<std::string, pool_cycle> cycles_;
  std::deque<recent_event> events_;
  std::map<std::string, std::uint64_t> events_by_kind_;
  std::map<std::string, job_losses> losses_;
  std::optional<messages::not_scheduling> not_scheduling_;
  millis not_scheduling_at_ms_ = 0;
  std::optional<millis> previous_not_scheduling_at_ms_;
  std::uint64_t not_scheduling_arrival_ = 0;
  bus_health bus_;
  std::uint64_t undecodable_ = 0;
};

}  // namespace rmbus::top
