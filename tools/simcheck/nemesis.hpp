#pragma once
// The nemesis's moves (the way FoundationDB's and TigerBeetle's simulators test): what it may do to the
// head of a simulated RM in one round. Which moves happen, to which node and for how long is drawn from the
// run's seed (sim_run.cpp); this file names them and says how often each is tried.

#include <array>
#include <cstddef>

namespace rmbus::simcheck {

enum class move_kind : std::size_t {
  heartbeat_dropped,     // one heartbeat of a node never arrives
  heartbeat_late,        // one arrives up to 1.8 intervals late (after the next one: out of order)
  heartbeat_duplicated,  // one arrives twice
  node_flap,             // a node's heartbeats stop for 1 to stability+3 intervals: missing, maybe down, back up
  mass_loss,             // 30-60% of the nodes fall silent at once, long enough to go down: the brake paces
  vary_off_on,           // the admin varies a node off, and on again 2-6 rounds later
  scheduler_replaced,    // a fresh scheduler seeded from the last published schedule (adopt_published)
  late_start,            // the orchestrator starts a share the RM withdrew before the start
  map_lost,              // a work map never arrives
  map_repeated,          // a work map arrives twice, the second time late
  map_reordered,         // a work map arrives after the next one
  plan_lost,             // the orchestrator misses a schedule
  takeover,              // a new HA active of the next epoch, seeded from a schedule up to 3 publications old
                         // (only with run_settings::takeovers, drawn from a random source of its own)
  count
};

constexpr std::size_t move_kinds = static_cast<std::size_t>(move_kind::count);

constexpr std::array<const char*, move_kinds> move_names = {
    "heartbeat_dropped", "heartbeat_late", "heartbeat_duplicated", "node_flap",  "mass_loss", "vary_off_on",
    "scheduler_replaced", "late_start",    "map_lost",             "map_repeated", "map_reordered", "plan_lost",
    "takeover"};

// How often each move is tried per round while the nemesis is on, in percent (the heartbeat moves: per node).
constexpr std::array<int, move_kinds> move_percent = {3, 3, 3, 25, 4, 8, 5, 15, 10, 10, 10, 8, 4};

inline const char* to_string(move_kind k) { return move_names[static_cast<std::size_t>(k)]; }

}  // namespace rmbus::simcheck
