#pragma once
// What the HA actor (actors/ha.cpp) shares with the rest of its process: whether this process may publish
// the schedule now, under which epoch, and what admin shows. The fence of docs/protocol.md 4.8 on the RM's
// side is checked here, where publication happens (the router, before anything reaches the bus):
//
//   may_publish()  true only while this process is the active RM AND its self-lease is current. The HA
//                  actor renews the lease on every tick (a few per beacon); a process that was paused (SIGSTOP,
//                  a stalled VM) finds its lease run out when it resumes, so whatever its actors queued while
//                  it slept is dropped, and the lease is renewed only after it has listened to the bus again
//                  for two beacons, by which time a higher epoch, if any, has deposed it (Kubernetes #81306).
//
// Written by the HA actor (role, epoch, lease, status) and by differencing (the orchestrator's echo);
// read by the router, publication, differencing and admin, on any thread.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace rmbus::actors {

class ha_gate {
 public:
  struct peer_view {
    std::string instance;
    std::uint64_t rank = 0;
    std::uint64_t epoch = 0;
    std::string state;
    std::string admin;
    std::int64_t heard_ago_ms = 0;
  };
  // What admin shows (status) and where it sends clients when this process is a standby.
  struct view {
    bool active = false;
    std::uint64_t epoch = 0;  // own while active; the highest heard while standby
    std::uint64_t rank = 0;
    std::string active_instance;  // standby: the active it hears (empty: none known)
    std::string active_admin;     // standby: that active's admin endpoint (empty: unknown)
    std::vector<peer_view> peers;
    std::vector<std::string> rank_conflicts;  // peers heard with this process's rank (a configuration error)
  };

  static std::int64_t steady_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  bool may_publish() const {
    return active_.load(std::memory_order_acquire) && steady_ms() < lease_until_ms_.load(std::memory_order_acquire);
  }
  bool active() const { return active_.load(std::memory_order_acquire); }
  std::uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

  // HA actor: this process becomes the active RM under `epoch` (the lease is renewed by the next call).
  void activate(std::uint64_t epoch, std::int64_t lease_until_steady_ms) {
    epoch_.store(epoch, std::memory_order_release);
    lease_until_ms_.store(lease_until_steady_ms, std::memory_order_release);
    active_.store(true, std::memory_order_release);
  }
  // HA actor: stop publishing at once (a higher epoch heard, a handover).
  void deactivate(std::uint64_t highest_epoch) {
    active_.store(false, std::memory_order_release);
    lease_until_ms_.store(0, std::memory_order_release);
    epoch_.store(highest_epoch, std::memory_order_release);
  }
  void renew(std::int64_t lease_until_steady_ms) { lease_until_ms_.store(lease_until_steady_ms, std::memory_order_release); }

  // Differencing: the orchestrator's echoed rm_epoch and rm_cycle of the last work map (nullopt: a map
  // without one).
  void note_workmap(std::optional<std::uint64_t> echo, std::optional<std::uint64_t> echoed_cycle) {
    std::lock_guard lock{mutex_};
    ++workmaps_;
    if (echo) last_echo_ = *echo;
    if (echoed_cycle) last_echo_cycle_ = *echoed_cycle;
  }
  // Whether some work map carried rm_epoch: the orchestrator echoes, so a new active waits for its echo before
  // granting (echo_wait.hpp).
  bool orchestrator_echoes() const {
    std::lock_guard lock{mutex_};
    return last_echo_.has_value();
  }
  struct workmaps_seen {
    std::uint64_t maps = 0;
    std::optional<std::uint64_t> echo, echoed_cycle;
  };
  // HA actor: work maps seen since the last call, and the last echo.
  workmaps_seen take_workmaps() {
    std::lock_guard lock{mutex_};
    workmaps_seen out{workmaps_, last_echo_, last_echo_cycle_};
    workmaps_ = 0;
    return out;
  }

  void set_view(view v) {
    std::lock_guard lock{mutex_};
    view_ = std::move(v);
  }
  view get_view() const {
    std::lock_guard lock{mutex_};
    return view_;
  }

 private:
  std::atomic<bool> active_{false};
  std::atomic<std::uint64_t> epoch_{0};
  std::atomic<std::int64_t> lease_until_ms_{0};
  mutable std::mutex mutex_;
  std::uint64_t workmaps_ = 0;
  std::optional<std::uint64_t> last_echo_, last_echo_cycle_;
  view view_;
};

}  // namespace rmbus::actors
