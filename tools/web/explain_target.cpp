#include "tools/web/explain_target.hpp"

#include "tools/web/endpoints.hpp"

namespace rmbus::web {

bool explain_target::heard(const ha_beacon& b) {
  if (b.state != "active" || !b.epoch) return false;
  const bool newer = !epoch_ || *b.epoch > *epoch_;
  const bool same_active = epoch_ && *b.epoch == *epoch_ && b.instance == instance_;
  if (!newer && !same_active) return false;
  epoch_ = b.epoch;
  instance_ = b.instance;
  if (b.admin.empty()) return false;
  auto endpoint = connectable(b.admin);
  if (endpoint == endpoint_) return false;
  endpoint_ = std::move(endpoint);
  return true;
}

}  // namespace rmbus::web
