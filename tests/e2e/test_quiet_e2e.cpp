// An RM that works as designed is quiet (issue 51): heartbeats shed because agents send them more often than
// the configured interval (the embedded default's 30 s) warn once, not every 10 s, and are not counted as lost
// messages; a graceful stop of an idle RM does not wait for a drain that cannot come, nor warn that messages
// may be lost. The real rmbus, its log and its /metrics.
#include <httplib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <fstream>
#include <regex>
#include <thread>

#include "tests/e2e/file_waits.hpp"
#include "tests/e2e/rm_fixture.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::layout;
using rmbus::e2e::rm_fixture;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// An unlabelled metric of the RM's /metrics; nullopt when absent.
std::optional<double> metric(int port, const std::string& name) {
  httplib::Client c{"127.0.0.1", port};
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(5, 0);
  auto res = c.Get("/metrics");
  if (!res || res->status != 200) return std::nullopt;
  const auto at = res->body.find("\n" + name + " ");
  if (at == std::string::npos) return std::nullopt;
  return std::stod(res->body.substr(at + name.size() + 2));
}

}  // namespace

TEST_CASE("heartbeats shed by design warn once and are not counted as lost bus messages") {
  rm_fixture f{layout::single};
  // The embedded default's heartbeat interval (30 s) while the agents send every 200 ms: the embedded
  // forwarder sheds all but about one heartbeat per node every 3.75 s.
  f.kill_rm(SIGTERM);
  f.wait_rm(10s);
  auto config = rmbus::e2e::test_config();
  config.replace(config.find("heartbeat_interval_ms = 300"), 27, "heartbeat_interval_ms = 30000");
  std::ofstream{f.config_path()} << config;
  f.start_rm();
  auto& c = f.cluster();
  c.start();
  REQUIRE(rmbus::e2e::eventually([&] { return metric(f.metrics_port(), "rmbus_bus_shed_total").value_or(0) > 50; },
                                 30s));
  // Past two of the forwarder's 10 s log periods with heartbeats still being shed.
  const auto shed_before = metric(f.metrics_port(), "rmbus_bus_shed_total").value_or(0);
  const auto started = std::chrono::steady_clock::now();
  REQUIRE(rmbus::e2e::eventually(
      [&] {
        return std::chrono::steady_clock::now() - started > 21s &&
               metric(f.metrics_port(), "rmbus_bus_shed_total").value_or(0) > shed_before + 100;
      },
      60s));
  const auto log = rmbus::e2e::read_all(f.log_file());
  INFO(log);
  CHECK(count_of(log, "[warning] bus forwarder: shed") <= 1);
  CHECK(count_of(log, "more often than the RM needs") == 1);
  CHECK(metric(f.metrics_port(), "rmbus_bus_missing_messages_total") == std::optional<double>{0});
  CHECK(metric(f.metrics_port(), "rmbus_bus_sequence_gaps_total") == std::optional<double>{0});
}

TEST_CASE("a graceful stop of an idle RM does not warn that messages may be lost") {
  rm_fixture f{layout::single};
  // Idle: no agent and no orchestrator; the RM has started and published nothing.
  REQUIRE(rmbus::e2e::eventually(
      [&] { return rmbus::e2e::read_all(f.log_file()).find(" started: bus pub") != std::string::npos; }, 20s));
  const auto asked = std::chrono::steady_clock::now();
  f.kill_rm(SIGTERM);
  const auto ended = f.wait_rm(20s);
  const auto stop_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - asked).count();
  REQUIRE(ended.at(0) == std::optional<int>{0});
  const auto log = rmbus::e2e::read_all(f.log_file());
  INFO(log);
  CHECK(log.find("may be lost") == std::string::npos);
  CHECK(log.find("did not stop in time") == std::string::npos);
  CHECK(log.find(" stopped") != std::string::npos);
  std::printf("[figures] idle RM: SIGTERM to exit %lld ms\n", static_cast<long long>(stop_ms));
}
