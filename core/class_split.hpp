#pragma once
// One fair-share class's split among its users and jobs, as How Much computes it, keeps it between rounds
// (how_much_cache) and writes it into the job records: the records of its jobs, and the split itself.
// Internal to How Much (how_much.cpp, split_order.cpp).

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/how_much.hpp"

namespace rmbus::core {

// What the fair-share split needs of one job, gathered once from the job records, in slot order (the
// records are read front to back), instead of read again at each level in the order of users.
struct class_job {
  std::uint64_t key;  // (user rank, job rank): users by name, each user's jobs oldest first
  int slot;
  int order;
  std::int64_t cap;
  int user_slot;      // the job's user, as the model numbers users
  int group;          // its share group (-1: none)
  int user;           // index into the split's users (written by the split)
  int held;           // processes it holds (cluster_model::current), read before the split; not an input
  std::int64_t given;  // written by the split

  // Equal in all that the split reads of the job.
  bool same_input(const class_job& o) const {
    return key == o.key && slot == o.slot && order == o.order && cap == o.cap && user_slot == o.user_slot &&
           group == o.group;
  }
};

// One user's jobs in a split: positions [begin, end) of the jobs in key order.
struct user_jobs {
  int user_slot;
  std::size_t begin, end;
};

// One class's split among its users and jobs: what it was computed from, and what the write into the job
// records reads.
struct how_much_cache::class_split {
  std::vector<std::int64_t> class_given;
  std::vector<std::pair<int, std::int64_t>> orders;
  std::int64_t class_pfs = 0;
  int largest = 0;  // the largest machine order of the class's pool tree

  // In slot order, each with its user and what it was given. Also the inputs it was computed from: the
  // split writes only `user` and `given` (same_input compares the rest).
  std::vector<class_job> jobs;
  // The jobs in key order (users by name, each user's oldest first), as positions in `jobs`.
  std::vector<int> key_order;
  std::vector<user_jobs> by_user;  // spans of key_order
  std::vector<std::int64_t> user_qshares;
  std::vector<std::int64_t> tree_user_pfs;  // group path: each user's pure fair share
  std::vector<std::int64_t> group_qshares;  // group path: quanta given to each group of the class's tree
  std::vector<group_load> groups;           // group path: what it added to how_much_result::groups

  // Each user's split among its jobs (only when kept), so that a class split again after one change splits
  // again only the users whose award or jobs changed: the user's award by order, and its jobs' (order, cap)
  // in the order they are served, with what each was given.
  struct user_part {
    int user_slot;
    std::vector<std::pair<int, std::int64_t>> orders;
    std::vector<std::int64_t> given;
    std::size_t first;  // its jobs: job_wants[first, first + count)
    std::size_t count;
  };
  std::vector<user_part> user_parts;
  std::vector<std::pair<int, std::int64_t>> job_wants;
  std::vector<std::int64_t> job_given;

  bool computed_from(const std::vector<class_job>& cj, const std::vector<std::int64_t>& given,
                     const std::vector<std::pair<int, std::int64_t>>& wanted, std::int64_t pfs, int big) const {
    if (pfs != class_pfs || big != largest || given != class_given || wanted != orders || cj.size() != jobs.size())
      return false;
    for (std::size_t k = 0; k < cj.size(); ++k)
      if (!cj[k].same_input(jobs[k])) return false;
    return true;
  }
};

}  // namespace rmbus::core
