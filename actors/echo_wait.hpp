#pragma once
// Whether a new HA active may grant new shares yet: the takeover handshake of docs/architecture.md ("High
// availability") and docs/protocol.md 4.8, without CAF so that it can be tested alone.
//
// A new active (a takeover, a handover, the first start with HA) grants nothing new until the orchestrator has
// moved to it: until a work map echoes its own epoch as rm_epoch. The orchestrator acts on nothing below the
// highest epoch it accepted, and that map was made after it accepted this one, so it lists every process the
// orchestrator started under older epochs: whatever a deposed or partitioned active granted is in the map
// before this one can grant the same memory. Until then its rounds only report (round_input::settling):
// recovery, listing and evictions of dead nodes go on.
//
// Whether the orchestrator echoes at all is learnt from the maps: one carrying rm_epoch (0 included, which a
// fencing orchestrator sends before it has accepted any epoch) shows that it does; two maps in a row without
// one while an epoch is known (some RM was active) show that it does not. An orchestrator that does not echo
// cannot tell this process when it moved, so waiting would only delay: such an active grants from its first
// round, with a warning (echo::silent), as before the handshake existed.
//
// Not thread-safe: the differencing actor owns it.

#include <cstdint>
#include <optional>
#include <string>

namespace rmbus::actors {

class echo_wait {
 public:
  enum class echo { unknown, echoes, silent };

  // Every work map taken, whether this process is active or not: its rm_epoch, and the highest epoch this
  // process knows (its own while active, the highest heard while standby; 0: none).
  void note_map(std::optional<std::uint64_t> rm_epoch, std::uint64_t known_epoch);

  struct verdict {
    bool hold = false;
    std::string reason;  // hold: why, for the plan's jobs, rm.cycle and the log
  };
  // For a round of the active of `epoch` built from a map that echoed `rm_epoch`.
  verdict judge(std::uint64_t epoch, std::optional<std::uint64_t> rm_epoch) const;

  echo orchestrator() const { return echo_; }

 private:
  echo echo_ = echo::unknown;
  int maps_without_ = 0;  // maps in a row without rm_epoch while an epoch was known
};

}  // namespace rmbus::actors
