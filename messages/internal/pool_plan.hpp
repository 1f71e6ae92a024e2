#pragma once
// rm.internal.plan — the scheduler of one top-level nodepool -> publication and differencing: its answer
// for one round.
//
// `jobs` is the pool's complete schedule (rm.state entries) in a full plan, or only the jobs whose schedule
// changed since the scheduler's plan `base_plan_seq` in a change plan, with the ids of jobs gone in
// `removed_jobs`. Plans are numbered per scheduler (`plan_seq`); a full plan has no base (0). A scheduler
// sends a full plan first, and when publication asks (rm.internal.plansync, plan_sync_request.hpp). `machines` lists the machines whose state,
// size or free quanta changed since this scheduler's previous plan (every machine when `machines_complete`:
// its first plan, and the plan after a node_sync_request). `np_mb` is the non-preemptable memory each user
// holds in this pool (for the cross-pool allotment; empty when no allotment is configured: nothing reads it).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"
#include "messages/rm_state.hpp"

namespace rmbus::messages {

enum class machine_status { up, varied_off, down, blacklisted };  // wire names as written
std::string_view to_string(machine_status s);

struct machine_summary {
  std::string node;
  std::string nodepool;
  machine_status state = machine_status::up;
  bool quiesced = false;
  std::uint64_t memory_mb = 0;
  std::uint64_t quanta = 0;
  std::uint64_t free_quanta = 0;

  friend bool operator==(const machine_summary&, const machine_summary&) = default;
};

struct pool_plan {
  std::uint64_t cycle = 0;
  std::string pool;
  std::uint64_t quantum_mb = 0;
  // Durations (microseconds): total is apply_work + schedule as the pool's actor measured it.
  std::uint64_t total_us = 0;
  std::uint64_t how_much_us = 0;  // job caps included, as DUCC counts them
  std::uint64_t what_of_us = 0;
  std::uint64_t preempt_us = 0;
  std::uint64_t defrag_us = 0;
  // Round counts.
  std::uint64_t jobs_count = 0;
  std::uint64_t nodes = 0;  // schedulable nodes
  std::uint64_t given = 0;
  std::uint64_t preempted = 0;
  std::uint64_t evicted = 0;
  std::vector<job_schedule> jobs;  // by job id
  std::map<std::string, std::uint64_t> np_mb;  // user -> MB
  std::vector<machine_summary> machines;       // by node name
  bool machines_complete = false;
  // Which scheduler of the pool made the plan (messages/internal/seed_request.hpp): publication takes no
  // plan older than the newest generation it has heard of. Optional on the wire (0 from an older RM).
  std::uint64_t generation = 0;
  // The plan's number in its scheduler's chain, and the plan it builds on (0: a full plan; also from an
  // older RM, which sends neither). Optional on the wire, absent when 0.
  std::uint64_t plan_seq = 0;
  std::uint64_t base_plan_seq = 0;
  std::vector<std::string> removed_jobs;  // a change plan: jobs gone since the base; absent when empty

  bool full() const { return base_plan_seq == 0; }

  friend bool operator==(const pool_plan&, const pool_plan&) = default;
};

std::string encode(const envelope& env, const pool_plan& msg);
result<pool_plan> decode_pool_plan(std::string_view topic, std::string_view body, const decode_limits& limits = {},
                                   envelope* env_out = nullptr);

}  // namespace rmbus::messages
