#pragma once
// The simulated cluster rmbus-load drives a real rmbus with: nodes, a DUCC-shaped work map whose processes
// already run, and the rmbus configuration that schedules it.
//
// The work is rmbus-bench's seeded workload (tools/bench/workload.hpp: many users, five fair-share classes,
// FIXED_SHARE services, reservations, DUCC's shipped class weights). Before the RM sees it, the core's own
// scheduler runs it for a few rounds with the bench's orchestrator model, so the first work map already has
// thousands of processes running on their nodes, as a real cluster has when its RM starts; the RM recovers
// them (share ids it never gave) and from then on schedules a cluster in steady state.
//
// With `pools` > 1 the cluster is cut into that many equal top-level nodepools, each its own workload (nodes
// "p<i>-n...", classes "<class>-p<i>"), so that their rounds can run concurrently.

#include <cstdint>
#include <string>
#include <vector>

#include "config/rm_config.hpp"
#include "messages/heartbeat.hpp"
#include "messages/rm_state.hpp"
#include "messages/workmap.hpp"

namespace rmbus::load {

struct cluster_spec {
  int nodes = 1000;
  int jobs = 2000;
  int users = 100;
  int pools = 1;
  std::uint64_t quantum_gb = 15;
  std::uint64_t seed = 1;
  int warm_rounds = 12;  // core rounds run before the RM sees the work
};

struct load_cluster {
  std::vector<messages::heartbeat> nodes;  // one heartbeat per node, by name
  messages::workmap work;                  // the warmed-up map, processes running
  config::rm_config config;                // what rmbus is started with (timings set by the caller)
  std::size_t processes = 0;               // processes running in `work`
};

load_cluster make_cluster(const cluster_spec& spec);

// The orchestrator's part between two maps: start a process (running at once) for every new share of
// `state`, drop the processes of preempted or evicted shares. Returns how many processes it started and
// stopped.
std::size_t follow_schedule(messages::workmap& work, const messages::rm_state& state);

}  // namespace rmbus::load
