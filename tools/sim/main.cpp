// rmbus-sim: fake node agents and a fake orchestrator in a closed loop with a running rmbus, driven by a
// scenario file or a seeded random workload; prints progress while it runs and a report at the end.
//
//   rmbus-sim --bus-pub EP[,EP...] --bus-sub EP[,EP...] (--scenario FILE | --random SEED [--nodes DESC] [--jobs N] [--users
//   N])
//             [--seconds N] [--speed X] [--summary-every-ms N] [--ready-timeout-s N]
//             [--csv FILE] [--plot FILE.svg] [--report FILE] [--log-level L] [--key FILE --server-key FILE]
//             [--drain-on-reclaim]
//
// --key (the simulator's key pair, roles agent,orchestrator) and --server-key (the forwarder's public key)
// join a CURVE bus (docs/bus.md, "Security"). --drain-on-reclaim: the simulated orchestrator drains a
// process whose share carries reclaim_at_ms (finishes its items in flight, then ends it) instead of letting
// it run until the RM preempts it.
//
// It talks to rmbus only through the bus (publishers connect to the forwarder's --bus-pub side, subscribers
// to its --bus-sub side), so the RM may run on another host. docs/sim.md describes the scenario format, the
// models and the report.
//
// Exit status: 0 after a run (whatever its figures); 2 for a bad argument or scenario (every problem named);
// 3 when no rm.state arrived within --ready-timeout-s (the RM is not reachable on those endpoints); 1 when an
// output file cannot be written.

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <fstream>
#include <iostream>
#include <string>
#include <zmq.hpp>

#include "bus/curve.hpp"
#include "bus/endpoint_list.hpp"
#include "bus/log_level.hpp"
#include "tools/common/tool_logging.hpp"
#include "tools/common/version_flag.hpp"
#include "tools/sim/driver.hpp"
#include "tools/sim/random_scenario.hpp"
#include "tools/sim/report.hpp"
#include "tools/sim/scenario.hpp"

namespace sim = rmbus::sim;

namespace {

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) {
    std::cerr << "rmbus-sim: cannot write " << path << "\n";
    return false;
  }
  return true;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  sim::driver_options opt;
  std::string scenario_file, csv_file, plot_file, report_file, log_level = "warn";
  std::uint64_t seed = 0;
  sim::random_spec rnd;
  int seconds = 60, ready_timeout_s = 90, summary_every_ms = 2000;
  std::string key_file, server_key_file;

  CLI::App app{"rmbus-sim: simulated agents and orchestrator in a closed loop with a running rmbus"};
  rmbus::tools::add_version_flag(app, "rmbus-sim");

  // Several forwarders (EP,EP,...): every agent and the orchestrator publish through each, and the copies of
  // rm.state that arrive are dropped by the subscriber (docs/bus.md, "Several forwarders").
  const auto endpoint_list = [](const std::string& list) { return rmbus::bus::endpoint_list_error(list).value_or(""); };
  app.add_option("--bus-pub", opt.bus_pub, "forwarder side publishers connect to (several: EP,EP,...)")
      ->capture_default_str()
      ->check(endpoint_list);
  app.add_option("--bus-sub", opt.bus_sub, "forwarder side subscribers connect to (several: EP,EP,...)")
      ->capture_default_str()
      ->check(endpoint_list);
  app.add_option("--key", key_file, "CURVE: the simulator's key pair file (roles agent,orchestrator)");
  app.add_option("--server-key", server_key_file, "CURVE: the bus forwarder's public key file");
  auto* scenario_opt = app.add_option("--scenario", scenario_file, "scenario file (TOML, docs/sim.md)");
  auto* random_opt = app.add_option("--random", seed, "generate a random scenario from this seed instead");
  scenario_opt->excludes(random_opt);
  app.add_option("--nodes", rnd.nodes, "with --random: node description, e.g. 200x64G@default,20x256G@bigmem")
      ->capture_default_str()
      ->needs(random_opt);
  app.add_option("--jobs", rnd.jobs, "with --random: number of jobs")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000))
      ->needs(random_opt);
  app.add_option("--users", rnd.users, "with --random: number of users")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000))
      ->needs(random_opt);
  app.add_option("--seconds", seconds, "bound on the scenario's wall time")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  app.add_option("--speed", opt.speed, "scenario time per wall time (2 = twice as fast)")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 1000.0));
  app.add_option("--summary-every-ms", summary_every_ms, "progress line period in wall ms (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 600000));
  app.add_option("--ready-timeout-s", ready_timeout_s, "bound on the wait for the RM's first rm.state")
      ->capture_default_str()
      ->check(CLI::Range(1, 600));
  app.add_flag("--drain-on-reclaim", opt.drain_on_reclaim,
               "drain a process given a reclaim deadline: finish its items in flight, then end it");
  app.add_flag("--deltas", opt.deltas,
               "between full maps, publish a delta work map on every change (docs/protocol.md 4.2.1)");
  app.add_option("--csv", csv_file, "write the time series as CSV here");
  app.add_option("--plot", plot_file, "write a plot of allocation and utilization here (SVG)");
  app.add_option("--report", report_file, "write the report here too");
  app.add_option("--log-level", log_level,
                 std::string("log level: ") + std::string(rmbus::bus::log_level_names))
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print and exit 0; every bad argument exits 2.
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (!rmbus::tools::start_tool_logging("rmbus-sim", log_level, std::cerr)) return 2;
  try {
    opt.curve = rmbus::bus::load_curve_client(key_file, server_key_file);
  } catch (const rmbus::bus::curve_error& e) {
    std::cerr << "rmbus-sim: " << e.what() << "\n";
    return 2;
  }
  if (scenario_opt->count() == 0 && random_opt->count() == 0) {
    std::cerr << "rmbus-sim: give a scenario: --scenario FILE or --random SEED (see --help)\n";
    return 2;
  }
  if (!plot_file.empty() && !ends_with(plot_file, ".svg")) {
    std::cerr << "rmbus-sim: --plot: only SVG is written; give a file name ending in .svg\n";
    return 2;
  }

  sim::scenario sc;
  try {
    if (scenario_opt->count() > 0) {
      sc = sim::load_scenario_file(scenario_file);
    } else {
      rnd.seed = seed;
      sc = sim::random_scenario(rnd);
    }
  } catch (const sim::scenario_error& e) {
    std::cerr << "rmbus-sim: the scenario has " << e.problems().size() << " problem(s):\n";
    for (const auto& p : e.problems()) std::cerr << "  " << p << "\n";
    return 2;
  }
  opt.run_limit = std::chrono::seconds(seconds);
  opt.ready_timeout = std::chrono::seconds(ready_timeout_s);
  opt.summary_every = std::chrono::milliseconds(summary_every_ms);

  // SIGINT / SIGTERM end the run early but still produce the report: blocked here, before any thread exists
  // (so every thread inherits the mask), and polled by the driver between steps. No handler, no global flag.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  const auto interrupted = [&stop_signals] {
    const timespec zero{0, 0};
    return sigtimedwait(&stop_signals, nullptr, &zero) > 0;
  };

  sim::driver_outcome outcome;
  try {
    outcome = sim::run_simulation(sc, opt, std::cout, interrupted);
  } catch (const zmq::error_t& e) {
    std::cerr << "rmbus-sim: cannot use the bus endpoints (--bus-pub " << opt.bus_pub << ", --bus-sub "
              << opt.bus_sub << "): " << e.what() << "\n";
    return 2;
  }
  if (!outcome.ready) {
    std::cerr << "rmbus-sim: no rm.state from the RM within " << ready_timeout_s
              << " s: published heartbeats and work maps to " << opt.bus_pub << " and listened on "
              << opt.bus_sub
              << "; is rmbus running with its forwarder on those endpoints (rmbus --bus-pub/--bus-sub)?\n";
    return 3;
  }
  const std::string report = sim::render_report(outcome.figures);
  std::cout << "\n" << report << std::flush;
  if (opt.deltas)
    std::cout << "work maps published: " << outcome.full_maps << " full (" << outcome.resyncs
              << " asked for by the RM), " << outcome.deltas << " deltas\n"
              << std::flush;
  bool ok = true;
  if (!report_file.empty()) ok = write_file(report_file, report) && ok;
  if (!csv_file.empty()) ok = write_file(csv_file, outcome.csv) && ok;
  if (!plot_file.empty()) ok = write_file(plot_file, outcome.svg) && ok;
  return ok ? 0 : 1;
}
