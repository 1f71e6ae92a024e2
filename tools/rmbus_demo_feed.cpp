// rmbus-demo-feed: a small simulated cluster for the README's first command. Fake agents for 8 nodes of mixed
// sizes and a fake orchestrator (tests/support/fake_cluster) talk to a running rmbus over the bus; every
// few seconds it prints what the RM schedules (rm.state). It stops by itself after --seconds.
//
//   rmbus-demo-feed [--bus-pub tcp://127.0.0.1:5560] [--bus-sub tcp://127.0.0.1:5561] [--seconds 45]
//                   [--period-ms 1000]
//
// The story: a reservation of user carol was already running before the RM started (the first work map
// names it, so the RM recovers it and starts scheduling at once, DUCC's fast recovery); alice submits a
// fair-share job and gets the free memory; bob's job arrives and alice shrinks to a fair split by
// preemption; then alice's job completes and bob expands.

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "tests/support/fake_cluster.hpp"

namespace ts = rmbus::test_support;

int main(int argc, char** argv) {
  ts::cluster_options opt;
  opt.name = "demo-feed";
  int seconds = 45;
  int period_ms = 1000;
  CLI::App app{"rmbus-demo-feed: fake agents and a fake orchestrator for a running rmbus"};
  app.add_option("--bus-pub", opt.bus_pub, "forwarder side publishers connect to")->capture_default_str();
  app.add_option("--bus-sub", opt.bus_sub, "forwarder side subscribers connect to")->capture_default_str();
  app.add_option("--seconds", seconds, "stop after this long")->capture_default_str()->check(CLI::Range(1, 3600));
  app.add_option("--period-ms", period_ms, "heartbeat and work map period")->capture_default_str()->check(CLI::Range(50, 60000));
  CLI11_PARSE(app, argc, argv);
  opt.period = std::chrono::milliseconds(period_ms);

  ts::fake_cluster c{opt};
  // 8 nodes: 2 x 16 GB, 3 x 32 GB, 2 x 64 GB, 1 x 128 GB (memory offered for work, MB).
  const std::pair<const char*, std::uint64_t> nodes[] = {{"node01", 16384}, {"node02", 16384}, {"node03", 32768},
                                                          {"node04", 32768}, {"node05", 32768}, {"node06", 65536},
                                                          {"node07", 65536}, {"node08", 131072}};
  for (const auto& [n, mb] : nodes) c.add_node(n, mb);
  // carol's whole-machine reservation, running since before the RM started: recovered from the first map.
  c.submit({"carol-reservation", "carol", "reserve", 32768, rmbus::messages::work_kind::reservation, 1, 1});
  c.adopt_process("carol-reservation", "boot0-0.1", "node05");
  c.start();
  std::cout << "rmbus-demo-feed: 8 nodes (376 GB) on " << opt.bus_pub << " / " << opt.bus_sub << " for " << seconds
            << " s\n" << std::flush;

  const auto start = std::chrono::steady_clock::now();
  const auto at = [&](int s) { return start + std::chrono::seconds(s); };
  bool alice = false, bob = false, done = false;
  auto next_print = start + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < at(seconds)) {
    const auto now = std::chrono::steady_clock::now();
    if (!alice && now >= at(2)) {
      alice = true;
      std::cout << "\n>>> alice submits a fair-share job: 4 GB per process, 1000 work items\n";
      c.submit({"alice-job", "alice", "normal", 4096, rmbus::messages::work_kind::job, 0, 1000});
    }
    if (!bob && now >= at(seconds / 3)) {
      bob = true;
      std::cout << "\n>>> bob submits a fair-share job: 8 GB per process; alice must shrink to a fair split\n";
      c.submit({"bob-job", "bob", "normal", 8192, rmbus::messages::work_kind::job, 0, 1000});
    }
    if (!done && now >= at(2 * seconds / 3)) {
      done = true;
      std::cout << "\n>>> alice's job completes; bob may expand\n";
      c.complete("alice-job");
    }
    if (now >= next_print) {
      next_print += std::chrono::seconds(3);
      if (auto s = c.last_state()) std::cout << "\n" << ts::summary(*s) << std::flush;
      else std::cout << "(no rm.state yet)\n" << std::flush;
    }
    std::this_thread::sleep_until(std::min(next_print, now + std::chrono::milliseconds(200)));
  }
  c.stop();
  std::cout << "\nrmbus-demo-feed: done (" << c.states_seen() << " schedules received)\n";
  return c.states_seen() > 0 ? 0 : 1;
}
