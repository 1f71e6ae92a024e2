// CURVE end to end, with the real executables: keys made by rmbus-keygen, rmbus started with a [security]
// section, a fake cluster holding an agent+orchestrator key, rmbus-admin with an admin key and with an agent
// key, a forged work map from an agent key, and a stranger's key.

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <zmq.hpp>

#include "bus/curve.hpp"
#include "bus/publisher.hpp"
#include "messages/heartbeat.hpp"
#include "messages/topics.hpp"
#include "messages/workmap.hpp"
#include "tests/e2e/curve_helpers.hpp"
#include "tests/e2e/rm_fixture.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/fake_cluster.hpp"

using namespace std::chrono_literals;
namespace ts = rmbus::test_support;
namespace bus = rmbus::bus;
using rmbus::e2e::eventually;
using rmbus::e2e::keygen;
using rmbus::e2e::read_all;

namespace {

bool has_event(const ts::fake_cluster& c, const std::string& kind,
               const std::function<bool(const rmbus::messages::rm_event&)>& pred) {
  for (const auto& e : c.events())
    if (e.kind == kind && pred(e)) return true;
  return false;
}

}  // namespace

TEST_CASE("with CURVE on, listed keys work end to end and wrong roles and unknown keys are refused") {
  char tmpl[] = "/tmp/rmbus-curve-e2e-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const std::string keys = dir + "/keys";
  keygen(
      {"--out", dir + "/rmbus"});  // the RM's own key: not listed, it has the rm role on its forwarder anyway
  keygen({"--out", dir + "/cluster", "--roles", "agent,orchestrator", "--keys", keys});
  keygen({"--out", dir + "/alice", "--roles", "admin", "--keys", keys});
  keygen({"--out", dir + "/node99", "--roles", "agent", "--keys", keys});
  keygen({"--out", dir + "/stranger"});
  struct stat st {};
  REQUIRE(::stat((dir + "/alice.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777u) == 0600u);
  // rmbus-keygen refuses a name the keys file has already.
  CHECK(ts::run_to_end(RMBUS_KEYGEN_BIN, {"--out", dir + "/again/alice", "--roles", "admin", "--keys", keys},
                       30s)
            .status == std::optional<int>{2});

  // One configuration section turns CURVE on; the key files sit next to the configuration.
  const std::string config = dir + "/rmbus.toml";
  std::ofstream{config} << rmbus::e2e::test_config()
                        << "\n[security]\ncurve = true\nkey = \"rmbus.key\"\nkeys = \"keys\"\n";
  const auto pub = ts::loopback(ts::free_port());
  const auto sub = ts::loopback(ts::free_port());
  const auto admin = ts::loopback(ts::free_port());
  const auto metrics = "127.0.0.1:" + std::to_string(ts::free_port());
  ts::child_process rm{
      RMBUS_BIN,
      {"--config", config, "--bus-pub", pub, "--bus-sub", sub, "--admin", admin, "--metrics", metrics},
      dir + "/rmbus.log"};

  const auto server_public = bus::read_key_file(dir + "/rmbus.pub", false).public_key;
  ts::cluster_options co;
  co.bus_pub = pub;
  co.bus_sub = sub;
  co.name = "curve-cluster";
  co.curve = bus::curve_client{server_public, bus::read_key_file(dir + "/cluster.key", true)};
  ts::fake_cluster cluster{co};
  // b2 is configured but left to the stranger's heartbeats (which must never make it known).
  for (const char* n : {"a1", "a2", "a3", "a4", "b1"}) cluster.add_node(n, 8192);
  cluster.submit({"j1", "ann", "normal", 2048});
  cluster.start();

  SECTION("heartbeats and the work map reach rmbus through its CURVE forwarder and rm.state comes back") {
    // 4 alpha nodes of 8 quanta, 2 GB processes: j1 may hold up to 16 shares; any share shows the round trip.
    REQUIRE(cluster.wait_state([](const auto& s) { return ts::active_shares(s, "j1") > 0; }, 90s));
  }

  SECTION("an admin key may send admin requests, an agent key and no key may not") {
    REQUIRE(cluster.wait_state([](const auto& s) { return ts::active_shares(s, "j1") > 0; }, 90s));
    auto ok = ts::run_to_end(
        RMBUS_ADMIN_BIN,
        {"--admin", admin, "--key", dir + "/alice.key", "--server-key", dir + "/rmbus.pub", "status"}, 30s);
    INFO(ok.output);
    CHECK(ok.status == std::optional<int>{0});
    // The request is logged and published with the key that sent it.
    const auto alice = bus::read_key_file(dir + "/alice.pub", false).public_key;
    CHECK(eventually(
        [&] {
          return has_event(cluster, "admin_request", [&](const auto& e) {
            return e.detail.count("key") && e.detail.at("key") == "alice" &&
                   e.detail.at("public_key") == alice && e.detail.at("cmd") == "status";
          });
        },
        10s));

    auto agent = ts::run_to_end(RMBUS_ADMIN_BIN,
                                {"--admin", admin, "--key", dir + "/node99.key", "--server-key",
                                 dir + "/rmbus.pub", "--timeout-ms", "5000", "status"},
                                30s);
    INFO(agent.output);
    CHECK(agent.status == std::optional<int>{4});
    CHECK(agent.output.find("refused this key") != std::string::npos);

    auto plain = ts::run_to_end(RMBUS_ADMIN_BIN, {"--admin", admin, "--timeout-ms", "1500", "status"}, 30s);
    CHECK(plain.status == std::optional<int>{3});
    CHECK(read_all(dir + "/rmbus.log").find("is not an admin key") != std::string::npos);
  }

  SECTION("a work map from an agent key and heartbeats from an unknown key change nothing") {
    REQUIRE(cluster.wait_state([](const auto& s) { return ts::active_shares(s, "j1") > 0; }, 90s));
    zmq::context_t ctx;
    bus::publisher_options forger_opts;
    forger_opts.name = "forger";
    forger_opts.endpoint = pub;
    forger_opts.curve = bus::curve_client{server_public, bus::read_key_file(dir + "/node99.key", true)};
    bus::publisher forger{ctx, forger_opts};
    bus::publisher_options stranger_opts;
    stranger_opts.name = "stranger";
    stranger_opts.endpoint = pub;
    stranger_opts.curve = bus::curve_client{server_public, bus::read_key_file(dir + "/stranger.key", true)};
    bus::publisher stranger{ctx, stranger_opts};
    rmbus::messages::workmap empty;  // accepted, it would end j1
    rmbus::messages::heartbeat ghost;
    ghost.node = "b2";
    ghost.memory_mb = 8192;
    // Refused by role: the forwarder drops each and rmbus publishes bus_refused events naming the key.
    REQUIRE(eventually(
        [&] {
          forger.publish(rmbus::messages::topics::workmap, empty);
          stranger.publish(rmbus::messages::topics::heartbeat, ghost);
          return has_event(cluster, "bus_refused", [](const auto& e) {
            return e.detail.at("sender") == "node99 (agent)" &&
                   e.detail.at("topic") == "orchestrator.workmap";
          });
        },
        20s));
    // Rounds after the forgeries still schedule j1, and the stranger's node b2 never came up.
    REQUIRE(cluster.wait_state([](const auto& s) { return ts::active_shares(s, "j1") > 0; }, 30s));
    REQUIRE(cluster.wait_nodes([](const auto&) { return true; }, 30s));
    const auto nodes = cluster.last_nodes();
    REQUIRE(nodes);
    for (const auto& n : nodes->nodes)
      CHECK_FALSE((n.node == "b2" && n.state == rmbus::messages::node_state::up));
    CHECK(read_all(dir + "/rmbus.log").find("refused unknown key") != std::string::npos);
  }

  cluster.stop();
  rm.signal(SIGTERM);
  CHECK(rm.wait(20s) == std::optional<int>{0});
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("rmbus stops at start with the file's name when a key file is missing") {
  char tmpl[] = "/tmp/rmbus-curve-e2e-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const std::string config = dir + "/rmbus.toml";
  std::ofstream{config} << rmbus::e2e::test_config() << "\n[security]\ncurve = true\n";
  ts::child_process rm{
      RMBUS_BIN,
      {"--config", config, "--bus-pub", ts::loopback(ts::free_port()), "--bus-sub",
       ts::loopback(ts::free_port()), "--admin", ts::loopback(ts::free_port()), "--metrics", "off"},
      dir + "/rmbus.log"};
  CHECK(rm.wait(30s) == std::optional<int>{1});
  // The default key path is curve/rmbus.key next to the configuration.
  CHECK(read_all(dir + "/rmbus.log").find(dir + "/curve/rmbus.key: cannot read") != std::string::npos);
  std::system(("rm -rf '" + dir + "'").c_str());
}
