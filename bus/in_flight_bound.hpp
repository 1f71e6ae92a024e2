#pragma once
// A bound on messages handed from the bus subscriber's thread toward one consumer (the heartbeat intake)
// that the consumer has not yet taken. CAF mailboxes are unbounded, and ZeroMQ's receive high-water mark
// bounds only the socket: without this, a storm faster than the consumer drains queues in memory.
//
// The subscriber asks try_enter() before it hands a message on and sheds the message when the bound is
// reached (counted); the consumer calls leave() as it takes each one. The count is therefore what waits in
// the router's and the consumer's mailboxes. A message the caller calls `known` (the subscriber: a key it
// handed on within known_window, bus/known_keys.hpp) is admitted even at the bound, so a real node heard every
// interval is not shed behind a storm of first-heard names; the count may then exceed the limit by what known
// keys send (docs/reliability.md).
//
// Thread-safety: one thread calls try_enter (the subscriber's), any thread leave / set_limit / readings;
// lock-free.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace rmbus::bus {

class in_flight_bound {
 public:
  // REQUIRES: limit >= 1.
  explicit in_flight_bound(std::size_t limit) : limit_(limit) {}

  // True (and one more in flight) when below the limit; false (and one more shed) otherwise. Only one
  // thread enters, and leave() only lowers the count, so a load then an add cannot overshoot the limit.
  bool try_enter(bool known = false) {
    if (!known && count_.load(std::memory_order_relaxed) >= limit_.load(std::memory_order_relaxed)) {
      shed_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    count_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  // The consumer took one. Never below zero (a consumer fed also by other paths, e.g. tests, may leave more).
  void leave() {
    auto c = count_.load(std::memory_order_relaxed);
    while (c > 0 && !count_.compare_exchange_weak(c, c - 1, std::memory_order_relaxed)) {
    }
  }
  void set_limit(std::size_t limit) { limit_.store(limit, std::memory_order_relaxed); }
  // How recently a key must have been handed on to count as known (0: no key is known).
  void set_known_window(std::chrono::nanoseconds window) { known_window_ns_.store(window.count(), std::memory_order_relaxed); }
  std::int64_t known_window_ns() const { return known_window_ns_.load(std::memory_order_relaxed); }

  std::size_t in_flight() const { return count_.load(std::memory_order_relaxed); }
  std::size_t limit() const { return limit_.load(std::memory_order_relaxed); }
  std::uint64_t shed() const { return shed_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::size_t> limit_;
  std::atomic<std::size_t> count_{0};
  std::atomic<std::uint64_t> shed_{0};
  std::atomic<std::int64_t> known_window_ns_{0};
};

}  // namespace rmbus::bus
