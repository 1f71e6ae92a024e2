#pragma once
// The recent history of a simulated run (nemesis moves and notable events), kept so that a failing seed can
// show what led to its failure. Bounded: only the last `capacity` entries are kept.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

namespace rmbus::simcheck {

class sim_history {
 public:
  explicit sim_history(std::size_t capacity = 30) : capacity_(capacity) {}
  void note(int round, std::int64_t now_ms, std::string what) {
    entries_.push_back("round " + std::to_string(round) + " t=" + std::to_string(now_ms) + "ms: " + std::move(what));
    if (entries_.size() > capacity_) entries_.pop_front();
  }
  const std::deque<std::string>& entries() const { return entries_; }

 private:
  std::size_t capacity_;
  std::deque<std::string> entries_;
};

}  // namespace rmbus::simcheck
