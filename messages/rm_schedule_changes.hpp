#pragma once
// rm.schedule.changes — the schedule as numbered changes (docs/protocol.md 4.3.1), an opt-in companion of
// rm.state for subscribers that would rather not decode the whole schedule every round: a FULL message (every
// job, as rm.state lists them) every few rounds, and between them the jobs that changed since the message
// before (each job entry whole, as in rm.state) and the ids of jobs gone. rm.state itself is unchanged.
//
// The snapshot-and-changes rule (the ZeroMQ guide's Clone pattern, and the RM's own node table): a subscriber
// starts at a full message; it applies a changes message only when its base_cycle is the cycle of the last
// message it applied; on a gap it waits for the next full one (messages/schedule_follower.hpp does this).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"
#include "messages/rm_state.hpp"

namespace rmbus::messages {

struct rm_schedule_changes {
  std::uint64_t cycle = 0;  // the round, as in rm.state
  bool full = false;        // `jobs` lists every job: a subscriber starts (again) here
  std::uint64_t base_cycle = 0;  // not full: the cycle of the previous message of this stream (required, > 0)
  std::vector<job_schedule> jobs;     // full: every job; otherwise the jobs new or changed since base_cycle
  std::vector<std::string> removed;   // not full: ids of jobs gone since base_cycle
  std::optional<std::uint64_t> workmap_seq;  // as rm.state
  std::optional<std::string> workmap_src;

  friend bool operator==(const rm_schedule_changes&, const rm_schedule_changes&) = default;
};

std::string encode(const envelope& env, const rm_schedule_changes& msg);
// Rejects a changes message (full false) without base_cycle or with base_cycle 0, a full one with `removed`,
// and a job id named twice.
result<rm_schedule_changes> decode_rm_schedule_changes(std::string_view topic, std::string_view body,
                                                       const decode_limits& limits = {}, envelope* env_out = nullptr);

// The changes that turn schedule `before` into `after` (jobs matched by id; a job whose entry differs in any
// field is listed whole), as a message of round after.cycle building on base_cycle.
rm_schedule_changes make_schedule_changes(std::uint64_t base_cycle, const rm_state& before, const rm_state& after);
// A full message of `s`.
rm_schedule_changes full_schedule(const rm_state& s);

}  // namespace rmbus::messages
