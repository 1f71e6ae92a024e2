// rmbus: the resource manager. Runs every actor and the embedded bus forwarder by default, or the roles
// given with --roles (the rest of the RM then runs in other processes on the same bus).
//
//   rmbus [--config FILE | --ducc FILE] [--bus-pub EP[,EP...]] [--bus-sub EP[,EP...]] [--no-forwarder] [--admin EP]
//         [--metrics HOST:PORT|off] [--roles LIST] [--log-level LEVEL] [--check-config]
//         [--threads N] [--heartbeat-min-gap-ms MS] [--key FILE] [--server-key FILE]
//         [--inject-fault throw:POOL:CYCLES|hang:POOL:CYCLES  (tests only)]
//
// The command line is a contract (test harnesses and the README rely on it): see docs/architecture.md.
// SIGTERM / SIGINT stop it gracefully (exit 0); SIGHUP reloads the configuration as the admin command
// `reconfigure` does (with CURVE it also re-reads the allowed keys). A bad argument or configuration exits 2 with the reason; a bus, admin or metrics endpoint
// that cannot be bound exits 1.

#include <malloc.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "actors/process_stop.hpp"
#include "actors/runtime.hpp"
#include "config/config_error.hpp"
#include "config/embedded_default.hpp"
#include "config/loader.hpp"
#include "config/log_level.hpp"
#include "config/render.hpp"
#include "config/startup_summary.hpp"
#include "logging/rotating_sink.hpp"
#include "tools/common/version_flag.hpp"

namespace {

struct cli_overrides {
  std::string bus_pub, bus_sub, admin, metrics, log_level;
  std::string key, server_key;  // [security] key / server_key for this process (several RM processes, one file)
};

rmbus::config::rm_config load(const std::string& native, const std::string& ducc, const cli_overrides& o) {
  auto cfg = !native.empty()  ? rmbus::config::load_native(native)
             : !ducc.empty() ? rmbus::config::load_ducc(ducc)
                             : rmbus::config::embedded_default();
  if (!o.bus_pub.empty()) cfg.runtime.bus_pub = o.bus_pub;
  if (!o.bus_sub.empty()) cfg.runtime.bus_sub = o.bus_sub;
  if (!o.admin.empty()) cfg.runtime.admin = o.admin;
  if (!o.metrics.empty()) cfg.runtime.metrics = o.metrics;
  if (!o.log_level.empty()) cfg.runtime.log_level = o.log_level;
  if (!o.key.empty()) cfg.runtime.security.key = o.key;
  if (!o.server_key.empty()) cfg.runtime.security.server_key = o.server_key;
  auto problems = rmbus::config::runtime_problems(cfg.runtime);
  if ((!o.key.empty() || !o.server_key.empty()) && !cfg.runtime.security.curve)
    problems.emplace_back("--key and --server-key need CURVE on ([security] curve = true in the configuration)");
  if (!problems.empty()) {
    std::vector<rmbus::config::config_issue> issues;
    for (auto& p : problems) issues.push_back({"command line", 0, std::move(p)});
    throw rmbus::config::config_error(std::move(issues));
  }
  return cfg;
}

rmbus::logging::rotation_settings rotation_of(const rmbus::config::logging_settings& s) {
  rmbus::logging::rotation_settings r;
  r.file = s.file;
  r.max_bytes = s.max_bytes;
  r.max_files = s.max_files;
  r.compress = s.compress;
  return r;
}

// stderr, or the configured file rotated by size and count (logging/rotating_sink.hpp), with errors also on
// stderr so that a failed start is seen where rmbus was started. Throws spdlog::spdlog_ex naming the file
// when it cannot be opened. `file_sink` is set to the file's sink, for reconfiguration.
std::shared_ptr<spdlog::logger> make_logger(const rmbus::config::logging_settings& s,
                                            std::shared_ptr<rmbus::logging::rotating_sink>& file_sink) {
  if (s.file.empty()) return spdlog::stderr_color_mt("rmbus");
  file_sink = std::make_shared<rmbus::logging::rotating_sink>(rotation_of(s));
  auto errors = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  errors->set_level(spdlog::level::err);
  const spdlog::sinks_init_list sinks{file_sink, errors};
  return std::make_shared<spdlog::logger>("rmbus", sinks);
}

std::string describe(const rmbus::config::config_error& e) {
  std::string out;
  for (const auto& i : e.issues()) {
    out += i.file;
    if (i.line > 0) out += ":" + std::to_string(i.line);
    out += ": " + i.message + "\n";
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  // Every round decodes and frees work maps of megabytes. glibc would hand such blocks back to the kernel
  // and fault them in again on the next map (a fresh page costs microseconds in a virtual machine; a work map
  // of 50,000 nodes is thousands of pages). It does so three ways, each turned off here: a block above the
  // mmap threshold is unmapped when freed; the top of an arena is trimmed; and a thread's arena deletes a
  // heap (64 MB) that a free leaves empty, unless the heap before it is short of `top_pad` bytes. The last
  // one unmapped the bus subscriber's copy of every work map, whose heap held nothing else: with the default
  // pad each map faulted its pages in anew (docs/architecture.md, "Threads and memory"). Keeping them
  // costs a bounded amount of memory: freed blocks are reused by the next map, and a pad that is never
  // touched is address space, not resident memory.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
  std::string native, ducc, roles_list = "all";
  cli_overrides o;
  bool no_forwarder = false, check_config = false;
  int threads = 2;

  CLI::App app{"rmbus: the resource manager (DUCC's RM as a message-bus actor system)"};
  rmbus::tools::add_version_flag(app, "rmbus");

  auto* native_opt = app.add_option("--config", native, "native (TOML) configuration file")->check(CLI::ExistingFile);
  app.add_option("--ducc", ducc, "DUCC ducc.properties (class file and nodefiles relative to its folder)")
      ->check(CLI::ExistingFile)
      ->excludes(native_opt);
  app.add_option("--bus-pub", o.bus_pub,
                 "forwarder side publishers connect to (default tcp://127.0.0.1:5560); several forwarders: "
                 "EP,EP,... (the first is the embedded forwarder's own)");
  app.add_option("--bus-sub", o.bus_sub,
                 "forwarder side subscribers connect to (default tcp://127.0.0.1:5561); several forwarders: "
                 "EP,EP,... (the first is the embedded forwarder's own)");
  app.add_flag("--no-forwarder", no_forwarder, "connect to an existing forwarder (e.g. rmbus-proxy) instead of binding one");
  app.add_option("--admin", o.admin, "admin REQ/REP endpoint bound here (default tcp://127.0.0.1:5562)");
  app.add_option("--metrics", o.metrics,
                 "HOST:PORT where Prometheus metrics are served over HTTP (default 127.0.0.1:9464; port 0: a free "
                 "port), or off");
  app.add_option("--roles", roles_list,
                 "comma-separated: all, intake, diff, scheduler, scheduler:POOL, eviction, publisher, admin")
      ->capture_default_str();
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error, critical, off");
  app.add_option("--key", o.key, "CURVE: this process's key pair file, instead of [security] key")
      ->check(CLI::ExistingFile);
  app.add_option("--server-key", o.server_key,
                 "CURVE: the public key file of the forwarder this process connects to (--no-forwarder), instead "
                 "of [security] server_key")
      ->check(CLI::ExistingFile);
  app.add_flag("--check-config", check_config, "validate, print the resolved configuration, exit");
  app.add_option("--threads", threads,
                 "actor scheduler threads (default 2; 1 runs the top-level pools' rounds one after another)")
      ->check(CLI::Range(1, 64));
  std::optional<std::int64_t> heartbeat_min_gap_ms;
  app.add_option("--heartbeat-min-gap-ms", heartbeat_min_gap_ms,
                 "the embedded forwarder drops a node's heartbeats beyond two back to back and then one per this "
                 "many ms (default: heartbeat_interval_ms / 8; 0: forward every heartbeat)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{24} * 3600 * 1000));
  std::string fault_spec;
  app.add_option("--inject-fault", fault_spec,
                 "tests only: throw:POOL:CYCLES or hang:POOL:CYCLES (CYCLES: 5, 3-8 or 3,5,9-11) makes that "
                 "pool's scheduler fail in those rounds")
      ->group("Testing");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  std::optional<rmbus::actors::injected_fault> fault;
  try {
    if (!fault_spec.empty()) fault = rmbus::actors::parse_injected_fault(fault_spec);
  } catch (const std::exception& e) {
    std::cerr << "rmbus: " << e.what() << "\n";
    return 2;
  }
  // A level given on the command line holds while the configuration is read too, so that the loader's own
  // lines (e.g. the ducc.rm.* keys it ignores, at debug level) are seen; the process's logger replaces this one.
  if (const auto level = rmbus::config::parse_log_level(o.log_level)) {
    spdlog::set_default_logger(spdlog::stderr_color_mt("rmbus.config"));
    spdlog::set_level(*level);
  }
  rmbus::config::rm_config cfg;
  try {
    cfg = load(native, ducc, o);
  } catch (const rmbus::config::config_error& e) {
    std::cerr << "rmbus: configuration error\n" << describe(e);
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "rmbus: configuration error: " << e.what() << "\n";
    return 2;
  }
  if (check_config) {
    std::cout << rmbus::config::render(cfg);
    return 0;
  }
  rmbus::actors::runtime_options opt;
  opt.threads = threads;
  opt.fault = fault;
  try {
    opt.run = rmbus::actors::parse_roles(roles_list, cfg);
  } catch (const std::exception& e) {
    std::cerr << "rmbus: " << e.what() << "\n";
    return 2;
  }
  std::shared_ptr<rmbus::logging::rotating_sink> file_sink;
  try {
    spdlog::set_default_logger(make_logger(cfg.runtime.logging, file_sink));
  } catch (const spdlog::spdlog_ex& e) {
    std::cerr << "rmbus: configuration error: log file: " << e.what() << "\n";
    return 2;
  }
  spdlog::set_level(rmbus::config::parse_log_level(cfg.runtime.log_level).value_or(spdlog::level::info));
  spdlog::flush_on(spdlog::level::warn);

  // Block the signals before any thread exists, so every thread inherits the mask and only sigwaitinfo
  // below ever takes them: no handler, no global flag.
  sigset_t sigs;
  sigemptyset(&sigs);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sigs, s);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  // A log file is flushed every second (and at once from warn up); started after the mask, so its thread
  // never takes a signal either.
  if (!cfg.runtime.logging.file.empty()) spdlog::flush_every(std::chrono::seconds(1));

  opt.cfg = cfg;
  opt.reload = [native, ducc, o] { return load(native, ducc, o); };
  // A reconfiguration changes the log level and the rotation at once; the log's destination stays until a
  // restart.
  opt.on_reconfigure = [started = cfg.runtime.logging, file_sink](const rmbus::config::rm_config& now) {
    spdlog::set_level(rmbus::config::parse_log_level(now.runtime.log_level).value_or(spdlog::level::info));
    if (now.runtime.logging.file != started.file) {
      spdlog::warn("[log] file '{}' takes effect only when rmbus restarts; logging stays on '{}'", now.runtime.logging.file,
                   started.file.empty() ? "stderr" : started.file);
    } else if (file_sink) {
      try {
        file_sink->reconfigure(rotation_of(now.runtime.logging));
      } catch (const std::invalid_argument& e) {  // the loader's bounds make this unreachable; kept loud anyway
        spdlog::error("[log] rotation not changed: {}", e.what());
      }
    }
  };
  opt.embedded_forwarder = !no_forwarder;
  opt.heartbeat_min_gap_ms = heartbeat_min_gap_ms;
  std::optional<rmbus::actors::runtime> rm;
  try {
    rm.emplace(std::move(opt));
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    return 1;
  }
  // What it will do and where to reach it: in the log, and on the console too when the log is a file.
  rmbus::config::startup_facts facts;
  facts.source = !native.empty() ? native + " (native)"
                 : !ducc.empty() ? ducc + " (DUCC)"
                                 : std::string{"the embedded default (DUCC's shipped classes and defaults)"};
  facts.roles = roles_list;
  facts.embedded_forwarder = !no_forwarder;
  facts.metrics = rm->metrics_port() == 0
                      ? std::string{"off"}
                      : "http://" + cfg.runtime.metrics.substr(0, cfg.runtime.metrics.rfind(':')) + ":" +
                            std::to_string(rm->metrics_port()) + "/metrics";
  for (const auto& line : rmbus::config::startup_summary(cfg, facts)) {
    spdlog::info("{}", line);
    if (file_sink) std::cout << "rmbus: " << line << "\n";
  }
  std::cout.flush();
  int status = 0;
  for (;;) {
    siginfo_t info{};
    const int s = sigwaitinfo(&sigs, &info);
    if (s == SIGHUP) {
      spdlog::info("SIGHUP: reconfiguring");
      rm->reconfigure();
      continue;
    }
    if (s == SIGINT || s == SIGTERM) {
      status = rmbus::actors::stop_status(info);  // non-zero: an actor found the process must not run
      break;
    }
  }
  if (status == 0) spdlog::info("stopping");
  else spdlog::info("stopping with exit status {}", status);
  rm->stop();
  rm.reset();
  return status;
}
