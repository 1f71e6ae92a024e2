#include "actors/echo_wait.hpp"

namespace rmbus::actors {

void echo_wait::note_map(std::optional<std::uint64_t> rm_epoch, std::uint64_t known_epoch) {
  if (rm_epoch) {
    echo_ = echo::echoes;
    maps_without_ = 0;
    return;
  }
  // Before any RM was active there is nothing to echo yet, so a map without rm_epoch tells nothing.
  if (known_epoch == 0 || echo_ == echo::echoes) return;
  // Two in a row: the first may have been made before the orchestrator saw any schedule with an epoch.
  if (++maps_without_ >= 2) echo_ = echo::silent;
}

echo_wait::verdict echo_wait::judge(std::uint64_t epoch, std::optional<std::uint64_t> rm_epoch) const {
  // Above its own: this process is being deposed (the HA actor steps it down on the same echo) and publishes
  // nothing more; its own: the orchestrator moved to it.
  if (rm_epoch && *rm_epoch >= epoch) return {};
  if (echo_ == echo::silent) return {};
  verdict v;
  v.hold = true;
  v.reason = "waiting for the orchestrator to accept epoch " + std::to_string(epoch) +
             (rm_epoch ? " (its last map echoes epoch " + std::to_string(*rm_epoch) + ")"
                       : std::string{" (its last map echoes no epoch)"});
  return v;
}

}  // namespace rmbus::actors
