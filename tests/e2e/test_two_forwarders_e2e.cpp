// Two forwarders on one bus (issue 21, "the bus must survive the host too"; docs/bus.md "Several
// forwarders"): the real rmbus and rmbus-proxy and a fake cluster on loopback, every client (agents,
// orchestrator, observer and the RM itself) connected to both forwarders through --bus-pub / --bus-sub lists.
// Each message then arrives twice at every subscriber; the copies must be dropped (nothing counted twice),
// and when one forwarder is SIGKILLed the cluster carries on through the other (no node reported missing).
//
// The two forwarders stand for the two RM hosts of the deployment in docs/bus.md: `own_and_proxy` is rmbus
// with its embedded forwarder (host A) and an rmbus-proxy (host B's forwarder); `two_proxies` is an rmbus
// with --no-forwarder between two rmbus-proxy processes. A test where the active RM dies together with its
// forwarder needs a standby rmbus in place of host B's proxy (issue 21's election): it is this harness with
// a second rmbus started like the first, its own forwarder first in its lists, and the active's process
// killed instead of a proxy.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <csignal>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <httplib.h>

#include "messages/rm_nodes.hpp"
#include "messages/rm_state.hpp"
#include "tests/e2e/rm_fixture.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/fake_cluster.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::job;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;
using steady = std::chrono::steady_clock;

namespace {

constexpr auto deadline = 60s;
const std::vector<std::string> cluster_nodes{"a1", "a2", "a3", "a4", "b1", "b2"};

// One counter of the RM's Prometheus endpoint (a line "name value"); -1 when unreadable.
double metric(int port, const std::string& name) {
  httplib::Client c{"127.0.0.1", port};
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(5, 0);
  auto res = c.Get("/metrics");
  if (!res || res->status != 200) return -1;
  std::istringstream in{res->body};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  return -1;
}

std::size_t events_of(const ts::fake_cluster& c, const std::string& kind) {
  const auto ev = c.events();
  return static_cast<std::size_t>(std::count_if(ev.begin(), ev.end(), [&](const auto& e) { return e.kind == kind; }));
}

bool all_up(const msg::rm_nodes& n) {
  std::size_t up = 0;
  for (const auto& r : n.nodes)
    if (std::find(cluster_nodes.begin(), cluster_nodes.end(), r.node) != cluster_nodes.end() &&
        r.state == msg::node_state::up)
      ++up;
  return up == cluster_nodes.size();
}

// own_and_proxy: one rmbus with its embedded forwarder (first) and an rmbus-proxy; two_proxies: one rmbus
// --no-forwarder between two proxies; split_own_and_proxy: as own_and_proxy with the RM's roles over two
// processes (A: every role but pool beta's scheduler, with the embedded forwarder; B: scheduler:beta,
// --no-forwarder), so the RM's internal streams travel both forwarders too.
enum class forwarders { own_and_proxy, two_proxies, split_own_and_proxy };

// rmbus, the forwarders and the fake cluster, every client listing both forwarders.
class two_forwarder_bus {
 public:
  explicit two_forwarder_bus(forwarders how) {
    char tmpl[] = "/tmp/rmbus-e2e-2fwd-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    config_ = dir_ + "/rmbus.toml";
    std::ofstream{config_} << rmbus::e2e::test_config();
    for (auto& f : fwd_) f = {ts::loopback(ts::free_port()), ts::loopback(ts::free_port())};
    metrics_port_ = ts::free_port();
    // Forwarder 0 is rmbus's own (own_and_proxy) or the first proxy; forwarder 1 is always a proxy.
    if (how == forwarders::two_proxies) start_proxy(0);
    start_proxy(1);
    std::vector<std::string> args{"--config", config_, "--bus-pub", pub_list(), "--bus-sub", sub_list(),
                                  "--admin", ts::loopback(ts::free_port()), "--metrics",
                                  "127.0.0.1:" + std::to_string(metrics_port_)};
    if (how == forwarders::two_proxies) args.push_back("--no-forwarder");
    auto b_args = args;
    if (how == forwarders::split_own_and_proxy)
      args.insert(args.end(), {"--roles", "intake,diff,eviction,publisher,admin,scheduler:alpha"});
    rm_ = std::make_unique<ts::child_process>(RMBUS_BIN, args, dir_ + "/rmbus.log");
    if (how == forwarders::split_own_and_proxy) {
      b_args.at(b_args.size() - 1) = "off";  // --metrics: A's port is A's
      b_args.insert(b_args.end(), {"--roles", "scheduler:beta", "--no-forwarder"});
      rm_b_ = std::make_unique<ts::child_process>(RMBUS_BIN, b_args, dir_ + "/rmbus-b.log");
    }
    ts::cluster_options co;
    co.bus_pub = pub_list();
    co.bus_sub = sub_list();
    co.period = 200ms;
    co.name = "e2e-cluster";
    cluster_ = std::make_unique<ts::fake_cluster>(co);
    for (const auto& n : cluster_nodes) cluster_->add_node(n, 8192);
  }
  ~two_forwarder_bus() {
    cluster_->stop();
    for (auto* p : {rm_b_.get(), rm_.get()})
      if (p) {
        p->signal(SIGTERM);
        p->wait(10s);
      }
    for (auto& p : proxy_)
      if (p) {
        p->signal(SIGTERM);
        p->wait(10s);
      }
    if (std::getenv("RMBUS_KEEP") == nullptr) std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  // SIGKILLs forwarder i (a proxy) and waits until it is gone.
  void kill_proxy(std::size_t i) {
    proxy_.at(i)->signal(SIGKILL);
    REQUIRE(proxy_.at(i)->wait(10s).has_value());
  }

  ts::fake_cluster& cluster() { return *cluster_; }
  int metrics_port() const { return metrics_port_; }
  std::string pub_list() const { return fwd_[0].first + "," + fwd_[1].first; }
  std::string sub_list() const { return fwd_[0].second + "," + fwd_[1].second; }

 private:
  void start_proxy(std::size_t i) {
    proxy_.at(i) = std::make_unique<ts::child_process>(
        RMBUS_PROXY_BIN, std::vector<std::string>{"--bus-pub", fwd_[i].first, "--bus-sub", fwd_[i].second},
        dir_ + "/proxy-" + std::to_string(i) + ".log");
  }

  std::string dir_, config_;
  std::array<std::pair<std::string, std::string>, 2> fwd_;  // (pub side, sub side) of each forwarder
  int metrics_port_ = 0;
  std::array<std::unique_ptr<ts::child_process>, 2> proxy_;
  std::unique_ptr<ts::child_process> rm_, rm_b_;
  std::unique_ptr<ts::fake_cluster> cluster_;
};

// What has been counted so far, with the heartbeats the agents sent just before and just after reading the
// RM's count: the RM cannot have received more than the agents sent.
struct counts {
  std::uint64_t sent_before = 0, sent_after = 0;
  double received = -1, duplicates = -1;
};
counts read_counts(two_forwarder_bus& bus) {
  counts c;
  c.sent_before = bus.cluster().heartbeats_sent();
  c.received = metric(bus.metrics_port(), "rmbus_heartbeats_received_total");
  c.duplicates = metric(bus.metrics_port(), "rmbus_bus_duplicate_messages_total");
  c.sent_after = bus.cluster().heartbeats_sent();
  return c;
}

// Waits for rounds (each a new rm.state) for `how_long`: the cluster keeps running meanwhile.
void rounds_for(ts::fake_cluster& c, std::chrono::milliseconds how_long) {
  const auto until = steady::now() + how_long;
  while (steady::now() < until) REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
}

void carries_on_when_one_forwarder_dies(forwarders how, std::size_t killed) {
  two_forwarder_bus bus{how};
  auto& c = bus.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 1024, 12));
  c.submit(job("carol-1", "carol", "beta-normal", 2048, 3));
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 12 && ts::active_shares(s, "carol-1") == 3; },
      deadline));
  REQUIRE(c.wait_nodes(all_up, deadline));
  const auto settled = read_counts(bus);
  // 3 s of rounds with both forwarders up: every message travels twice.
  rounds_for(c, 3s);

  const auto both = read_counts(bus);
  const auto cluster_both = c.bus_stats();
  // The copies arrived and were dropped: at the RM (heartbeats, work maps, its own echoes) and at the
  // cluster's observer (rm.state, rm.nodes, rm.cycle, rm.events).
  CHECK(both.duplicates > 0);
  CHECK(cluster_both.duplicates > 0);
  CHECK(cluster_both.restarts == 0);
  CHECK(cluster_both.gaps == 0);
  // Nothing counted twice: the RM's heartbeat count never exceeds what the agents sent (with the copies
  // counted it would approach twice that), and no rm.state was handed to the orchestrator twice.
  REQUIRE(both.received > 0);
  CHECK(both.received <= static_cast<double>(both.sent_after));
  // And none lost on the way: over those 3 s the RM counted (nearly) every heartbeat sent. Not all: the
  // intake hands its count on at its watchdog tick (300 ms), so up to a tick's worth is still on its way.
  CHECK(both.received - settled.received >= 0.8 * static_cast<double>(both.sent_before - settled.sent_after));
  CHECK(c.states_repeated() == 0);

  // rmbus-top on both forwarders shows the schedule with every copy dropped: were the copies taken for a
  // publisher's restart (the one-forwarder rule), its bus line would count restarts.
  {
    const auto top = ts::run_to_end(
        RMBUS_TOP_BIN, {"--once", "--bus-sub", bus.sub_list(), "--timeout-ms", "20000", "--width", "200"}, 40s);
    INFO(top.output);
    REQUIRE(top.status == std::optional<int>{0});
    CHECK(std::regex_search(top.output, std::regex{"\nalice-1 +alice +normal +scheduled +1024 +12 "}));
    CHECK(std::regex_search(top.output, std::regex{"bus: \\d+ messages, 0 gaps \\(0 missing\\), 0 publisher restarts"}));
  }

  const auto missing_before = events_of(c, "node_missing");
  const auto states_before = c.states_seen();
  bus.kill_proxy(killed);
  const auto killed_at = steady::now();

  // The cluster carries on through the other forwarder: new jobs are scheduled, and rounds go on for longer
  // than a node takes to go missing (one heartbeat interval, 300 ms) many times over.
  // One job per pool: beta's scheduler runs in the other RM process of the split layout.
  c.submit(job("dave-1", "dave", "normal", 1024, 4));
  c.submit(job("erin-1", "erin", "beta-normal", 2048, 2));
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) { return ts::active_shares(s, "dave-1") == 4 && ts::active_shares(s, "erin-1") == 2; },
      deadline));
  const double scheduled_ms = std::chrono::duration<double, std::milli>(steady::now() - killed_at).count();
  const auto after_kill = read_counts(bus);
  rounds_for(c, 3s);
  REQUIRE(c.wait_nodes(all_up, deadline));

  CHECK(events_of(c, "node_missing") == missing_before);
  CHECK(events_of(c, "node_missing") == 0);
  CHECK(events_of(c, "node_down") == 0);
  CHECK(events_of(c, "evict") == 0);
  CHECK(ts::active_shares(*c.last_state(), "alice-1") == 12);
  CHECK(ts::active_shares(*c.last_state(), "carol-1") == 3);
  CHECK(c.states_seen() > states_before);
  CHECK(c.states_repeated() == 0);
  const auto one = read_counts(bus);
  CHECK(one.received <= static_cast<double>(one.sent_after));
  CHECK(one.received - after_kill.received >= 0.8 * static_cast<double>(one.sent_before - after_kill.sent_after));
  CHECK(c.bus_stats().restarts == 0);
  std::cout << "[figures] two forwarders: " << both.duplicates << " copies dropped at the RM and "
            << cluster_both.duplicates << " at the orchestrator before the kill; heartbeats sent " << one.sent_after
            << ", received by the RM " << one.received << "; a job scheduled " << scheduled_ms
            << " ms after forwarder " << killed << " was SIGKILLed\n";
}

}  // namespace

TEST_CASE("two forwarders (rmbus's own and an rmbus-proxy): copies dropped, the proxy SIGKILLed, the cluster carries on") {
  carries_on_when_one_forwarder_dies(forwarders::own_and_proxy, 1);
}

TEST_CASE("two rmbus-proxy forwarders: copies dropped, the first SIGKILLed, the cluster carries on through the second") {
  carries_on_when_one_forwarder_dies(forwarders::two_proxies, 0);
}

TEST_CASE("two forwarders with the RM split over two processes: pool beta's scheduler in the other process carries on") {
  carries_on_when_one_forwarder_dies(forwarders::split_own_and_proxy, 1);
}
