#pragma once
// An HA epoch is a ballot (docs/protocol.md 4.8): a round and the candidate's rank in one integer,
//
//   epoch = round * ballot_ranks + rank
//
// the way Paxos makes proposal numbers unique by appending the proposer's id. A candidate that takes over
// coins the next round above every epoch it has heard, with its own rank; two candidates that never hear each
// other (a partition) can reach the same round, but while their ranks differ they can never hold the same
// epoch, so the orchestrator's fence (act only on an epoch at least the highest accepted) always tells them
// apart. ballot_ranks is a power of ten above config::max_ha_rank so that an epoch reads as round and rank in
// decimal: 30002 is round 3 of rank 2. Epochs of older rmbus versions (1, 2, 3...) are round 0.
//
// Epochs come from the bus (beacons, other RMs' schedules, the orchestrator's echo): one above max_epoch is not
// plausible and is refused where it is read, so that the next round can never overflow.

#include <cstdint>
#include <limits>

namespace rmbus::messages {

inline constexpr std::uint64_t ballot_ranks = 10'000;
inline constexpr std::uint64_t max_epoch = std::numeric_limits<std::uint64_t>::max() / 2;

constexpr std::uint64_t ballot(std::uint64_t round, std::uint64_t rank) { return round * ballot_ranks + rank; }
constexpr std::uint64_t ballot_round(std::uint64_t epoch) { return epoch / ballot_ranks; }
constexpr std::uint64_t ballot_rank(std::uint64_t epoch) { return epoch % ballot_ranks; }

// The epoch a candidate of `rank` (< ballot_ranks) takes over with: the round after that of every epoch it
// heard (`highest_heard` <= max_epoch), so above all of them.
constexpr std::uint64_t next_ballot(std::uint64_t highest_heard, std::uint64_t rank) {
  return ballot(ballot_round(highest_heard) + 1, rank);
}

static_assert(next_ballot(max_epoch, ballot_ranks - 1) > max_epoch, "a takeover above max_epoch cannot wrap");

}  // namespace rmbus::messages
