#pragma once
// rm.internal.round — work-map differencing -> publication and admin: a round started.
//
// Names the pools that must answer (each with a pool_plan) and the work refused before it reached any pool
// (an unknown class, no default class). `workmap_seq` / `workmap_src` identify the orchestrator's work map
// the round answers; publication copies them into rm.state.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

struct refused_work {
  std::string id;
  std::string user;
  std::string reason;

  friend bool operator==(const refused_work&, const refused_work&) = default;
};

struct round_start {
  std::uint64_t cycle = 0;
  std::vector<std::string> pools;
  std::vector<refused_work> refused;
  std::uint64_t workmap_seq = 0;  // envelope seq of the work map (0: unknown)
  std::string workmap_src;        // its envelope src
  // Why the round gives nothing new (a restart's settle window, an HA active waiting for the orchestrator's
  // echo); publication copies it into each pool's rm.cycle (optional key; empty: the round may give).
  std::string hold{};

  friend bool operator==(const round_start&, const round_start&) = default;
};

std::string encode(const envelope& env, const round_start& msg);
result<round_start> decode_round_start(std::string_view topic, std::string_view body,
                                       const decode_limits& limits = {}, envelope* env_out = nullptr);

}  // namespace rmbus::messages
