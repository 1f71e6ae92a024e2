#pragma once
// rm.cycle — sent by the RM to monitors once per top-level nodepool per scheduling round.
//
// What the round did in that pool (counts) and how long each stage of the pipeline took (microseconds):
// How Much (apportionment), What Of (placement), preemption planning, defragmentation, and the whole round;
// and, when the round gave nothing new on purpose, why.

#include <cstdint>
#include <string>
#include <string_view>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

struct rm_cycle {
  std::string pool;              // top-level nodepool
  std::uint64_t cycle = 0;       // round number, as in rm.state
  std::uint64_t jobs = 0;        // jobs considered in this pool
  std::uint64_t nodes = 0;       // schedulable nodes in this pool
  std::uint64_t given = 0;       // new shares given this round
  std::uint64_t preempted = 0;   // shares marked preempt this round
  std::uint64_t evicted = 0;     // shares marked evict this round
  std::uint64_t how_much_us = 0;
  std::uint64_t what_of_us = 0;
  std::uint64_t preempt_us = 0;
  std::uint64_t defrag_us = 0;
  std::uint64_t total_us = 0;
  // Why the round gave nothing new on purpose (optional key `held`; empty: it could give): a restarted RM's
  // settle window, or an HA active waiting for the orchestrator to accept its epoch.
  std::string held{};

  friend bool operator==(const rm_cycle&, const rm_cycle&) = default;
};

std::string encode(const envelope& env, const rm_cycle& msg);
result<rm_cycle> decode_rm_cycle(std::string_view topic, std::string_view body, const decode_limits& limits = {},
                                 envelope* env_out = nullptr);

}  // namespace rmbus::messages
