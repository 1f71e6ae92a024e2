#pragma once
// Which rounds a pool's scheduler has been handed and not answered, without CAF so that it can be tested
// alone. Control starts a timer per round handed; when it fires, the round is overdue only if its plan has
// not come back. Every outstanding round is kept, not only the newest: publication's own round timeout may
// start the next round before control's timer for a hung one fires, and forgetting the older round then
// would let a hung scheduler go unnoticed for as long as rounds keep coming.
//
// Not thread-safe; one owner (the control actor).

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace rmbus::actors {

class round_watch {
 public:
  void handed(const std::string& pool, std::uint64_t cycle) { outstanding_[pool].insert(cycle); }

  // A plan answers its round and every earlier one (a scheduler takes its rounds in order).
  void answered(const std::string& pool, std::uint64_t cycle) {
    auto it = outstanding_.find(pool);
    if (it == outstanding_.end()) return;
    it->second.erase(it->second.begin(), it->second.upper_bound(cycle));
    if (it->second.empty()) outstanding_.erase(it);
  }

  bool overdue(const std::string& pool, std::uint64_t cycle) const {
    auto it = outstanding_.find(pool);
    return it != outstanding_.end() && it->second.count(cycle) > 0;
  }

  // The pool's scheduler was replaced or stopped: what it was handed is no longer waited for.
  void forget(const std::string& pool) { outstanding_.erase(pool); }
  void clear() { outstanding_.clear(); }

  std::size_t outstanding(const std::string& pool) const {
    auto it = outstanding_.find(pool);
    return it == outstanding_.end() ? 0 : it->second.size();
  }

 private:
  std::map<std::string, std::set<std::uint64_t>> outstanding_;
};

}  // namespace rmbus::actors
