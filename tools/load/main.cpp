// rmbus-load: the system benchmark. Fake agents and a fake orchestrator in one C++ process drive a real
// rmbus process over tcp loopback, and measure what users of the whole process feel (docs/performance.md,
// "The running RM"):
//   startup   first heartbeats of every node -> all up in rm.nodes (and nodes ever reported missing)
//   intake    heartbeats per second absorbed into node state as the rate is raised a quarter at a time until
//             the RM falls behind (its own ceiling) or rmbus-load cannot offer more, beside a raw cppzmq
//             PUB/SUB receiver's ceiling for the same bodies through the same forwarder
//   latency   a work map's publication -> the rm.state that answers it (rm.state's workmap_seq); with
//             --latency-after-settle, the maps after the first wait out the settle window (full rounds)
//   idle      CPU seconds per wall second and resident memory at DUCC's idle rates (/proc)
//   split     latency with the roles split over three processes on one bus
//   pools     four equal top-level pools: 2 actor threads against 1 (the pools' rounds one after another)
//   failover  HA: two candidates ([ha] enabled, default timing) on rmbus-proxy; the active SIGKILLed
//             --failovers times: the kill -> the first rm.state of the new epoch; before that, the standby's and
//             the active's CPU and memory at rest (not in the default set of phases)
// --ha turns [ha] on (one candidate, which takes over) in every one-process configuration, to measure what HA
// costs the active.
//   events    delta work maps (docs/protocol.md 4.2.1): after one full map, one job arrival or completion
//             every --event-ms (10), each published as a delta; each change -> the first rm.state answering it
//             or a later map (rm.state's workmap_seq), as percentiles; then a full map of the same cluster
//             timed the same way, the baseline of the same run; the pools' rounds and their stages (rm.cycle)
//             as medians; every node heartbeats each --events-heartbeat-ms (1000) (not in the default set)
//   serve     no measurement: keeps the cluster running for an outside observer (rmbus-web's benchmark);
//             with --no-node-memory its map names no node's size, as DUCC's orchestrator's does
//   restart   the RM SIGKILLed under running work and started again while the agents heartbeat every second;
//             the orchestrator's map (without node sizes) goes out as soon as the new RM is up: running work
//             refused, preempted or evicted by the restart, and the time to the first rm.state listing every
//             running process (not in the default set)
// --curve runs every phase with CURVE on the bus (docs/bus.md, "Security"): rmbus-load makes fresh key pairs
// in its work folder (the RM's, one rm key per further split process, its own client key), lists them, and
// writes [security] into each configuration. It takes no --key / --server-key as the other tools do: those
// name the keys of an RM running elsewhere, and rmbus-load always starts the RM itself.
// --accounting and --health turn those modules on in every configuration, to measure what they cost.
// Every wait has a deadline; children are killed at the end. Build in Release.

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include <CLI/CLI.hpp>
#include <unistd.h>

#include "tools/common/version_flag.hpp"
#include "tools/load/load_run.hpp"
#include "tools/load/stats.hpp"

using namespace rmbus;
using namespace rmbus::load;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  options o;
  CLI::App app{"rmbus-load: drives a real rmbus over tcp loopback and measures the whole process"};
  rmbus::tools::add_version_flag(app, "rmbus-load");
  std::string phases = "startup,intake,latency,idle,split,pools";
  app.add_option("--nodes", o.nodes, "nodes (agents)")->check(CLI::Range(4, 200000));
  app.add_option("--jobs", o.jobs, "work items of the DUCC-shaped mix")->check(CLI::Range(4, 400000));
  app.add_option("--users", o.users, "users")->check(CLI::Range(1, 10000));
  app.add_option("--runs", o.runs, "repeat everything; figures are printed per run and as medians")->check(CLI::Range(1, 20));
  app.add_option("--maps", o.maps, "work maps timed per latency measurement")->check(CLI::Range(2, 1000));
  app.add_option("--events-heartbeat-ms", o.events_heartbeat_ms,
                 "how often each node heartbeats in the events phase (default 1000)")
      ->check(CLI::Range(100, 60000));
  app.add_flag("--events-detail", o.events_detail,
               "events: also print each change's latency and each round's stages (the tail's causes)");
  app.add_flag("--latency-after-settle", o.latency_after_settle,
               "the latency phase times its maps after the RM's settle window (full rounds), not inside it");
  std::string preemption_policy = "ducc";
  app.add_option("--preemption-policy", preemption_policy,
                 "the RM's fair-share preemption policy in every configuration (ducc, the default, or sparing)")
      ->check(CLI::IsMember({"ducc", "sparing"}));
  app.add_option("--seed", o.seed, "workload seed");
  app.add_option("--phases", phases,
                 "comma-separated: startup, intake, latency, idle, split, pools, failover, events, restart; or serve "
                 "(alone: keep the cluster running for an outside observer)");
  app.add_option("--events", o.events, "events: changes published as deltas")->check(CLI::Range(2, 100000));
  app.add_option("--event-ms", o.event_ms, "events: ms between two changes")->check(CLI::Range(1, 10000));
  app.add_option("--schedule-changes", o.schedule_changes,
                 "events: the orchestrator follows rm.schedule.changes, a full message every N rounds, and nobody "
                 "subscribes to rm.state (0: it reads rm.state)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--serve-s", o.serve_s, "serve: seconds to keep the cluster running")->check(CLI::Range(1, 86400));
  app.add_flag("--no-node-memory", o.no_node_memory, "serve: the map names no node's size (node_memory_mb absent)");
  app.add_option("--rmbus", o.rmbus,
                 "the rmbus executable (default: rmbus beside this program, else ../rmbus)");
  app.add_option("--work-dir", o.work_dir, "where configurations and RM logs go (default: a fresh temporary folder)");
  bool curve = false;
  app.add_flag("--curve", curve, "CURVE on the bus: fresh keys in the work folder, [security] in every configuration");
  app.add_flag("--accounting", o.accounting, "job accounting on in every configuration (what Maui's JobChecker costs)");
  app.add_flag("--health", o.health, "the health report on in every configuration");
  app.add_flag("--ha", o.ha, "[ha] on (one candidate) in every one-process configuration: what HA costs the active");
  app.add_option("--failovers", o.failovers, "SIGKILLs of the active in the failover phase")->check(CLI::Range(1, 1000));
  app.add_option("--forwarders", o.forwarders,
                 "bus forwarders: the RM's embedded one and N - 1 rmbus-proxy processes (next to rmbus); every "
                 "client connects to all, so each message travels through each and receivers drop the copies")
      ->capture_default_str()
      ->check(CLI::Range(1, 4));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and exits 0; every bad argument exits 2, as the other rmbus tools do.
    return app.exit(e) == 0 ? 0 : 2;
  }
  o.sparing_preemption = preemption_policy == "sparing";
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as soon as it is measured, also into a file
  o.phases.clear();
  std::stringstream ps(phases);
  for (std::string p; std::getline(ps, p, ',');) {
    static const std::set<std::string> known{"startup", "intake", "latency", "idle",  "split",
                                             "pools",   "failover", "events", "serve", "restart"};
    if (!known.count(p)) {
      std::cerr << "rmbus-load: --phases: unknown phase '" << p
                << "' (known: startup, intake, latency, idle, split, pools, failover, events, serve, restart)\n";
      return 2;
    }
    o.phases.insert(p);
  }
  if (o.rmbus.empty()) {
    // Installed, rmbus sits beside this program (bin/); in the build tree one folder up (build/tools/).
    const auto here = std::filesystem::canonical("/proc/self/exe").parent_path();
    o.rmbus =
        (std::filesystem::exists(here / "rmbus") ? here / "rmbus" : here.parent_path() / "rmbus").string();
  }
  if (!std::filesystem::exists(o.rmbus)) {
    std::cerr << "rmbus-load: no rmbus executable at " << o.rmbus << " (give --rmbus)\n";
    return 2;
  }
  o.proxy = (std::filesystem::path(o.rmbus).parent_path() / "rmbus-proxy").string();
  if (o.forwarders > 1 && !std::filesystem::exists(o.proxy)) {
    std::cerr << "rmbus-load: --forwarders " << o.forwarders << " needs rmbus-proxy next to rmbus, at " << o.proxy
              << "\n";
    return 2;
  }
  if (o.work_dir.empty()) {
    char tmpl[] = "/tmp/rmbus-load.XXXXXX";
    o.work_dir = ::mkdtemp(tmpl);
  } else {
    std::error_code ec;
    std::filesystem::create_directories(o.work_dir, ec);
    if (ec) {
      std::cerr << "rmbus-load: --work-dir " << o.work_dir << ": " << ec.message() << "\n";
      return 2;
    }
  }
  if (curve) {
    try {
      o.keys = make_keys(o.work_dir);
    } catch (const std::exception& e) {
      std::cerr << "rmbus-load: --curve: " << e.what() << "\n";
      return 1;
    }
  }
  std::printf("rmbus-load: %d nodes, %d jobs, %d users; rmbus %s%s%s%s; %d forwarder(s); logs in %s\n", o.nodes,
              o.jobs, o.users, o.rmbus.c_str(), o.keys ? " with CURVE" : "", o.accounting ? " with accounting" : "",
              o.health ? " with the health report" : "", o.forwarders, o.work_dir.c_str());
  zmq::context_t ctx;
  std::vector<run_figures> runs;
  try {
    for (int run = 1; run <= o.runs; ++run) {
      std::printf("--- run %d of %d\n", run, o.runs);
      cluster_spec spec{o.nodes, o.jobs, o.users, 1, 15, o.seed, 12};
      const auto t0 = clock_type::now();
      const auto cluster = make_cluster(spec);
      std::fprintf(stderr, "  cluster: %zu nodes, %zu work items, %zu processes running (made in %.1f s)\n",
                   cluster.nodes.size(), cluster.work.work.size(), cluster.processes, seconds_since(t0));
      run_figures f;
      if (o.phases.count("serve")) run_serve(o, ctx, cluster);
      if (o.phases.count("startup") || o.phases.count("intake") || o.phases.count("latency")) run_one(o, ctx, cluster, f);
      if (o.phases.count("idle")) run_idle(o, ctx, cluster, f);
      if (o.phases.count("split")) {
        f.split = run_latency_only(o, ctx, cluster, "split");
        print_latency("latency, roles over 3 processes:", f.split);
        if (!f.one.ms.empty())
          std::printf("split / one process (median latency): %.2f\n", median(f.split.ms) / median(f.one.ms));
      }
      if (o.phases.count("pools")) {
        auto four = make_cluster(cluster_spec{o.nodes, o.jobs, o.users, 4, 15, o.seed, 12});
        f.pools2 = run_latency_only(o, ctx, four, "one");
        print_latency("4 pools, 2 threads (concurrent):", f.pools2);
        f.pools1 = run_latency_only(o, ctx, four, "one-1thread");
        print_latency("4 pools, 1 thread (one after another):", f.pools1);
        std::printf("4 pools: one after another / concurrent (median latency): %.2f\n",
                    median(f.pools1.ms) / std::max(1e-9, median(f.pools2.ms)));
      }
      if (o.phases.count("failover")) run_failover(o, ctx, cluster, f.failover);
      if (o.phases.count("events")) run_events(o, ctx, cluster, f.events);
      if (o.phases.count("restart")) run_restart(o, ctx, cluster, f.restart);
      runs.push_back(f);
    }
  } catch (const std::exception& e) {
    std::cerr << "rmbus-load: " << e.what() << "\n";
    return 1;
  }
  if (runs.size() > 1) {
    auto med = [&](auto get) {
      std::vector<double> v;
      for (const auto& r : runs) v.push_back(get(r));
      return median(v);
    };
    std::printf("=== medians of %zu runs\n", runs.size());
    const bool one = o.phases.count("startup") || o.phases.count("intake") || o.phases.count("latency");
    if (o.phases.count("startup")) std::printf("startup %.2f s\n", med([](const run_figures& r) { return r.startup_s; }));
    if (o.phases.count("intake"))
      std::printf("intake %.0f/s (raw ceiling %.0f/s; per-run ratio %.2f)\n",
                  med([](const run_figures& r) { return r.intake_sustained; }),
                  med([](const run_figures& r) { return r.raw_ceiling; }),
                  med([](const run_figures& r) { return r.raw_ceiling > 0 ? r.intake_sustained / r.raw_ceiling : 0.0; }));
    if (o.phases.count("latency"))
      std::printf("latency median %.1f ms, p99 %.1f ms\n", med([](const run_figures& r) { return median(r.one.ms); }),
                  med([](const run_figures& r) { return percentile(r.one.ms, 99); }));
    if (one)
      std::printf("resident %.0f MB (peak %.0f MB)\n", med([](const run_figures& r) { return r.rss_mb; }),
                  med([](const run_figures& r) { return r.peak_rss_mb; }));
    if (o.phases.count("idle")) std::printf("idle %.1f%% of one core\n", 100 * med([](const run_figures& r) { return r.idle_cpu; }));
    if (o.phases.count("split") && o.phases.count("latency"))
      std::printf("split / one process %.2f\n",
                  med([](const run_figures& r) { return r.one.ms.empty() ? 0.0 : median(r.split.ms) / median(r.one.ms); }));
    if (o.phases.count("pools"))
      std::printf("4 pools, one after another / concurrent %.2f\n",
                  med([](const run_figures& r) { return median(r.pools1.ms) / std::max(1e-9, median(r.pools2.ms)); }));
    if (o.phases.count("events"))
      std::printf("events: change -> schedule median %.1f ms, p99 %.1f ms; full map median %.1f ms; per-run ratio "
                  "delta / full %.2f\n",
                  med([](const run_figures& r) { return median(r.events.ms); }),
                  med([](const run_figures& r) { return percentile(r.events.ms, 99); }),
                  med([](const run_figures& r) { return median(r.events.full_ms); }),
                  med([](const run_figures& r) {
                    return median(r.events.full_ms) > 0 ? median(r.events.ms) / median(r.events.full_ms) : 0.0;
                  }));
  }
  return 0;
}
