// rmbus-proxy: the bus forwarder on its own, for deployments whose actors are spread over several hosts
// (the RM embeds the same forwarder when everything runs on one host).
//
//   rmbus-proxy [--bus-pub tcp://HOST:5560] [--bus-sub tcp://HOST:5561] [--hwm N] [--log-level info]
//               [--key FILE --keys FILE] [--heartbeat-min-gap-ms MS]
//
// --bus-pub is the endpoint PUBLISHERS connect to (the XSUB side); --bus-sub the endpoint SUBSCRIBERS connect
// to (the XPUB side). Both are bound here; a port of 0 picks a free one (the log says which).
// --key (the forwarder's key pair, from rmbus-keygen) and --keys (the allowed public keys with their roles)
// turn CURVE on (docs/bus.md, "Security"): only listed keys connect, and each may publish its role's topics.
// --heartbeat-min-gap-ms: a node's heartbeats beyond two back to back and then one per MS are dropped (shed)
// and counted, so that one flooding publisher cannot crowd the other nodes' heartbeats out of
// the queue toward a slow subscriber (docs/bus.md "Shedding repeats"). Set it to the RM's heartbeat_interval_ms
// / 8, as rmbus's embedded forwarder does; the default, 25, suits any interval of 200 ms and more; 0: off.
// SIGHUP reads the --keys file again: connections made from then on are checked against it (a bad file is
// logged and the keys in force stay). The forwarder's own key pair changes only with a restart.
// SIGINT or SIGTERM stops the forwarder cleanly and the process exits 0; a bad argument or an endpoint that
// cannot be bound exits non-zero with the reason.

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>
#include <zmq.hpp>

#include <optional>

#include "bus/curve.hpp"
#include "bus/endpoints.hpp"
#include "bus/forwarder.hpp"
#include "bus/log_level.hpp"
#include "bus/zap_handler.hpp"
#include "messages/heartbeat.hpp"
#include "messages/topics.hpp"
#include "tools/common/version_flag.hpp"

namespace {

// SIGHUP: the allowed keys again, for the connections from now on; `allowed` is the list in force.
void reload_keys(rmbus::bus::zap_handler& zap, const std::string& key_file, const std::string& keys_file,
                 const rmbus::bus::curve_keypair& own, std::vector<rmbus::bus::allowed_key>& allowed) {
  try {
    if (rmbus::bus::read_key_file(key_file, true).public_key != own.public_key)
      spdlog::warn("rmbus-proxy: the key pair in {} differs from the one in force ({}); the forwarder's key pair "
                   "changes only when it restarts",
                   key_file, own.public_key);
  } catch (const rmbus::bus::curve_error& e) {
    spdlog::warn("rmbus-proxy: {} (the key pair in force stays until a restart)", e.what());
  }
  try {
    auto fresh = rmbus::bus::read_keys_file(keys_file);
    zap.replace_allowed(fresh);
    spdlog::info("rmbus-proxy: SIGHUP: allowed keys reloaded from {}: {} keys (were {}); connections made from "
                 "now on are checked against them, open ones stay until they reconnect",
                 keys_file, fresh.size(), allowed.size());
    allowed = std::move(fresh);
  } catch (const rmbus::bus::curve_error& e) {
    spdlog::error("rmbus-proxy: SIGHUP: allowed keys not reloaded, the {} keys in force stay: {}", allowed.size(),
                  e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  rmbus::bus::forwarder_options options;
  std::string level_name = "info";
  std::string key_file;
  std::string keys_file;

  CLI::App app{"rmbus-proxy: forwards bus messages between publishers (XSUB) and subscribers (XPUB)"};
  rmbus::tools::add_version_flag(app, "rmbus-proxy");

  // One forwarder binds one pair; several forwarders are several rmbus-proxy (or rmbus) processes, each
  // client listing them all (docs/bus.md, "Several forwarders").
  const auto one_endpoint = [](const std::string& ep) -> std::string {
    if (ep.find(',') == std::string::npos) return {};
    return "rmbus-proxy is one forwarder and binds one endpoint per side; for several forwarders run one "
           "rmbus-proxy each and give the clients the list";
  };
  app.add_option("--bus-pub", options.pub_endpoint, "endpoint publishers connect to (XSUB side, bound here)")
      ->capture_default_str()
      ->check(one_endpoint);
  app.add_option("--bus-sub", options.sub_endpoint, "endpoint subscribers connect to (XPUB side, bound here)")
      ->capture_default_str()
      ->check(one_endpoint);
  app.add_option("--hwm", options.hwm, "messages queued per peer before ZeroMQ drops for that peer")
      ->capture_default_str()
      ->check(CLI::Range(1, 10'000'000));
  app.add_option("--log-level", level_name, std::string{"one of "} + std::string{rmbus::bus::log_level_names})
      ->capture_default_str()
      ->check([](const std::string& s) {
        return rmbus::bus::parse_log_level(s) ? std::string{}
                                              : "unknown log level '" + s + "' (expected one of " +
                                                    std::string{rmbus::bus::log_level_names} + ")";
      });
  std::int64_t min_gap_ms = 25;
  app.add_option("--heartbeat-min-gap-ms", min_gap_ms,
                 "drop a node's heartbeats beyond two back to back and then one per this many ms (set it to the "
                 "RM's heartbeat_interval_ms / 8; 0: forward every heartbeat)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{24} * 3600 * 1000));
  auto* key_opt = app.add_option("--key", key_file, "CURVE: the forwarder's key pair file (rmbus-keygen)");
  auto* keys_opt = app.add_option("--keys", keys_file, "CURVE: the allowed public keys with their roles");
  key_opt->needs(keys_opt);
  keys_opt->needs(key_opt);
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(*rmbus::bus::parse_log_level(level_name));
  if (min_gap_ms > 0)
    options.shed = rmbus::bus::repeat_shedding{
        std::string{rmbus::messages::topics::heartbeat},
        [](std::string_view body) { return rmbus::messages::peek_heartbeat_node(body); },
        std::chrono::milliseconds(min_gap_ms)};
  std::vector<rmbus::bus::allowed_key> allowed;
  if (!key_file.empty()) {
    try {
      options.curve = rmbus::bus::read_key_file(key_file, true);
      allowed = rmbus::bus::read_keys_file(keys_file);
    } catch (const rmbus::bus::curve_error& e) {
      spdlog::critical("rmbus-proxy: {}", e.what());
      return 2;
    }
  }

  // Block the stop signals before any thread exists (ZeroMQ's I/O threads, the proxy thread), so they all
  // inherit the mask and the signals are only ever taken by sigwait below: no handler, no global flag.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);
  if (pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr) != 0) {
    spdlog::critical("rmbus-proxy: cannot block SIGINT/SIGTERM/SIGHUP");
    return EXIT_FAILURE;
  }

  zmq::context_t ctx;  // declared before the forwarder: destroyed after its sockets are closed
  try {
    // Before the forwarder binds: a CURVE server socket without a ZAP handler would admit every key.
    std::optional<rmbus::bus::zap_handler> zap;
    if (options.curve) {
      zap.emplace(ctx, allowed);
      zap->start();
    }
    // Logged at most 10 times a second (runs on the forwarder's thread only); all are counted.
    auto window = std::chrono::steady_clock::time_point{};
    int logged = 0;
    rmbus::bus::forwarder fwd{ctx, options, [&window, &logged](const rmbus::bus::refused_publish& r) {
                                const auto now = std::chrono::steady_clock::now();
                                if (now - window >= std::chrono::seconds(1)) {
                                  window = now;
                                  logged = 0;
                                }
                                if (logged++ < 10) spdlog::warn("rmbus-proxy: refused {} from {}", r.topic, r.sender);
                              }};
    fwd.start();
    int signal_number = 0;
    for (;;) {
      if (sigwait(&stop_signals, &signal_number) != 0) {
        spdlog::critical("rmbus-proxy: sigwait failed");
        return EXIT_FAILURE;
      }
      if (signal_number != SIGHUP) break;
      if (!zap) {
        spdlog::info("rmbus-proxy: SIGHUP: nothing to reload without CURVE");
        continue;
      }
      reload_keys(*zap, key_file, keys_file, *options.curve, allowed);
    }
    spdlog::info("rmbus-proxy: signal {} received, stopping", signal_number);
    fwd.stop();
    if (options.shed) spdlog::info("rmbus-proxy: {} repeated heartbeats shed", fwd.shed());
    if (zap) {
      spdlog::info("rmbus-proxy: {} messages refused for their sender's role, {} connections refused",
                   fwd.refused(), zap->stats().refused);
      zap->stop();
    }
  } catch (const zmq::error_t& e) {
    spdlog::critical("rmbus-proxy: cannot serve --bus-pub {} / --bus-sub {}: {}", options.pub_endpoint,
                     options.sub_endpoint, e.what());
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
