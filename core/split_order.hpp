#pragma once
// The order in which a fair-share class's split serves its jobs: users by name, each user's jobs oldest
// first (the class_job keys). Found by sorting every job's key or, a round after one change, from the
// class's kept split, sorting only the jobs of the users the change touched. Internal to How Much.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/class_split.hpp"
#include "core/cluster_model.hpp"

namespace rmbus::core {

// A job's key and its position among the class's jobs (slot order): 16 bytes to sort instead of 48, and
// nothing to sort back.
struct keyed_job {
  std::uint64_t key;
  std::size_t at;
};

// Reused from class to class and round to round (its arrays keep their capacity). Not thread-safe.
class split_order {
 public:
  // The jobs `cj` (slot order) in key order: fills split.key_order and split.by_user, and wants().
  void sort(const std::vector<class_job>& cj, how_much_cache::class_split& split);

  // The same from `kept`, the class's split of an earlier round, when the jobs differ from its own in few
  // users: the users whose jobs all kept their slot, order, cap and group, and none of whose jobs the
  // model's log of index changes names since `seen` (cluster_model::job_set_changes when `kept` was last
  // made or taken), keep their jobs in the order they had, each job at its new position; the others' jobs
  // are sorted by key. Also fills unchanged_from() and old_of_new(). False, with nothing of `split` written,
  // when the log does not reach back to `seen` or more than half the users changed: the caller sorts.
  bool edit(const cluster_model& m, const std::optional<std::uint64_t>& seen, const std::vector<class_job>& cj,
            how_much_cache::class_split& split, const how_much_cache::class_split& kept);

  // Each job's (order, cap), in key order.
  const std::vector<std::pair<int, std::int64_t>>& wants() const { return wants_; }
  // After edit(): per user of the split, its index in `kept` when its jobs are as they were (-1: changed).
  const std::vector<int>& unchanged_from() const { return unchanged_from_; }
  // After edit(): per job of `cj`, its position in kept.jobs (-1: new or changed).
  const std::vector<int>& old_of_new() const { return old_of_new_; }

 private:
  std::vector<std::pair<int, std::int64_t>> wants_;
  std::vector<keyed_job> by_key_, by_key_scratch_;
  std::vector<char> changed_user_;  // per user slot
  std::vector<int> unchanged_from_;
  std::vector<int> old_of_new_, new_of_old_;
  std::vector<keyed_job> changed_jobs_;  // the changed users' jobs, by key
};

}  // namespace rmbus::core
