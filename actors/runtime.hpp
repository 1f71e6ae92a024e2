#pragma once
// One rmbus process: the bus (embedded forwarder or a connection to one), the router, and the actors of the
// roles it runs. tools/rmbus_main.cpp parses the command line into runtime_options, builds a runtime and
// waits for signals; everything about start-up order and its reverse lives here, written once.
//
// Start-up order: ZeroMQ context, metrics endpoint and admin REP socket bound (not yet serving; first, so a
// busy port fails before any actor runs: actors that hold one another through the router could not be taken
// down by a failing constructor), actor system, forwarder (if embedded), router + bus bridge, metrics actor, control actor
// (which spawns the role actors), admin REP thread, metrics endpoint serving. Shutdown is the reverse:
// metrics endpoint stopped (its thread joined), admin thread joined, role actors, metrics actor and control
// told to quit (each publishes whole rounds in single handlers, so no half-published round), bridge stopped
// (subscriber joined, publisher closed with a bounded linger), actor system destroyed, forwarder stopped,
// context destroyed.
//
// The embedded forwarder sheds repeated heartbeats of one node (runtime_options::heartbeat_min_gap_ms), so that
// one flooding publisher cannot crowd every other node's heartbeats out of the forwarder's queue toward the RM.
//
// No CAF, ZeroMQ or cpp-httplib in this header (pimpl): tools and tests include it cheaply.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/fault_injection.hpp"
#include "config/rm_config.hpp"

namespace rmbus::actors {

// Which actors run in this process (`--roles`).
struct roles {
  bool intake = false;
  bool diff = false;
  bool eviction = false;
  bool publisher = false;
  bool admin = false;
  bool all_pools = false;             // `scheduler`: a scheduler for every top-level pool
  std::vector<std::string> pools;     // `scheduler:POOL`, each
  bool everything() const;            // every role and every pool: nothing travels the bus internally
  bool head() const;                  // intake, diff, eviction, publisher and admin: an HA candidate
};

// Parses "all" or a comma-separated list of intake, diff, scheduler, scheduler:POOL, eviction, publisher,
// admin. Throws std::invalid_argument naming the bad entry (an unknown role, or a pool that is not a
// top-level pool of `cfg`), or, with [ha] enabled, a list that splits the head roles (HA elects one head).
roles parse_roles(std::string_view list, const config::rm_config& cfg);

struct runtime_options {
  config::rm_config cfg;
  // Loads the configuration again from its source (file or embedded default); throws on error.
  std::function<config::rm_config()> reload;
  roles run;
  bool embedded_forwarder = true;  // false: connect to an existing forwarder (--no-forwarder)
  // The embedded forwarder sheds a node's heartbeats beyond two back to back and then one per this many ms
  // (docs/bus.md "Shedding repeats"). Unset: heartbeat_interval_ms / 8, following a
  // reconfiguration; 0: no shedding (--heartbeat-min-gap-ms).
  std::optional<std::int64_t> heartbeat_min_gap_ms;
  int threads = 2;                 // CAF scheduler threads
  std::optional<injected_fault> fault;  // --inject-fault: a failure on purpose, for tests
  // Runs on the control actor's thread with each configuration a reconfiguration takes up, after the
  // runtime's own parts have followed it: the process's logging (level, rotation) belongs to its owner.
  std::function<void(const config::rm_config&)> on_reconfigure;
};

class runtime {
 public:
  // Starts everything; throws (zmq::error_t, std::exception) when an endpoint cannot be bound. The metrics
  // endpoint is `options.cfg.runtime.metrics` (HOST:PORT, or "off" for none).
  explicit runtime(runtime_options options);
  ~runtime();  // stop()
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  // SIGHUP: reload, validate, and have every process of the RM reconfigure (as the admin command does).
  void reconfigure();
  // Graceful stop, in the reverse order of start-up. Idempotent.
  void stop();
  const std::string& instance() const;
  // The port the metrics endpoint serves on (the real one when configured with port 0); 0 when off.
  int metrics_port() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace rmbus::actors
