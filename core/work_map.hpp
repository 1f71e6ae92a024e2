#pragma once
// The orchestrator's work map as a snapshot plus an edit (LevelDB's Version / VersionEdit, style.md section 7).
//
// diff(before, after) says which work items appeared, which changed (the new value) and which are gone;
// apply(before, diff(before, after)) == after for every pair. The differencing actor is then: receive a
// snapshot, diff it against the previous one, send the edit. process_events() breaks a changed item down
// into what happened to its processes (DUCC's reconcileProcesses, shared/ducc-rm.md section 3.2): a process
// appeared, changed state or timing, ended, or vanished from the map.
//
// Deterministic: every list is sorted by id (work by job id, processes by share id), whatever the order
// of the input. Within one work item, processes are matched by share id; if an item lists a share id
// twice (bad input, validated upstream), the later entry wins, as it would when building a map.
// Pure functions of their inputs; thread-safe.

#include <cstdint>
#include <vector>

#include "core/ids.hpp"
#include "core/work.hpp"

namespace rmbus::core {

struct work_edit {
  std::vector<work_item> added;    // in `after` only, sorted by id
  std::vector<work_item> changed;  // in both and different: the value in `after`, sorted by id
  std::vector<job_id> removed;     // in `before` only, sorted

  bool empty() const { return added.empty() && changed.empty() && removed.empty(); }
  bool operator==(const work_edit&) const = default;
};

work_edit diff(const work_map& before, const work_map& after);

// Applies an edit: added and changed items are stored (replacing any item with the same id), removed ids are
// erased (an id not present is ignored). apply(a, diff(a, b)) == b.
work_map apply(work_map before, const work_edit& edit);

enum class process_event_kind {
  appeared,       // a process the previous map did not list (a new start, or one to recover)
  state_changed,  // listed in both, and its state, node or timing differ
  ended,          // listed in both, now in state `ended`: its share is vacated
  vanished,       // listed before, gone now: its share is vacated
};

struct process_event {
  job_id job;
  share_id share;
  process_event_kind kind = process_event_kind::appeared;
  machine_id node;
  process_state from = process_state::starting;  // before (appeared: same as `to`)
  process_state to = process_state::starting;    // after (vanished: same as `from`)
  std::int64_t init_ms = 0;  // initialization time, latest known
  std::int64_t run_ms = 0;   // investment, latest known

  bool operator==(const process_event&) const = default;
};

// What happened to the processes of one work item between two versions of it, sorted by share id.
// A process already ended before and still listed as ended gives no event.
std::vector<process_event> process_events(const work_item& before, const work_item& after);

// The process events of a whole edit: for each changed item, process_events(before[id], after); for each added
// item, one `appeared` event per process not yet ended (what a restarted RM must recover). Removed items give
// none: completion frees every share of the work at once. Sorted by job id, then share id.
std::vector<process_event> process_events(const work_map& before, const work_edit& edit);

const char* to_string(process_event_kind kind);

}  // namespace rmbus::core
