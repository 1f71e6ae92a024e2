#pragma once
// Which admin endpoint rmbus-web asks `explain` of. Explain needs the active RM: a standby does not schedule,
// and an active that died answers nothing (the page got 504 while rm.ha already named the new active). With HA
// every candidate sends rm.ha, the active naming its admin endpoint (messages/rm_ha.hpp), so explain follows
// the active the beacons name; until one has named an endpoint it goes to the configured --admin.
//
// Decides:
//  - an `active` beacon with a higher epoch than the one followed replaces it: epochs fence, so an active
//    beaconing a lower epoch is a former active that has not yet heard it lost;
//  - an `active` beacon with the same epoch and instance may update the endpoint; one of the same epoch from
//    another instance does not take over (the first heard stays until a higher epoch comes);
//  - `standby` and `handover` beacons change nothing: the new active names itself once it took over;
//  - an `active` beacon without an admin endpoint is followed for its epoch, but explain keeps the endpoint in
//    use (there is nothing better to ask);
//  - a wildcard bind address (tcp://*:P) becomes connectable on this host, as endpoint discovery does
//    (endpoints.hpp): an RM on another host should set [ha] advertise_admin.
//
// Thread-safety: a plain value; rmbus-web guards it with its model's mutex.

#include <cstdint>
#include <optional>
#include <string>

#include "tools/web/ha_beacon.hpp"

namespace rmbus::web {

class explain_target {
 public:
  explicit explain_target(std::string configured) : endpoint_(std::move(configured)) {}

  // Folds one rm.ha beacon; true when the endpoint explain goes to changed.
  bool heard(const ha_beacon& b);

  const std::string& endpoint() const { return endpoint_; }
  // The active followed, and its epoch; empty/nullopt until an active beacon was heard.
  const std::string& active_instance() const { return instance_; }
  std::optional<std::uint64_t> active_epoch() const { return epoch_; }

 private:
  std::string endpoint_;
  std::string instance_;
  std::optional<std::uint64_t> epoch_;
};

}  // namespace rmbus::web
