#pragma once
// Not a wire message: what the jobs of an rm.state add up to per class, for a reader in the same process.
//
// The metrics of the process that publishes rm.state count jobs and processes per class and status, and
// the quanta awarded and demanded (actors/rm_metrics.hpp). Counted from the jobs, that is a walk over every
// job and share of the schedule each round (some 12 ms at 100,000 jobs). Publication keeps the listing
// between rounds and edits only the jobs a round changed (actors/round_listing.hpp); it keeps this tally
// beside it the same way (each replaced entry taken out, each new one put in), and rm.state carries it to
// the metrics actor (rm_state::tally).
//
// A job's quanta are its count times its order, and its order depends on the class's quantum, which is the
// reader's configuration: so the tally sums given and demand by the job's memory per process, and by the
// quanta of its first share (the order when the class's quantum is not known), and the reader multiplies.

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "messages/rm_state.hpp"

namespace rmbus::messages {

struct schedule_tally {
  // What jobs of one size add: how many there are (so that an entry leaves with its last job), and their
  // given and demand summed (processes).
  struct by_size {
    std::uint64_t jobs = 0;
    std::uint64_t given = 0;
    std::uint64_t demand = 0;
    friend bool operator==(const by_size&, const by_size&) = default;
  };
  struct per_class {
    std::uint64_t listed = 0;             // jobs of the class: the class leaves the tally with its last job
    std::array<std::uint64_t, 3> jobs{};  // by job_status
    std::array<std::uint64_t, 4> processes{};          // by share_status
    std::map<std::uint64_t, by_size> by_memory_mb;     // by the job's memory_mb
    std::map<std::uint64_t, by_size> by_first_quanta;  // by its first share's quanta (0: it has no share)
    friend bool operator==(const per_class&, const per_class&) = default;
  };
  std::map<std::string, per_class, std::less<>> classes;  // by class name, as listed ("" included)

  void add(const job_schedule& j);
  // Takes out what add(j) put in; j must have been added (and not taken out since).
  void remove(const job_schedule& j);

  friend bool operator==(const schedule_tally&, const schedule_tally&) = default;
};

// The tally of every job listed.
schedule_tally tally_of(const schedule_listing& jobs);

}  // namespace rmbus::messages
