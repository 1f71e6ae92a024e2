#pragma once
// Hands the latest page data from the one thread that builds it to every open event stream.
//
// Two kinds of news: a snapshot (everything the page shows, built when the bus brought something new) and a
// health tick (ages and the stale marker, built once a second when nothing else came, so a silent RM shows
// as stale without any message). Each is kept as one shared, immutable string with a version; a stream that
// fell behind skips straight to the latest (snapshots are complete, nothing is lost by skipping).
//
// Thread-safety: every member may be called from any thread.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace rmbus::web {

class snapshot_hub {
 public:
  using text = std::shared_ptr<const std::string>;

  void publish_snapshot(text snapshot);
  void publish_health(text health);
  // Wakes every waiter for good: the server is stopping.
  void close();

  // What a stream has sent so far; versions start at 0 (nothing).
  struct cursor {
    std::uint64_t snapshot = 0;
    std::uint64_t health = 0;
  };
  struct news {
    text body;             // null: nothing new within the timeout (or closed)
    bool snapshot = false;
    bool closed = false;
  };
  // The newest snapshot after `seen` if any, else the newest health tick after it; waits up to `timeout`.
  // Advances `seen`.
  news wait(cursor& seen, std::chrono::milliseconds timeout);
  text latest_snapshot() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  text snapshot_, health_;
  std::uint64_t snapshot_version_ = 0, health_version_ = 0;
  bool closed_ = false;
};

}  // namespace rmbus::web
