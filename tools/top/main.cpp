// rmbus-top: the live monitor of a running rmbus. It subscribes to what the RM publishes for monitors
// (rm.state, rm.nodes, rm.cycle, rm.events; never rm.internal.*) at the bus forwarder's subscriber side, so
// it works against an RM on another host; folds it into a monitor_model; and draws render()'s lines full
// screen with ncurses, or prints them once (--once) for scripts.
//
//   rmbus-top [--bus-sub tcp://127.0.0.1:5561[,EP...] | --config FILE | --ducc FILE] [--once]
//             [--timeout-ms 10000] [--width 120] [--refresh-ms 1000] [--log-level warn] [--key FILE --server-key FILE]
//             [--schedule-changes]
//
// --schedule-changes reads the schedule from rm.schedule.changes (docs/protocol.md 4.3.1; the RM configured with
// [bus] schedule_changes_full_every) instead of rm.state: the picture is whole from the first full message on.
//
// The endpoint: --bus-sub, else the one the RM's own configuration binds (--config / --ducc, with its CURVE
// server key), else $RMBUS_BUS_SUB, else tcp://127.0.0.1:5561.
//
// --key (this monitor's key pair) and --server-key (the forwarder's public key) join a CURVE bus
// (docs/bus.md, "Security"); a monitor key may subscribe only.
//
// Two threads: the bus subscriber's (decodes, then folds under the model's mutex) and the main one (renders
// under the same mutex, and owns the terminal). Exit status: 0; 1 on an unexpected error; 2 for a bad
// argument, an unusable endpoint, or the full screen without a terminal; 3 when --once got no rm.state and
// rm.nodes within --timeout-ms. An RM that runs no rounds sends no rm.state: its rm.events not_scheduling and
// rm.nodes are then the picture (with why it does not schedule), and exit 0. Logs go to stderr, never into
// the picture on stdout.

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "bus/curve.hpp"
#include "bus/endpoint_list.hpp"
#include "bus/subscriber.hpp"
#include "config/config_error.hpp"
#include "tools/common/rm_discovery.hpp"
#include "tools/common/tool_logging.hpp"
#include "tools/common/version_flag.hpp"
#include "tools/top/monitor_model.hpp"
#include "tools/top/monitored_message.hpp"
#include "tools/top/render.hpp"
#include "tools/top/screen.hpp"

namespace {

using namespace rmbus;
using steady = std::chrono::steady_clock;

// After the first rm.state and rm.nodes, how long --once waits for the rest of that round (its rm.cycle per
// pool, the rm.nodes that follows it). The RM publishes a round in one go, so this is normally not waited.
constexpr std::chrono::milliseconds round_grace{1000};

top::millis now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now().time_since_epoch()).count();
}

top::bus_health health_of(const bus::subscriber_stats& s) {
  return {s.received, s.gaps, s.missing, s.restarts, s.bad_messages, s.by_topic};
}

// The model, shared by the subscriber's thread (writer) and the main thread (reader). Bodies are decoded
// before the lock is taken, so a big rm.state never holds up the screen for its decoding.
class shared_model {
 public:
  void fold(top::monitored_message message, const messages::envelope& env) {
    const auto t = now_ms();
    {
      std::lock_guard lock{mutex_};
      top::fold(model_, std::move(message), t, env.src, env.ts_ms, env.epoch);
    }
    changed_.notify_all();
  }

  void rejected_by_bus(const std::string& what) {
    const auto t = now_ms();
    std::lock_guard lock{mutex_};
    model_.on_bad_message(what, t, true);
  }

  // True when `done(model)` held before `deadline`.
  template <class Done>
  bool wait_until(steady::time_point deadline, Done done) {
    std::unique_lock lock{mutex_};
    return changed_.wait_until(lock, deadline, [&] { return done(model_); });
  }

  top::screen draw(top::render_options options, const bus::subscriber& sub) {
    const auto health = health_of(sub.stats());
    std::lock_guard lock{mutex_};
    model_.set_bus(health);
    options.now_ms = now_ms();
    return top::render(model_, options);
  }

  std::string what_arrived(const bus::subscriber& sub) {
    const auto received = sub.stats().received;
    std::lock_guard lock{mutex_};
    if (received == 0) return "nothing arrived";
    std::string s = std::to_string(received) + " messages arrived but no ";
    if (!model_.state())
      s += model_.nodes() ? "rm.state" : "rm.state or rm.nodes";
    else
      s += "rm.nodes";
    return s;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  top::monitor_model model_;
};

int run_once(shared_model& shared, const bus::subscriber& sub, const top::render_options& options,
             std::chrono::milliseconds timeout) {
  if (!shared.wait_until(steady::now() + timeout, [](const top::monitor_model& m) { return m.complete(); })) {
    std::cerr << "rmbus-top: no rm.state and rm.nodes from " << options.endpoint << " within "
              << timeout.count() << " ms (" << shared.what_arrived(sub)
              << "): is rmbus running, and is that its bus forwarder's subscriber side (rmbus --bus-sub)?\n";
    return 3;
  }
  // Show one round whole if it comes soon; otherwise what there is (each snapshot is complete in itself).
  shared.wait_until(steady::now() + round_grace,
                    [](const top::monitor_model& m) { return m.round_complete(); });
  for (const auto& line : shared.draw(options, sub).lines) std::cout << line << '\n';
  std::cout.flush();
  return 0;
}

int run(const std::string& endpoint, bool once, int timeout_ms, std::size_t width, int refresh_ms,
        const std::optional<bus::curve_client>& curve, bool schedule_changes) {
  // Blocked before any thread exists (ZeroMQ's included), so only the screen loop ever takes them and the
  // terminal is always restored. --once keeps the default actions: it has no terminal state to restore.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);
  if (!once) {
    if (!::isatty(STDOUT_FILENO) || !::isatty(STDIN_FILENO)) {
      std::cerr
          << "rmbus-top: the full screen needs a terminal on stdin and stdout; use --once for scripts\n";
      return 2;
    }
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  }

  zmq::context_t ctx;
  shared_model shared;
  bus::subscriber_options so;
  so.curve = curve;
  so.name = "rmbus-top";
  so.endpoint = endpoint;
  so.topics = top::monitored_topics(schedule_changes);
  bus::subscriber_handlers handlers;
  handlers.on_message = [&shared](bus::bus_message&& m) {
    shared.fold(top::decode_monitored(m.topic, m.body), m.env);
  };
  handlers.on_bad_message = [&shared](const bus::bad_message& b) {
    shared.rejected_by_bus(b.error.message());
  };
  std::optional<bus::subscriber> sub;
  try {
    sub.emplace(ctx, so, handlers);
  } catch (const zmq::error_t& e) {
    std::cerr << "rmbus-top: cannot connect to " << endpoint << ": " << e.what() << '\n';
    return 2;
  }
  sub->start();

  top::render_options options;
  options.width = width;
  options.endpoint = endpoint;
  const int status = once
                         ? run_once(shared, *sub, options, std::chrono::milliseconds(timeout_ms))
                         : top::run_screen([&](const top::render_options& o) { return shared.draw(o, *sub); },
                                           options, std::chrono::milliseconds(refresh_ms), stop_signals);
  sub->stop();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  std::string endpoint;
  std::string native, ducc;
  bool once = false;
  int timeout_ms = 10000;
  int refresh_ms = 1000;
  std::size_t width = 120;
  std::string log_level = "warn";
  std::string key_file;
  std::string server_key_file;
  CLI::App app{"rmbus-top: the live monitor of a running rmbus"};
  rmbus::tools::add_version_flag(app, "rmbus-top");
  auto* sub_opt = app.add_option("--bus-sub", endpoint,
                                 "the bus forwarder's subscriber side (rmbus's --bus-sub; several forwarders: "
                                 "EP,EP,...; default: from --config/--ducc, else $RMBUS_BUS_SUB, else "
                                 "tcp://127.0.0.1:5561)");
  auto* native_opt =
      app.add_option("--config", native, "find the bus as the RM's native configuration binds it")
          ->check(CLI::ExistingFile)
          ->excludes(sub_opt);
  app.add_option("--ducc", ducc, "find the bus as the RM's ducc.properties binds it")
      ->check(CLI::ExistingFile)
      ->excludes(sub_opt)
      ->excludes(native_opt);
  app.add_option("--key", key_file, "CURVE: this monitor's key pair file (rmbus-keygen)");
  app.add_option("--server-key", server_key_file, "CURVE: the bus forwarder's public key file");
  app.add_flag("--once", once, "print the picture once, as plain text, and exit");
  bool schedule_changes = false;
  app.add_flag("--schedule-changes", schedule_changes,
               "read the schedule from rm.schedule.changes instead of rm.state (the RM publishes it with [bus] "
               "schedule_changes_full_every)");
  app.add_option("--timeout-ms", timeout_ms, "--once: how long to wait for rm.state and rm.nodes")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600000));
  app.add_option("--width", width, "--once: columns (the full screen uses the terminal's)")
      ->capture_default_str()
      ->check(CLI::Range(40, 1000));
  app.add_option("--refresh-ms", refresh_ms, "full screen: redraw period")
      ->capture_default_str()
      ->check(CLI::Range(100, 60000));
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical, off")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and exits 0; every bad argument exits 2, as the other rmbus tools do.
    return app.exit(e) == 0 ? 0 : 2;
  }
  const auto level = tools::start_tool_logging("rmbus-top", log_level, std::cerr);
  if (!level) return 2;
  // Log lines written to the terminal would tear the full screen: there, logs need stderr redirected.
  spdlog::set_level(!once && ::isatty(STDERR_FILENO) ? spdlog::level::off : *level);
  // Where the bus is: --bus-sub, else the RM's own configuration, else the environment, else the default.
  std::string source = "--bus-sub";
  if (endpoint.empty() && (!native.empty() || !ducc.empty())) {
    try {
      const auto found = tools::endpoints_of_configuration(native, ducc);
      endpoint = found.bus_sub;
      source = found.source;
      if (found.curve && server_key_file.empty()) server_key_file = found.bus_server_key;
      if (found.curve && key_file.empty()) {
        std::cerr << "rmbus-top: " << found.source
                  << " has CURVE on: give this monitor's key pair with --key FILE\n";
        return 2;
      }
    } catch (const config::config_error& e) {
      std::cerr << "rmbus-top: cannot read the RM's configuration:";
      for (const auto& i : e.issues())
        std::cerr << "\n  " << i.file << (i.line > 0 ? ":" + std::to_string(i.line) : "") << ": "
                  << i.message;
      std::cerr << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "rmbus-top: cannot read the RM's configuration: " << e.what() << "\n";
      return 2;
    }
  }
  if (endpoint.empty()) {
    if (auto env = tools::environment("RMBUS_BUS_SUB")) {
      endpoint = *env;
      source = "$RMBUS_BUS_SUB";
    } else {
      endpoint = std::string{bus::default_sub_endpoint};
    }
  }
  if (auto problem = tools::endpoint_problem(source, endpoint)) {
    std::cerr << "rmbus-top: " << *problem << "\n";
    return 2;
  }
  std::optional<bus::curve_client> curve;
  try {
    curve = bus::load_curve_client(key_file, server_key_file);
  } catch (const bus::curve_error& e) {
    std::cerr << "rmbus-top: " << e.what() << '\n';
    return 2;
  }
  try {
    return run(endpoint, once, timeout_ms, width, refresh_ms, curve, schedule_changes);
  } catch (const std::exception& e) {
    std::cerr << "rmbus-top: " << e.what() << '\n';
    return 1;
  }
}
