#include "tools/web/snapshot_hub.hpp"

namespace rmbus::web {

void snapshot_hub::publish_snapshot(text snapshot) {
  {
    std::lock_guard lock{mutex_};
    snapshot_ = std::move(snapshot);
    ++snapshot_version_;
  }
  changed_.notify_all();
}

void snapshot_hub::publish_health(text health) {
  {
    std::lock_guard lock{mutex_};
    health_ = std::move(health);
    ++health_version_;
  }
  changed_.notify_all();
}

void snapshot_hub::close() {
  {
    std::lock_guard lock{mutex_};
    closed_ = true;
  }
  changed_.notify_all();
}

snapshot_hub::news snapshot_hub::wait(cursor& seen, std::chrono::milliseconds timeout) {
  std::unique_lock lock{mutex_};
  changed_.wait_for(lock, timeout, [&] {
    return closed_ || (snapshot_ && snapshot_version_ > seen.snapshot) || (health_ && health_version_ > seen.health);
  });
  if (closed_) return {nullptr, false, true};
  if (snapshot_ && snapshot_version_ > seen.snapshot) {
    seen.snapshot = snapshot_version_;
    seen.health = health_version_;  // a snapshot carries the health too
    return {snapshot_, true, false};
  }
  if (health_ && health_version_ > seen.health) {
    seen.health = health_version_;
    return {health_, false, false};
  }
  return {};
}

snapshot_hub::text snapshot_hub::latest_snapshot() const {
  std::lock_guard lock{mutex_};
  return snapshot_;
}

}  // namespace rmbus::web
