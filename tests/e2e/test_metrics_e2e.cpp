// End-to-end: the real rmbus serves Prometheus metrics over HTTP. The fixture gives every rmbus process its own
// free loopback port (--metrics 127.0.0.1:<port>); this test scrapes /metrics with a real HTTP client while a
// fake cluster heartbeats and runs a job, and checks that the numbers agree with what rmbus published and that
// counters move between scrapes. Waits are on published rounds with deadlines; nothing asserts a timing.
#include <array>
#include <csignal>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include <catch2/catch.hpp>
#include <httplib.h>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "bus/publisher.hpp"
#include "messages/topics.hpp"
#include "messages/value.hpp"
#include "tests/e2e/rm_fixture.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::job;
using rmbus::e2e::layout;
using rmbus::e2e::rm_fixture;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;

namespace {

constexpr auto deadline = 60s;

using samples = std::map<std::string, double>;  // series ("name{labels}") -> value

std::optional<std::string> fetch(int port, const std::string& path = "/metrics") {
  httplib::Client c{"127.0.0.1", port};
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(5, 0);
  auto res = c.Get(path);
  if (!res || res->status != 200) return std::nullopt;
  return res->body;
}

// The exposition text as series -> value (comments skipped; the value follows the last space).
samples parse(const std::string& text) {
  samples out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const auto line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    REQUIRE(space != std::string::npos);
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

samples scrape(int port) {
  auto body = fetch(port);
  REQUIRE(body.has_value());
  return parse(*body);
}

double value_of(const samples& s, const std::string& series) {
  auto it = s.find(series);
  return it == s.end() ? -1 : it->second;
}

// Scrapes after each new rm.state until `pred` holds or the deadline passes; returns the last scrape.
template <class Pred>
samples scrape_until(rm_fixture& f, int port, Pred pred) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  auto s = scrape(port);
  while (!pred(s) && std::chrono::steady_clock::now() < until) {
    f.cluster().wait_state([](const msg::rm_state&) { return true; }, 5s);
    s = scrape(port);
  }
  return s;
}

}  // namespace

TEST_CASE("one process: /metrics over HTTP shows the schedule, heartbeats and the bus, and its counters move") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  // Class normal schedules in pool alpha, quantum 1 GB: a 2048 MB process is order 2; capped at 3 processes.
  c.submit(job("m-1", "alice", "normal", 2048, 3));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "m-1") == 3; }, deadline));
  const auto* published = ts::find_job(*c.last_state(), "m-1");
  REQUIRE(published != nullptr);
  const double demand = static_cast<double>(published->demand);
  REQUIRE(demand >= 3);
  const int port = f.metrics_port();

  // given 3 x order 2 = 6 quanta awarded; demanded = demand x 2.
  auto first = scrape_until(f, port, [](const samples& s) {
    return value_of(s, "rmbus_quanta_awarded{class=\"normal\"}") == 6 &&
           value_of(s, "rmbus_processes{class=\"normal\",status=\"running\"}") == 3;
  });
  CHECK(value_of(first, "rmbus_quanta_awarded{class=\"normal\"}") == 6);
  CHECK(value_of(first, "rmbus_quanta_demanded{class=\"normal\"}") == demand * 2);
  CHECK(value_of(first, "rmbus_jobs{class=\"normal\",status=\"scheduled\"}") == 1);
  CHECK(value_of(first, "rmbus_jobs{class=\"normal\",status=\"pending\"}") == 0);
  CHECK(value_of(first, "rmbus_processes{class=\"normal\",status=\"running\"}") == 3);
  CHECK(value_of(first, "rmbus_nodes{state=\"up\"}") == 6);  // a1..a4, b1, b2
  CHECK(value_of(first, "rmbus_up") == 1);
  // No HA configured: no HA series, so the alert rules do not take this RM for a lone standby.
  for (const char* ha : {"rmbus_ha_role", "rmbus_ha_epoch", "rmbus_ha_takeovers_total", "rmbus_ha_rank_conflicts_total"}) {
    INFO(ha);
    CHECK(first.count(ha) == 0);
  }
  CHECK(value_of(first, "rmbus_heartbeats_received_total") > 0);
  CHECK(value_of(first, "rmbus_bus_messages_total{topic=\"agent.heartbeat\"}") > 0);
  CHECK(value_of(first, "rmbus_bus_messages_total{topic=\"orchestrator.workmap\"}") > 0);
  CHECK(value_of(first, "rmbus_round_duration_us_count{pool=\"alpha\",phase=\"total\"}") > 0);
  CHECK(value_of(first, "rmbus_round_duration_us_count{pool=\"beta\",phase=\"how_much\"}") > 0);
  CHECK(value_of(first, "rmbus_state_last_seq") > 0);
  CHECK(value_of(first, "rmbus_bus_bad_messages_total{stage=\"envelope\"}") == 0);

  // Two more rounds later every counter of the running cluster has moved.
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  auto second = scrape_until(f, port, [&](const samples& s) {
    return value_of(s, "rmbus_rounds_total") > value_of(first, "rmbus_rounds_total");
  });
  CHECK(value_of(second, "rmbus_heartbeats_received_total") > value_of(first, "rmbus_heartbeats_received_total"));
  CHECK(value_of(second, "rmbus_rounds_total") > value_of(first, "rmbus_rounds_total"));
  CHECK(value_of(second, "rmbus_state_last_seq") > value_of(first, "rmbus_state_last_seq"));
  CHECK(value_of(second, "rmbus_bus_messages_total{topic=\"agent.heartbeat\"}") >
        value_of(first, "rmbus_bus_messages_total{topic=\"agent.heartbeat\"}"));
  CHECK(value_of(second, "rmbus_round_duration_us_count{pool=\"alpha\",phase=\"total\"}") >
        value_of(first, "rmbus_round_duration_us_count{pool=\"alpha\",phase=\"total\"}"));
  // One rm.state per round: the seq of the last one published and the rounds counted grow alike.
  CHECK(value_of(second, "rmbus_state_last_seq") - value_of(first, "rmbus_state_last_seq") ==
        value_of(second, "rmbus_rounds_total") - value_of(first, "rmbus_rounds_total"));

  // A node holding a share of m-1 goes silent: the watchdog counts missed heartbeats, the node goes down and
  // its share is evicted; when it speaks again its first heartbeat is late.
  const auto victim = ts::nodes_of(*c.last_state(), "m-1").front();
  c.set_alive(victim, false);
  REQUIRE(c.wait_nodes(
      [&](const msg::rm_nodes& n) {
        for (const auto& r : n.nodes)
          if (r.node == victim) return r.state == msg::node_state::down;
        return false;
      },
      deadline));
  auto silent = scrape_until(f, port, [&](const samples& s) {
    return value_of(s, "rmbus_evictions_total{reason=\"node down\"}") >= 1;
  });
  CHECK(value_of(silent, "rmbus_evictions_total{reason=\"node down\"}") >= 1);
  // node_stability 4: down after 4 ticks without a heartbeat, the first forgiven: at least 2 missed.
  CHECK(value_of(silent, "rmbus_heartbeats_missed_total") >= value_of(second, "rmbus_heartbeats_missed_total") + 2);
  CHECK(value_of(silent, "rmbus_nodes{state=\"down\"}") == 1);
  c.set_alive(victim, true);
  auto back = scrape_until(f, port, [&](const samples& s) {
    return value_of(s, "rmbus_heartbeats_late_total") > value_of(silent, "rmbus_heartbeats_late_total");
  });
  CHECK(value_of(back, "rmbus_heartbeats_late_total") > value_of(silent, "rmbus_heartbeats_late_total"));

  // The index page links to /metrics; the process still stops cleanly.
  auto index = fetch(port, "/");
  REQUIRE(index.has_value());
  CHECK(index->find("/metrics") != std::string::npos);
  c.stop();
  f.kill_rm(SIGTERM);
  for (const auto& code : f.wait_rm(15s)) CHECK(code == std::optional<int>{0});
}

TEST_CASE("two processes: each serves the metrics of what it sees on its own port") {
  rm_fixture f{layout::split};
  auto& c = f.cluster();
  c.start();
  c.submit(job("m-b", "carol", "beta-normal", 1024, 2));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "m-b") == 2; }, deadline));
  // A runs intake, publisher and alpha's scheduler: heartbeats, the schedule (beta's job included, order 1).
  auto a = scrape_until(f, f.metrics_port(0), [](const samples& s) {
    return value_of(s, "rmbus_quanta_awarded{class=\"beta-normal\"}") == 2;
  });
  CHECK(value_of(a, "rmbus_quanta_awarded{class=\"beta-normal\"}") == 2);
  CHECK(value_of(a, "rmbus_heartbeats_received_total") > 0);
  CHECK(value_of(a, "rmbus_state_last_seq") > 0);
  // B runs only beta's scheduler: no heartbeats, no schedule published, but its bus carries the work of beta.
  auto b = scrape_until(f, f.metrics_port(1), [](const samples& s) {
    return value_of(s, "rmbus_bus_messages_total{topic=\"rm.internal.work.beta\"}") > 0;
  });
  CHECK(value_of(b, "rmbus_bus_messages_total{topic=\"rm.internal.work.beta\"}") > 0);
  CHECK(value_of(b, "rmbus_heartbeats_received_total") == 0);
  CHECK(value_of(b, "rmbus_rounds_total") == 0);
  CHECK(value_of(b, "rmbus_state_last_seq") == 0);
  // Each names its own instance (the prefix of its src on the bus).
  auto build_info = [](const samples& s) {
    for (const auto& [series, v] : s)
      if (series.rfind("rmbus_build_info{", 0) == 0 && v == 1) return series;
    return std::string{};
  };
  CHECK_FALSE(build_info(a).empty());
  CHECK_FALSE(build_info(b).empty());
  CHECK(build_info(a) != build_info(b));
}

TEST_CASE("rmbus with --metrics off serves nothing even when the configuration file names an address, which is used otherwise") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  REQUIRE(fetch(f.metrics_port()).has_value());
  c.stop();
  f.kill_rm(SIGTERM);
  REQUIRE(f.wait_rm(15s).front() == std::optional<int>{0});

  // The configuration file names a metrics address of its own ([bus] metrics).
  const int file_port = ts::free_port();
  std::ofstream{f.config_path(), std::ios::app} << "\n[bus]\nmetrics = \"127.0.0.1:" << file_port << "\"\n";

  f.set_metrics_option("off");
  f.start_rm();
  c.start();
  // Running and scheduling (a new rm.state), yet nothing listens where the file or the fixture said.
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  CHECK_FALSE(fetch(file_port).has_value());
  CHECK_FALSE(fetch(f.metrics_port()).has_value());
  c.stop();
  f.kill_rm(SIGTERM);
  REQUIRE(f.wait_rm(15s).front() == std::optional<int>{0});

  f.set_metrics_option(std::nullopt);  // no --metrics: the file decides
  f.start_rm();
  c.start();
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  auto s = scrape_until(f, file_port, [](const samples& x) { return value_of(x, "rmbus_rounds_total") > 0; });
  CHECK(value_of(s, "rmbus_up") == 1);
  CHECK(value_of(s, "rmbus_rounds_total") > 0);
}

TEST_CASE("a busy metrics port stops rmbus at start with exit status 1 and the address in the log") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  // A second rmbus on other bus and admin ports but the first one's metrics port.
  const auto busy = "127.0.0.1:" + std::to_string(f.metrics_port());
  auto run = ts::run_to_end(RMBUS_BIN,
                            {"--config", f.config_path(), "--bus-pub", ts::loopback(ts::free_port()), "--bus-sub",
                             ts::loopback(ts::free_port()), "--admin", ts::loopback(ts::free_port()), "--metrics", busy},
                            30s);
  CHECK(run.status == std::optional<int>{1});
  CHECK(run.output.find("metrics endpoint " + busy + ": cannot bind") != std::string::npos);
  // The first one is unharmed and still the only one answering there.
  CHECK(fetch(f.metrics_port()).has_value());
  auto bad = ts::run_to_end(RMBUS_BIN, {"--config", f.config_path(), "--metrics", "nowhere", "--check-config"}, 30s);
  CHECK(bad.status == std::optional<int>{2});
  CHECK(bad.output.find("metrics: bad address 'nowhere'") != std::string::npos);
}

TEST_CASE("garbage on the bus moves the bad-message counters of both stages") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  const int port = f.metrics_port();
  zmq::context_t ctx;
  zmq::socket_t raw{ctx, zmq::socket_type::pub};
  raw.set(zmq::sockopt::linger, 0);
  raw.connect(f.bus_pub());
  rmbus::bus::publisher_options po;
  po.name = "garbage";
  po.endpoint = f.bus_pub();
  rmbus::bus::publisher pub{ctx, po};
  // stage=envelope: a body that is not MessagePack (0xc1 is never used). stage=body: a heartbeat with a good
  // envelope whose memory_mb is a string. Sent again after each round until counted (the slow joiner).
  auto s = scrape_until(f, port, [&](const samples& x) {
    if (value_of(x, "rmbus_bus_bad_messages_total{stage=\"envelope\"}") >= 1 &&
        value_of(x, "rmbus_bus_bad_messages_total{stage=\"body\"}") >= 1)
      return true;
    std::array<zmq::const_buffer, 2> frames{zmq::str_buffer("agent.heartbeat"), zmq::str_buffer("\xc1junk")};
    (void)zmq::send_multipart(raw, frames);
    pub.publish_with(msg::topics::heartbeat, [](const msg::envelope& env) {
      msg::value::map m;
      m["v"] = msg::value{std::uint64_t{1}};
      m["seq"] = msg::value{env.seq};
      m["ts_ms"] = msg::value{env.ts_ms};
      m["src"] = msg::value{env.src};
      m["node"] = msg::value{"a1"};
      m["ip"] = msg::value{"10.0.0.1"};
      m["memory_mb"] = msg::value{"lots"};
      return msg::encode_value(msg::value{std::move(m)});
    });
    return false;
  });
  CHECK(value_of(s, "rmbus_bus_bad_messages_total{stage=\"envelope\"}") >= 1);
  CHECK(value_of(s, "rmbus_bus_bad_messages_total{stage=\"body\"}") >= 1);
  CHECK(value_of(s, "rmbus_events_total{kind=\"bad_message\"}") >= 1);
  CHECK(value_of(s, "rmbus_bus_messages_total{topic=\"agent.heartbeat\"}") > 0);
}
