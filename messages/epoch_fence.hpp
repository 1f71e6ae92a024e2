#pragma once
// The orchestrator's side of HA fencing (docs/protocol.md 4.8), for every orchestrator rmbus ships (the e2e
// tests' fake cluster, rmbus-sim, rmbus-load, rmbus-soak): act on an rm.state only when its envelope's epoch
// is at least the highest accepted so far, and echo that epoch as the work map's rm_epoch, with the cycle of
// the last schedule acted on as its rm_cycle.
//
// With HA off no rm.state carries an epoch: every one is accepted and echo() stays empty, so the work map
// carries no rm_epoch; it still carries rm_cycle. Once an epoch has been accepted, a schedule without one
// counts as epoch 0 (an RM without HA on the same bus cannot outrank an HA active).
//
// Thread-safety: a plain value; one owner.

#include <cstdint>
#include <optional>

namespace rmbus::messages {

class epoch_fence {
 public:
  // True when a schedule whose envelope carried `epoch` may be acted on (it becomes the highest accepted);
  // false when it comes from below the highest accepted (a deposed RM): ignore it.
  bool accept(std::optional<std::uint64_t> epoch, std::uint64_t cycle) {
    const auto e = epoch.value_or(0);
    if (highest_ && e < *highest_) {
      ++refused_;
      return false;
    }
    if (epoch) highest_ = epoch;
    cycle_ = cycle;
    acted_ = true;
    return true;
  }
  // The work map's rm_epoch: the highest epoch accepted; none while no epoch was ever seen.
  std::optional<std::uint64_t> echo() const { return highest_; }
  // The work map's rm_cycle: the cycle of the last schedule acted on (with HA or without); none before the
  // first. The RM frees the space of a share it revoked before the process was ever shown only once the
  // orchestrator has acted on that schedule.
  std::optional<std::uint64_t> echo_cycle() const { return acted_ ? std::optional<std::uint64_t>{cycle_} : std::nullopt; }
  std::uint64_t refused() const { return refused_; }

 private:
  std::optional<std::uint64_t> highest_;
  std::uint64_t refused_ = 0;
  std::uint64_t cycle_ = 0;
  bool acted_ = false;
};

}  // namespace rmbus::messages
