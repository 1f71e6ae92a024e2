#pragma once
// Another RM on this process's bus where there should be none: an RM without HA hearing an HA candidate's
// rm.ha beacons (it was started by mistake on an HA bus: it schedules beside the active one, unfenced), or an
// HA candidate hearing an rm.state without an epoch from another instance (the same mistake seen from the
// other side). Two RMs then drive one cluster with two schedules; each side says so in its log and as an
// rm.events `foreign_rm` event, once per rival instance and again every `repeat_ms` while it goes on.
//
// The table of rivals is bounded (untrusted senders choose instance names): past `max_rivals` new names are
// not tracked, so they are not warned about, but one rival is enough to tell.
//
// Thread-safety: none; one owner.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace rmbus::actors {

class rival_rms {
 public:
  rival_rms(std::string own_instance, bool own_ha, std::int64_t repeat_ms = 600'000, std::size_t max_rivals = 64);

  // Whether a message from `instance` may call for a warning now: not this process's own, and not warned of
  // within repeat_ms. Lets the caller skip reading the message otherwise.
  bool worth_reading(std::string_view instance, std::int64_t now_ms) const;
  // An rm.ha beacon (`ha` true) or an rm.state without an epoch (`ha` false) heard from `instance`: the
  // warning to log, when one is due.
  std::optional<std::string> heard(std::string_view instance, bool ha, std::int64_t now_ms);

 private:
  std::string own_;
  bool own_ha_;
  std::int64_t repeat_ms_;
  std::size_t max_rivals_;
  std::map<std::string, std::int64_t, std::less<>> warned_at_;
};

}  // namespace rmbus::actors
