#pragma once
// The orchestrator's work map as the scheduling core sees it: a snapshot of every piece of work (fair-share
// jobs, services, managed reservations (APs) and reservations) with the processes the orchestrator runs for
// it. The wire message (messages/) is converted into these values by the differencing actor.
//
// A work map is a snapshot; a work_edit is the difference between two snapshots (LevelDB's Version /
// VersionEdit): diff(a, b) gives the edit, apply(a, edit) == b. See core/work_map.hpp.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ids.hpp"

namespace rmbus::core {

enum class work_kind { job, service, ap, reservation };
enum class work_state { waiting, running, completing, completed };  // running: a process has initialized
enum class process_state { starting, initializing, running, ended };

struct process_report {
  share_id id;                      // the share id the RM gave the process
  machine_id node;
  process_state state = process_state::starting;
  std::int64_t init_ms = 0;         // time spent initializing
  std::int64_t run_ms = 0;          // investment: time invested in the work items in flight
  std::uint64_t node_memory_mb = 0; // optional: lets a restarted RM size a node it has not heard from

  bool operator==(const process_report&) const = default;
};

// The scalar fields come first, together: the scheduler compares and reads them for every item every round.
struct work_item {
  work_kind kind = work_kind::job;
  work_state state = work_state::waiting;
  int max_processes = 0;            // 0 = no limit
  int threads = 1;                  // threads per process
  std::uint64_t memory_mb = 0;      // per process
  std::int64_t submitted_ms = 0;    // submission time: the "oldest first" order
  std::int64_t items_total = 0;
  std::int64_t items_done = 0;
  std::int64_t item_ms = 0;         // mean ms per work item, 0 = unknown
  std::uint64_t service_id = 0;     // spreads instances of one service over machines
  job_id id;
  user_id user;
  std::string class_name;           // empty: the default class for its kind
  std::vector<process_report> processes;
  std::vector<std::string> hosts;   // the user's machine list; empty = any machine

  bool operator==(const work_item&) const = default;
};

using work_map = std::map<job_id, work_item>;

}  // namespace rmbus::core
