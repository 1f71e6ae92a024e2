#include "actors/rival_rms.hpp"

namespace rmbus::actors {

rival_rms::rival_rms(std::string own_instance, bool own_ha, std::int64_t repeat_ms, std::size_t max_rivals)
    : own_(std::move(own_instance)), own_ha_(own_ha), repeat_ms_(repeat_ms), max_rivals_(max_rivals) {}

bool rival_rms::worth_reading(std::string_view instance, std::int64_t now_ms) const {
  if (instance.empty() || instance == own_) return false;
  auto it = warned_at_.find(instance);
  if (it != warned_at_.end()) return now_ms - it->second >= repeat_ms_;
  return warned_at_.size() < max_rivals_;
}

std::optional<std::string> rival_rms::heard(std::string_view instance, bool ha, std::int64_t now_ms) {
  // Only the mismatch is a mistake: HA candidates hear each other's beacons and fenced schedules by design.
  if (ha == own_ha_ || !worth_reading(instance, now_ms)) return std::nullopt;
  warned_at_[std::string{instance}] = now_ms;
  if (ha)
    return "another RM with [ha] enabled publishes on this bus: " + std::string{instance} +
           " (its rm.ha beacons); this RM runs without HA and publishes its own rm.state beside it, so two RMs "
           "drive one cluster. Stop this one, or start it with [ha] enabled as a candidate";
  return "an RM without HA publishes rm.state on this bus: " + std::string{instance} +
         " (no epoch: its schedules are not fenced); it drives the cluster beside the HA candidates. Stop it, or "
         "give it [ha] enabled";
}

}  // namespace rmbus::actors
