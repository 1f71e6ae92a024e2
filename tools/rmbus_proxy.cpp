// rmbus-proxy: the bus forwarder on its own, for deployments whose actors are spread over several hosts
// (the RM embeds the same forwarder when everything runs on one host).
//
//   rmbus-proxy [--bus-pub tcp://HOST:5560] [--bus-sub tcp://HOST:5561] [--hwm N] [--log-level info]
//
// --bus-pub is the endpoint PUBLISHERS connect to (the XSUB side); --bus-sub the endpoint SUBSCRIBERS connect
// to (the XPUB side). Both are bound here; a port of 0 picks a free one (the log says which).
// SIGINT or SIGTERM stops the forwarder cleanly and the process exits 0; a bad argument or an endpoint that
// cannot be bound exits non-zero with the reason.

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdlib>
#include <string>
#include <zmq.hpp>

#include "bus/endpoints.hpp"
#include "bus/forwarder.hpp"
#include "bus/log_level.hpp"

int main(int argc, char** argv) {
  rmbus::bus::forwarder_options options;
  std::string level_name = "info";

  CLI::App app{"rmbus-proxy: forwards bus messages between publishers (XSUB) and subscribers (XPUB)"};
  app.add_option("--bus-pub", options.pub_endpoint, "endpoint publishers connect to (XSUB side, bound here)")
      ->capture_default_str();
  app.add_option("--bus-sub", options.sub_endpoint, "endpoint subscribers connect to (XPUB side, bound here)")
      ->capture_default_str();
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
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(*rmbus::bus::parse_log_level(level_name));

  // Block the stop signals before any thread exists (ZeroMQ's I/O threads, the proxy thread), so they all
  // inherit the mask and the signals are only ever taken by sigwait below: no handler, no global flag.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  if (pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr) != 0) {
    spdlog::critical("rmbus-proxy: cannot block SIGINT/SIGTERM");
    return EXIT_FAILURE;
  }

  zmq::context_t ctx;  // declared before the forwarder: destroyed after its sockets are closed
  try {
    rmbus::bus::forwarder fwd{ctx, options};
    fwd.start();
    int signal_number = 0;
    if (sigwait(&stop_signals, &signal_number) != 0) {
      spdlog::critical("rmbus-proxy: sigwait failed");
      return EXIT_FAILURE;
    }
    spdlog::info("rmbus-proxy: signal {} received, stopping", signal_number);
    fwd.stop();
  } catch (const zmq::error_t& e) {
    spdlog::critical("rmbus-proxy: cannot serve --bus-pub {} / --bus-sub {}: {}", options.pub_endpoint,
                     options.sub_endpoint, e.what());
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
