// CURVE keys on reconfiguration, with the real rmbus: an agent key revoked from the keys file and a SIGHUP,
// after which a new connection with it is refused (its open one stays, as documented); a key added and
// `rmbus-admin reconfigure`, after which it works; a changed key pair in the configuration is logged and not
// applied (the bus keeps working with the key pair in force).

#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <zmq.hpp>

#include "bus/curve.hpp"
#include "bus/publisher.hpp"
#include "messages/heartbeat.hpp"
#include "messages/topics.hpp"
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

// One agent on its own connection (its own publisher socket, so its own CURVE handshake): a heartbeat for
// `node` every 100 ms until destroyed.
class agent_connection {
 public:
  agent_connection(zmq::context_t& ctx, const std::string& endpoint, bus::curve_client curve, std::string node)
      : thread_([this, &ctx, endpoint, curve = std::move(curve), node = std::move(node)] {
          bus::publisher_options o;
          o.name = "agent-" + node;
          o.endpoint = endpoint;
          o.curve = curve;
          bus::publisher pub{ctx, o};
          rmbus::messages::heartbeat hb;
          hb.node = node;
          hb.ip = "10.0.0.9";
          hb.memory_mb = 8192;
          while (!stop_.load()) {
            pub.publish(rmbus::messages::topics::heartbeat, hb);
            std::this_thread::sleep_for(100ms);  // an agent's heartbeat period, short for the test
          }
        }) {}
  ~agent_connection() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

bool node_up(const rmbus::messages::rm_nodes& nodes, const std::string& name) {
  for (const auto& n : nodes.nodes)
    if (n.node == name && n.state == rmbus::messages::node_state::up) return true;
  return false;
}

}  // namespace

TEST_CASE("with CURVE on, reconfiguration reloads the allowed keys: a revoked key's new connections are refused "
          "and an added key gets in, without a restart") {
  char tmpl[] = "/tmp/rmbus-curve-reload-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const std::string keys = dir + "/keys";
  keygen({"--out", dir + "/rmbus"});
  keygen({"--out", dir + "/rmbus-new"});  // a key pair the configuration names later: not applied
  keygen({"--out", dir + "/cluster", "--roles", "agent,orchestrator", "--keys", keys});
  keygen({"--out", dir + "/alice", "--roles", "admin", "--keys", keys});
  keygen({"--out", dir + "/node-x", "--roles", "agent", "--keys", keys});
  const auto keys_with_x = read_all(keys);

  const std::string config = dir + "/rmbus.toml";
  auto write_config = [&](const std::string& key) {
    std::ofstream{config} << rmbus::e2e::test_config() << "\n[security]\ncurve = true\nkey = \"" << key
                          << "\"\nkeys = \"keys\"\n";
  };
  write_config("rmbus.key");
  const auto pub = ts::loopback(ts::free_port());
  const auto sub = ts::loopback(ts::free_port());
  const auto admin = ts::loopback(ts::free_port());
  const std::string log = dir + "/rmbus.log";
  ts::child_process rm{RMBUS_BIN,
                       {"--config", config, "--bus-pub", pub, "--bus-sub", sub, "--admin", admin, "--metrics",
                        "127.0.0.1:" + std::to_string(ts::free_port())},
                       log};

  const auto server_public = bus::read_key_file(dir + "/rmbus.pub", false).public_key;
  auto client = [&](const std::string& name) {
    return bus::curve_client{server_public, bus::read_key_file(dir + "/" + name + ".key", true)};
  };
  ts::cluster_options co;
  co.bus_pub = pub;
  co.bus_sub = sub;
  co.name = "curve-reload-cluster";
  co.curve = client("cluster");
  ts::fake_cluster cluster{co};
  // b1 and b2 are left to the single agents below.
  for (const char* n : {"a1", "a2", "a3", "a4"}) cluster.add_node(n, 8192);
  cluster.submit(rmbus::e2e::job("j1", "ann", "normal", 2048));
  cluster.start();
  REQUIRE(cluster.wait_state([](const auto& s) { return ts::active_shares(s, "j1") > 0; }, 90s));

  zmq::context_t ctx;
  // node-x, listed: its node comes up.
  agent_connection x_open{ctx, pub, client("node-x"), "b1"};
  REQUIRE(cluster.wait_nodes([](const auto& n) { return node_up(n, "b1"); }, 30s));

  // Revoked (its line removed) while the configuration also names another key pair for rmbus; SIGHUP.
  {
    std::ofstream out{keys};
    std::istringstream lines{keys_with_x};
    for (std::string line; std::getline(lines, line);)
      if (line.find(" node-x ") == std::string::npos) out << line << "\n";
  }
  write_config("rmbus-new.key");
  rm.signal(SIGHUP);
  REQUIRE(eventually([&] { return read_all(log).find("allowed keys reloaded") != std::string::npos; }, 20s));
  // cluster, alice and the RM's own key (always admitted on its forwarder): 3 keys, node-x gone.
  CHECK(read_all(log).find("3 keys -node-x;") != std::string::npos);
  CHECK(read_all(log).find("rmbus-new.key differs from the one in force") != std::string::npos);

  {
    // A new connection with the revoked key is refused at its handshake: its node b2 never comes up.
    agent_connection x_new{ctx, pub, client("node-x"), "b2"};
    const auto x_public = bus::read_key_file(dir + "/node-x.pub", false).public_key;
    REQUIRE(eventually([&] { return read_all(log).find("refused unknown key " + x_public) != std::string::npos; },
                       20s));
    // 3 s = 10 heartbeat intervals of the configuration: b2 would be up long before if one had passed.
    std::this_thread::sleep_for(3s);
    REQUIRE(cluster.wait_nodes([](const auto&) { return true; }, 10s));
    const auto nodes = cluster.last_nodes();
    REQUIRE(nodes);
    CHECK_FALSE(node_up(*nodes, "b2"));
  }
  // The connection admitted before the revocation stays until it reconnects (ZAP runs at the handshake only;
  // docs/bus.md): b1's heartbeats still arrive. Without them it would be down 1.2 s (node_stability 4 x
  // 300 ms) after the revocation; it never is, and rm.nodes still shows it up (a heartbeat late under load
  // may show it missing for an interval, so the check waits for an up report).
  CHECK(cluster.wait_nodes([](const auto& n) { return node_up(n, "b1"); }, 10s));
  for (const auto& e : cluster.events())
    CHECK_FALSE((e.kind == "node_down" && e.detail.count("node") && e.detail.at("node") == "b1"));
  // The bus still runs on the key pair in force: rounds go on and reach the cluster.
  REQUIRE(cluster.wait_state([](const auto& s) { return ts::active_shares(s, "j1") > 0; }, 30s));

  // A key added (rmbus-keygen appends it to the keys file), and the other road: rmbus-admin reconfigure.
  keygen({"--out", dir + "/node-y", "--roles", "agent", "--keys", keys});
  auto r = ts::run_to_end(RMBUS_ADMIN_BIN,
                          {"--admin", admin, "--key", dir + "/alice.key", "--server-key", dir + "/rmbus.pub",
                           "--timeout-ms", "8000", "reconfigure"},
                          30s);
  INFO(r.output);
  REQUIRE(r.status == std::optional<int>{0});
  REQUIRE(eventually([&] { return read_all(log).find("4 keys +node-y;") != std::string::npos; }, 20s));
  agent_connection y{ctx, pub, client("node-y"), "b2"};
  REQUIRE(cluster.wait_nodes([](const auto& n) { return node_up(n, "b2"); }, 30s));

  cluster.stop();
  rm.signal(SIGTERM);
  CHECK(rm.wait(20s) == std::optional<int>{0});
  std::system(("rm -rf '" + dir + "'").c_str());
}
