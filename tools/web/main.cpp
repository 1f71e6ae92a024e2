// rmbus-web: the live web monitor of a running rmbus. Like rmbus-top it only subscribes to what the RM
// publishes for monitors (rm.state, rm.nodes, rm.cycle, rm.events, and rm.ha when the RM sends it) at the
// bus forwarder's subscriber side, so it works against an RM on another host; it folds them into a
// view_model and serves one page (built into the binary) that the model's snapshots update by server-sent
// events. The admin endpoint is used only for `explain`, when --admin (or the configuration) names it; with
// HA, explain follows the active RM that rm.ha names (explain_target.hpp).
//
//   rmbus-web [--bus-sub EP] [--admin EP] [--listen 127.0.0.1:8080] [--config FILE | --ducc FILE]
//             [--key FILE --server-key FILE [--admin-server-key FILE]] [--push-ms 250] [--log-level info]
//
// Threads: the bus subscriber's (decodes, then folds under the model's mutex); the builder (turns the model
// into a snapshot when it moved, at most every --push-ms, and a health tick each second otherwise); the HTTP
// server's pool. Exit status: 0 on SIGINT/SIGTERM; 1 on an unexpected error; 2 for a bad argument, a
// configuration that does not load, an endpoint ZeroMQ refuses or an address that cannot be bound.
// SIGHUP (what `systemctl reload rmbus-web` sends) is logged and changes nothing: every setting comes from the
// command line or is read once at start, and the log goes to stderr (the journal), so there is nothing to
// reopen; a restart applies new settings.

#include <malloc.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "bus/curve.hpp"
#include "bus/subscriber.hpp"
#include "config/config_error.hpp"
#include "tools/common/tool_logging.hpp"
#include "tools/common/version_flag.hpp"
#include "tools/web/admin_client.hpp"
#include "tools/web/admin_json.hpp"
#include "tools/web/endpoints.hpp"
#include "tools/web/explain_target.hpp"
#include "tools/web/snapshot_hub.hpp"
#include "tools/web/view_model.hpp"
#include "tools/web/web_server.hpp"

namespace {

using namespace rmbus;
using steady = std::chrono::steady_clock;

web::millis now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now().time_since_epoch()).count();
}

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The model, written by the subscriber's thread and read by the builder's.
class shared_model {
 public:
  explicit shared_model(std::string admin) : explain_(std::move(admin)) {}

  void fold(web::web_message message, const messages::envelope& env) {
    const auto t = now_ms();
    {
      std::lock_guard lock{mutex_};
      if (const auto* b = std::get_if<web::ha_beacon>(&message); b != nullptr && explain_.heard(*b))
        spdlog::info("explain now asks {}: the admin endpoint of the active {} (epoch {}), named by rm.ha",
                     explain_.endpoint(), explain_.active_instance(), explain_.active_epoch().value_or(0));
      model_.fold(std::move(message), t, env.src, env.ts_ms);
    }
    changed_.notify_all();
  }

  // The admin endpoint explain goes to: --admin, or the active the newest rm.ha epoch names.
  std::string explain_endpoint() {
    std::lock_guard lock{mutex_};
    return explain_.endpoint();
  }

  void rejected(const std::string& what) {
    const auto t = now_ms();
    {
      std::lock_guard lock{mutex_};
      model_.on_rejected(what, t);
    }
    changed_.notify_all();
  }

  // Waits until the model moved past `version` or `timeout` passed; returns the version now.
  std::uint64_t wait_change(std::uint64_t version, std::chrono::milliseconds timeout) {
    std::unique_lock lock{mutex_};
    changed_.wait_for(lock, timeout, [&] { return stopping_ || model_.version() != version; });
    return model_.version();
  }

  template <class F>
  auto with(const bus::subscriber& sub, F f) {
    const auto s = sub.stats();
    std::lock_guard lock{mutex_};
    model_.set_bus({s.received, s.gaps, s.missing, s.restarts, s.bad_messages, s.by_topic});
    return f(model_);
  }

  void stop() {
    {
      std::lock_guard lock{mutex_};
      stopping_ = true;
    }
    changed_.notify_all();
  }
  bool stopping() {
    std::lock_guard lock{mutex_};
    return stopping_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  web::view_model model_;
  web::explain_target explain_;
  bool stopping_ = false;
};

// Builds snapshots when the model moved (at most every `push`), and a health tick each second otherwise.
void build_loop(shared_model& shared, const bus::subscriber& sub, web::snapshot_hub& hub, web::snapshot_context ctx,
                std::chrono::milliseconds push) {
  constexpr std::chrono::milliseconds gather{40};
  std::uint64_t built = ~std::uint64_t{0};
  auto last_push = steady::now() - push;
  while (!shared.stopping()) {
    const auto version = shared.wait_change(built, std::chrono::milliseconds(1000));
    if (shared.stopping()) break;
    if (version != built) {
      // Let a round's messages (state, cycles, nodes, events: the RM sends them back to back) gather into one
      // snapshot, instead of one for rm.state and another for the rm.nodes right behind it.
      const auto next = std::max(last_push + push, steady::now() + gather);
      std::this_thread::sleep_until(next);
      ctx.now_ms = now_ms();
      ctx.wall_ms = wall_ms();
      ++ctx.seq;
      std::uint64_t v = 0;
      const auto t0 = steady::now();
      auto json = shared.with(sub, [&](const web::view_model& m) {
        v = m.version();
        return m.snapshot_json(ctx);
      });
      // Shown with the next snapshot (Health, and the benchmark): what building one costs.
      ctx.last_build_ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t0).count();
      ctx.last_bytes = json.size();
      spdlog::debug("snapshot {}: {} bytes in {} ms", ctx.seq, json.size(), ctx.last_build_ms);
      built = v;
      last_push = steady::now();
      hub.publish_snapshot(std::make_shared<const std::string>(std::move(json)));
    } else {
      ctx.now_ms = now_ms();
      ctx.wall_ms = wall_ms();
      ++ctx.seq;
      auto json = shared.with(sub, [&](const web::view_model& m) { return m.health_json(ctx); });
      hub.publish_health(std::make_shared<const std::string>(std::move(json)));
    }
  }
}

struct settings {
  std::string bus_sub;
  std::string admin;
  web::listen_address listen;
  std::optional<bus::curve_client> bus_curve, admin_curve;
  std::chrono::milliseconds push{250};
  std::chrono::milliseconds admin_timeout{5000};
  bool schedule_changes = false;  // --schedule-changes: rm.schedule.changes instead of rm.state
};

int run(const settings& s) {
  // Blocked before any thread exists, so only the main thread takes them (sigwait) and stops in order; SIGHUP
  // too, which would otherwise end the process.
  sigset_t handled_signals;
  sigemptyset(&handled_signals);
  sigaddset(&handled_signals, SIGINT);
  sigaddset(&handled_signals, SIGTERM);
  sigaddset(&handled_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &handled_signals, nullptr);

  zmq::context_t ctx;
  shared_model shared{s.admin};
  bus::subscriber_options so;
  so.curve = s.bus_curve;
  so.name = "rmbus-web";
  so.endpoint = s.bus_sub;
  so.topics = web::web_topics(s.schedule_changes);
  // rm.state at 20,000 jobs is several MB: the same limits rmbus-load gives the RM for such a cluster.
  so.limits.max_body_bytes = 256u << 20;
  so.limits.max_array_len = 10'000'000;
  so.limits.max_map_len = 100'000;
  bus::subscriber_handlers handlers;
  const auto limits = so.limits;
  handlers.on_message = [&shared, limits](bus::bus_message&& m) {
    shared.fold(web::decode_web(m.topic, m.body, limits), m.env);
  };
  handlers.on_bad_message = [&shared](const bus::bad_message& b) { shared.rejected(b.error.message()); };
  std::optional<bus::subscriber> sub;
  try {
    sub.emplace(ctx, so, handlers);
  } catch (const zmq::error_t& e) {
    std::cerr << "rmbus-web: cannot connect to " << s.bus_sub << ": " << e.what() << '\n';
    return 2;
  }

  std::optional<web::admin_client> admin;
  if (!s.admin.empty()) admin.emplace(ctx, web::admin_client_options{s.admin, s.admin_curve, s.admin_timeout});
  auto explain = [&admin, &shared](const std::string& job) -> web::json_response {
    if (!admin) return {404, "{\"ok\":false,\"error\":\"explain needs the admin endpoint: start rmbus-web with --admin\"}"};
    messages::admin_request req;
    req.cmd = "explain";
    req.args["job"] = messages::value{job};
    const auto endpoint = shared.explain_endpoint();
    const auto outcome = admin->request(req, endpoint);
    if (outcome.reply)
      spdlog::info("explain {} at {}: {}", job, endpoint,
                   outcome.reply->ok ? "answered" : "error: " + outcome.reply->error);
    else
      spdlog::warn("explain {} at {}: {}", job, endpoint, outcome.error);
    return web::admin_response(outcome);
  };

  web::snapshot_hub hub;
  web::web_server_options wo;
  wo.listen = s.listen;
  std::optional<web::web_server> server;
  try {
    server.emplace(wo, hub, explain);
  } catch (const std::runtime_error& e) {
    std::cerr << "rmbus-web: " << e.what() << '\n';
    return 2;
  }
  sub->start();
  web::snapshot_context sc;
  sc.endpoint = s.bus_sub;
  sc.admin = admin.has_value();
  std::thread builder([&] { build_loop(shared, *sub, hub, sc, s.push); });
  server->start();
  const auto url = "http://" + (s.listen.host.find(':') != std::string::npos ? "[" + s.listen.host + "]" : s.listen.host) +
                   ":" + std::to_string(server->port()) + "/";
  // The first line on stdout says where the page is (scripts and tests read it).
  std::cout << "rmbus-web: serving " << url << " from " << s.bus_sub
            << (admin ? ", explain through " + s.admin : std::string{", no admin endpoint (explain off)"}) << std::endl;
  spdlog::info("serving {} from {}", url, s.bus_sub);

  int sig = 0;
  for (sigwait(&handled_signals, &sig); sig == SIGHUP; sigwait(&handled_signals, &sig))
    spdlog::info("reload (SIGHUP): nothing to reload, rmbus-web reads its settings once at start and logs to "
                 "stderr; restart it to change them. Still serving {}",
                 url);
  spdlog::info("stopping on signal {}", sig);
  server->stop();
  shared.stop();
  builder.join();
  sub->stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Every round brings a new rm.state and a new snapshot of several MB (at 10,000 nodes), each freed when the
  // next arrives. From glibc's heap their holes fragmented it: resident memory crept up by about 30 MB over
  // five page visits (docs/performance.md, "The web monitor"). Buffers of 1 MiB and more are mapped and
  // unmapped instead, so what is freed goes back to the system, for about 1% of a core more.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  std::string bus_sub, admin, listen = "127.0.0.1:8080", native, ducc, log_level = "info";
  std::string key_file, server_key_file, admin_server_key_file;
  int push_ms = 250, admin_timeout_ms = 5000;
  CLI::App app{"rmbus-web: the live web monitor of a running rmbus"};
  rmbus::tools::add_version_flag(app, "rmbus-web");
  app.add_option("--bus-sub", bus_sub, "the bus forwarder's subscriber side (rmbus's --bus-sub; default "
                                       "tcp://127.0.0.1:5561, or the configuration's)");
  app.add_option("--admin", admin, "the RM's admin endpoint, for explain (default: none, or the configuration's)");
  app.add_option("--listen", listen, "HOST:PORT the page is served on (0.0.0.0 for every address)")->capture_default_str();
  auto* native_opt = app.add_option("--config", native, "find the endpoints in this rmbus configuration (TOML)")
                         ->check(CLI::ExistingFile);
  app.add_option("--ducc", ducc, "find the endpoints in this DUCC ducc.properties")
      ->check(CLI::ExistingFile)
      ->excludes(native_opt);
  app.add_option("--key", key_file, "CURVE: this monitor's key pair (roles monitor, and admin for explain)");
  app.add_option("--server-key", server_key_file, "CURVE: the bus forwarder's public key file");
  app.add_option("--admin-server-key", admin_server_key_file,
                 "CURVE: the RM's public key for the admin endpoint (default: --server-key)");
  bool schedule_changes = false;
  app.add_flag("--schedule-changes", schedule_changes,
               "read the schedule from rm.schedule.changes instead of rm.state (the RM publishes it with [bus] "
               "schedule_changes_full_every)");
  app.add_option("--push-ms", push_ms, "least time between two snapshots pushed to the page")
      ->capture_default_str()
      ->check(CLI::Range(50, 60000));
  app.add_option("--admin-timeout-ms", admin_timeout_ms, "how long explain waits for the RM")
      ->capture_default_str()
      ->check(CLI::Range(100, 60000));
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical, off")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (!tools::start_tool_logging("rmbus-web", log_level, std::cerr)) return 2;

  settings s;
  bool curve_configured = false;
  if (!native.empty() || !ducc.empty()) {
    try {
      const auto found = web::discover_endpoints(native, ducc);
      // The command line wins over the configuration.
      if (bus_sub.empty()) bus_sub = found.bus_sub;
      if (admin.empty()) admin = found.admin;
      curve_configured = found.curve;
    } catch (const config::config_error& e) {
      std::cerr << "rmbus-web: " << e.what() << '\n';
      return 2;
    }
  }
  s.bus_sub = bus_sub.empty() ? std::string{bus::default_sub_endpoint} : bus_sub;
  s.admin = admin;
  if (curve_configured && key_file.empty()) {
    std::cerr << "rmbus-web: the configuration has [security] curve = true: give --key (a monitor key) and "
                 "--server-key (the forwarder's public key)\n";
    return 2;
  }
  try {
    s.listen = web::parse_listen(listen);
    s.bus_curve = bus::load_curve_client(key_file, server_key_file);
    s.admin_curve = bus::load_curve_client(key_file, admin_server_key_file.empty() ? server_key_file : admin_server_key_file);
  } catch (const std::exception& e) {
    std::cerr << "rmbus-web: " << e.what() << '\n';
    return 2;
  }
  if (!web::is_loopback(s.listen.host))
    spdlog::warn("listening on {}: the page is readable from other hosts (it has no login)", s.listen.host);
  s.push = std::chrono::milliseconds(push_ms);
  s.schedule_changes = schedule_changes;
  s.admin_timeout = std::chrono::milliseconds(admin_timeout_ms);
  try {
    return run(s);
  } catch (const std::exception& e) {
    std::cerr << "rmbus-web: " << e.what() << '\n';
    return 1;
  }
}
