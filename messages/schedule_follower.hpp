#pragma once
// A subscriber's side of rm.schedule.changes (docs/protocol.md 4.3.1): the snapshot-and-changes rule and the
// HA fence, for every reader rmbus ships (the e2e fake cluster, rmbus-top, rmbus-web).
//
// It starts at a full message; a changes message is applied only when its base_cycle is the cycle of the
// last message applied, otherwise the follower waits for the next full one (a gap: counted). Epochs as
// messages/epoch_fence.hpp: a message of an epoch below the highest accepted is ignored; one of a higher epoch
// (another active RM, whose cycles are its own) is taken only if full, and until then the follower waits.
// After each message, complete() says whether schedule() is a whole picture.
//
// Thread-safety: a plain value; one owner.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "messages/epoch_fence.hpp"
#include "messages/rm_schedule_changes.hpp"
#include "messages/rm_state.hpp"

namespace rmbus::messages {

class schedule_follower {
 public:
  enum class outcome { applied, waiting, fenced };

  outcome take(const rm_schedule_changes& m, std::optional<std::uint64_t> epoch) {
    const auto e = epoch.value_or(0);
    if (!fence_.accept(epoch, m.cycle)) return outcome::fenced;
    if (e != epoch_) {  // a new active RM: its stream starts at its first full message
      epoch_ = e;
      complete_ = false;
    }
    if (m.full) {
      jobs_.clear();
      for (const auto& j : m.jobs) jobs_.insert_or_assign(j.id, j);
    } else if (!complete_ || m.base_cycle != cycle_) {
      if (complete_) ++gaps_;
      complete_ = false;
      return outcome::waiting;
    } else {
      for (const auto& id : m.removed) jobs_.erase(id);
      for (const auto& j : m.jobs) jobs_.insert_or_assign(j.id, j);
    }
    complete_ = true;
    cycle_ = m.cycle;
    workmap_seq_ = m.workmap_seq;
    workmap_src_ = m.workmap_src;
    return outcome::applied;
  }

  bool complete() const { return complete_; }
  std::uint64_t gaps() const { return gaps_; }
  std::optional<std::uint64_t> accepted_epoch() const { return fence_.echo(); }
  // The whole schedule as rm.state would carry it, jobs in id order. REQUIRES: complete().
  rm_state schedule() const {
    rm_state s;
    s.cycle = cycle_;
    s.workmap_seq = workmap_seq_;
    s.workmap_src = workmap_src_;
    s.jobs.reserve(jobs_.size());
    for (const auto& [id, j] : jobs_) s.jobs.push_back(j);
    return s;
  }

 private:
  epoch_fence fence_;
  std::uint64_t epoch_ = 0;
  bool complete_ = false;
  std::uint64_t cycle_ = 0;
  std::uint64_t gaps_ = 0;
  std::map<std::string, job_schedule> jobs_;
  std::optional<std::uint64_t> workmap_seq_;
  std::optional<std::string> workmap_src_;
};

}  // namespace rmbus::messages
