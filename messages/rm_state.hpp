#pragma once
// rm.state — sent by the RM to the orchestrator after every scheduling round: the COMPLETE current schedule.
//
// For every job the RM knows: whether it is scheduled, pending or refused (with a reason a person can act on),
// the memory granted per process, and its shares. Share statuses tell the orchestrator what to do:
//   new      start a process there; stays "new" in every rm.state until the work map shows a process with
//            the share's id, then it is "running";
//   preempt  stop it (fair share or defragmentation);
//   evict    its node died or was varied off: consider it gone without waiting for the agent.
// A running share may carry reclaim_at_ms: preempted then unless the need goes away (share_schedule).
// A preempted or evicted share stays listed until the work map shows its process ended or gone. Share ids are
// unique and never reused, also across RM restarts.
//
// Big and published every round, so the codec is hand-written like the work map's.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "containers/indirect_vector.hpp"
#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

enum class job_status { scheduled, pending, refused };
// `new_` because `new` is a keyword; its wire name is "new".
enum class share_status { running, new_, preempt, evict };

std::string_view to_string(job_status s);
std::string_view to_string(share_status s);
std::optional<job_status> parse_job_status(std::string_view s);
std::optional<share_status> parse_share_status(std::string_view s);

struct share_schedule {
  std::string id;  // unique, never reused
  std::string node;
  std::uint64_t quanta = 0;
  share_status status = share_status::new_;
  // Optional on the wire (rmbus extension; an older decoder ignores it): a running share chosen for
  // preemption under its class's reclaim grace. The RM preempts it at this time (ms since the Unix epoch, the
  // RM's clock) if the need still stands, and drops the key if the need disappears. An orchestrator may drain
  // the process before then.
  std::optional<std::uint64_t> reclaim_at_ms;

  friend bool operator==(const share_schedule&, const share_schedule&) = default;
};

struct job_schedule {
  std::string id;
  job_status status = job_status::pending;
  std::string reason;           // why pending or refused; empty when scheduled
  std::uint64_t memory_mb = 0;  // memory granted per process: quanta x quantum
  std::vector<share_schedule> shares;
  // Optional on the wire (added for monitors; absent from an older RM decodes as empty / 0). Counts are in
  // processes: `given` is the How Much count, `demand` what its remaining work could use, `fair_share` its
  // pure weighted fair share before bonus shares (0 for work that is not FAIR_SHARE).
  std::string user;
  std::string class_name;  // wire key "class"
  std::uint64_t given = 0;
  std::uint64_t demand = 0;
  std::uint64_t fair_share = 0;
  // Optional on the wire, and sent only when set: the innermost share group of the job's user in its class
  // (configured [[group]] tables); empty when the user is in none, or from an RM without groups.
  std::string group;
  // Optional on the wire, and sent only when set: the cap step that holds the job below its fair share by
  // design ("prediction", "initialization_cap", "doubling", "max_processes", "probe_first"), so that a
  // monitor does not read it as starvation; empty otherwise.
  std::string capped_by;

  friend bool operator==(const job_schedule&, const job_schedule&) = default;
};

struct schedule_tally;  // messages/schedule_tally.hpp

// rm.state's jobs, sorted by id. Each entry in its own allocation (containers/indirect_vector.hpp): a sender
// that keeps the schedule between rounds inserts a job whose id sorts early by moving pointers, not entries.
using schedule_listing = containers::indirect_vector<job_schedule>;

struct rm_state {
  std::uint64_t cycle = 0;  // the scheduling round this schedule came from
  schedule_listing jobs;
  // Optional on the wire: the envelope seq and src of the orchestrator.workmap this round answers (absent
  // when the round had no work map, e.g. after a reconfiguration). Lets an orchestrator or a benchmark match
  // a map to the schedule that answers it.
  std::optional<std::uint64_t> workmap_seq;
  std::optional<std::string> workmap_src;
  // Not on the wire: each job's entry as encode() packs it (encode_job_entry), kept by a sender that keeps
  // the schedule between rounds (publication), so that only the jobs a round changed are packed again.
  // Either empty or one per job, in the order of `jobs`; encode() then copies these bytes. Not compared.
  std::vector<std::string> encoded_jobs;
  // Not on the wire: what `jobs` add up to per class (messages/schedule_tally.hpp), kept by a sender that
  // keeps the schedule between rounds, so that the metrics of its process need not walk every job. Never
  // edited once set: an edit of the schedule sets a new one. Null when not kept (a decoded rm.state).
  std::shared_ptr<const schedule_tally> tally;

  friend bool operator==(const rm_state& a, const rm_state& b) {
    return a.cycle == b.cycle && a.jobs == b.jobs && a.workmap_seq == b.workmap_seq && a.workmap_src == b.workmap_src;
  }
};

std::string encode(const envelope& env, const rm_state& msg);
// One job entry exactly as encode() packs it into `jobs`.
std::string encode_job_entry(const job_schedule& j);
result<rm_state> decode_rm_state(std::string_view topic, std::string_view body, const decode_limits& limits = {},
                                 envelope* env_out = nullptr);

}  // namespace rmbus::messages
