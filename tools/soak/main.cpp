// rmbus-soak: SIGKILLs rmbus under load at seeded random moments, restarts it, and checks after every restart
// that nothing was lost, nothing double-booked, no share id reused and the schedule came back (issue 11;
// docs/reliability.md). tools/soak.sh runs it with the defaults.
#include <iostream>

#include <CLI/CLI.hpp>

#include "tools/common/version_flag.hpp"
#include "tools/soak/soak_driver.hpp"

int main(int argc, char** argv) {
  rmbus::soak::soak_options opt;
  opt.rmbus_path = RMBUS_DEFAULT_BIN;
  opt.proxy_path = RMBUS_DEFAULT_PROXY_BIN;
  opt.work_dir = "rmbus-soak";
  long time_bound_s = 1500;
  CLI::App app{"rmbus-soak: kill rmbus under load, restart it, and check the rules of recovery"};
  rmbus::tools::add_version_flag(app, "rmbus-soak");
  app.add_option("--rmbus", opt.rmbus_path, "the rmbus executable")->capture_default_str();
  app.add_option("--work-dir", opt.work_dir, "configuration and rmbus.log go here")->capture_default_str();
  app.add_option("--kills", opt.kills, "SIGKILLs (each followed by a restart)")->capture_default_str()->check(CLI::Range(1, 100000));
  app.add_option("--seed", opt.seed, "decides the work and the moments of the kills")->capture_default_str();
  app.add_option("--seconds", time_bound_s, "bound on the whole run")->capture_default_str()->check(CLI::Range(10, 86400));
  app.add_option("--recover-rounds", opt.recover_rounds, "rounds after a restart for the schedule to come back")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--heartbeat-ms", opt.heartbeat_ms, "the RM's heartbeat interval")->capture_default_str()->check(CLI::Range(50, 30000));
  app.add_option("--nodes", opt.nodes, "nodes of 8 GB")->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--kill-min-ms", opt.kill_min_ms, "earliest kill after the previous recovery")->capture_default_str()->check(CLI::Range(0, 600000));
  app.add_option("--kill-max-ms", opt.kill_max_ms, "latest kill after the previous recovery")->capture_default_str()->check(CLI::Range(0, 600000));
  app.add_flag("--trace", opt.trace, "print every job's processes in each round after a restart");
  app.add_flag("--ha", opt.ha,
               "HA soak: two candidates on rmbus-proxy; each kill SIGKILLs the active, the standby takes over, the "
               "killed one comes back as a standby");
  app.add_option("--rmbus-proxy", opt.proxy_path, "the rmbus-proxy executable (with --ha)")->capture_default_str();
  app.add_flag("--partition", opt.partition,
               "with --ha: three candidates; before each kill of the active the standbys are cut off from each "
               "other at a seeded moment (both still reach the orchestrator), and healed after the recovery");
  app.add_flag("--no-node-memory", opt.no_node_memory,
               "the orchestrator omits node_memory_mb (as DUCC's does): a restarted RM recovers work on nodes it "
               "has not heard yet without their sizes");
  bool periodic_only = false;
  app.add_flag("--no-prompt-map", periodic_only,
               "with --ha: the orchestrator maps only at its period, not at once when it accepts a new epoch");
  CLI11_PARSE(app, argc, argv);
  opt.map_on_new_epoch = !periodic_only;
  if (opt.partition && !opt.ha) {
    std::cerr << "--partition needs --ha\n";
    return 2;
  }
  if (opt.kill_max_ms < opt.kill_min_ms) {
    std::cerr << "--kill-max-ms (" << opt.kill_max_ms << ") is below --kill-min-ms (" << opt.kill_min_ms << ")\n";
    return 2;
  }
  opt.time_bound = std::chrono::seconds(time_bound_s);
  const auto summary = rmbus::soak::run_soak(opt, std::cout);
  return rmbus::soak::exit_status(summary);
}
