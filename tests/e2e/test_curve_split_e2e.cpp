// CURVE with the RM split over processes, with the real executables: two rmbus processes (pool alpha with
// every other role, and pool beta) each holding its own rm key, meeting on a standalone rmbus-proxy or on the
// first one's embedded forwarder, with a fake cluster holding an agent+orchestrator key; and a second RM
// process whose key is not listed, refused until the proxy's keys file lists it and the proxy is sent SIGHUP
// (then admitted when it connects again).

#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "bus/curve.hpp"
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

enum class meeting { proxy, embedded };

// The site: keys made by rmbus-keygen, one configuration shared by both RM processes (each gives its own
// key with --key), the processes, and the fake cluster.
struct split_curve_site {
  std::string dir, keys, config, pub, sub, admin;
  std::unique_ptr<ts::child_process> proxy, a, b;
  std::unique_ptr<ts::fake_cluster> cluster;
  std::vector<std::string> b_args;

  void start_b() { b = std::make_unique<ts::child_process>(RMBUS_BIN, b_args, dir + "/rmbus-b.log"); }

  split_curve_site(meeting where, bool b_listed) {
    char tmpl[] = "/tmp/rmbus-curve-split-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    keys = dir + "/keys";
    keygen({"--out", dir + "/proxy"});
    keygen({"--out", dir + "/rm-a", "--roles", "rm", "--keys", keys});
    if (b_listed)
      keygen({"--out", dir + "/rm-b", "--roles", "rm", "--keys", keys});
    else
      keygen({"--out", dir + "/rm-b"});
    keygen({"--out", dir + "/cluster", "--roles", "agent,orchestrator", "--keys", keys});
    config = dir + "/rmbus.toml";
    std::ofstream{config} << rmbus::e2e::test_config()
                          << "\n[security]\ncurve = true\nkey = \"rm-a.key\"\nkeys = \"keys\"\n";
    pub = ts::loopback(ts::free_port());
    sub = ts::loopback(ts::free_port());
    admin = ts::loopback(ts::free_port());
    // The forwarder's public key, for every process that connects to it.
    const std::string server_pub = dir + (where == meeting::proxy ? "/proxy.pub" : "/rm-a.pub");
    if (where == meeting::proxy)
      proxy = std::make_unique<ts::child_process>(
          RMBUS_PROXY_BIN,
          std::vector<std::string>{"--bus-pub", pub, "--bus-sub", sub, "--key", dir + "/proxy.key", "--keys", keys},
          dir + "/proxy.log");
    std::vector<std::string> a_args{"--config", config, "--bus-pub", pub, "--bus-sub", sub, "--admin", admin,
                                    "--metrics", "127.0.0.1:" + std::to_string(ts::free_port()), "--roles",
                                    "intake,diff,eviction,publisher,admin,scheduler:alpha"};
    if (where == meeting::proxy) a_args.insert(a_args.end(), {"--no-forwarder", "--server-key", server_pub});
    a = std::make_unique<ts::child_process>(RMBUS_BIN, a_args, dir + "/rmbus-a.log");
    b_args = {"--config", config, "--bus-pub", pub, "--bus-sub", sub, "--metrics",
              "127.0.0.1:" + std::to_string(ts::free_port()), "--roles", "scheduler:beta",
              "--no-forwarder", "--key", dir + "/rm-b.key", "--server-key", server_pub};
    start_b();
    ts::cluster_options co;
    co.bus_pub = pub;
    co.bus_sub = sub;
    co.name = "curve-split-cluster";
    co.curve = bus::curve_client{bus::read_key_file(server_pub, false).public_key,
                                 bus::read_key_file(dir + "/cluster.key", true)};
    cluster = std::make_unique<ts::fake_cluster>(co);
    for (const char* n : {"a1", "a2", "a3", "a4", "b1", "b2"}) cluster->add_node(n, 8192);
    // One job a pool: a 2 GB process fits a node of either pool.
    cluster->submit(rmbus::e2e::job("j-alpha", "ann", "normal", 2048));
    cluster->submit(rmbus::e2e::job("j-beta", "bob", "beta-normal", 2048));
    cluster->start();
  }

  ~split_curve_site() {
    cluster->stop();
    for (auto* p : {a.get(), b.get()}) p->signal(SIGTERM);
    for (auto* p : {a.get(), b.get()}) CHECK(p->wait(20s) == std::optional<int>{0});
    if (proxy) {
      proxy->signal(SIGTERM);
      CHECK(proxy->wait(20s) == std::optional<int>{0});
    }
    std::system(("rm -rf '" + dir + "'").c_str());
  }
};

}  // namespace

TEST_CASE("with CURVE on, two RM processes with their own rm keys schedule both pools across processes") {
  const auto where = GENERATE(meeting::proxy, meeting::embedded);
  INFO((where == meeting::proxy ? "on a standalone rmbus-proxy" : "on the first process's forwarder"));
  split_curve_site site{where, true};
  // alpha is scheduled by process A, beta by process B; both plans reach rm.state only if both processes'
  // connections (each with its own key) were admitted and their rm.* messages passed the forwarder's role check.
  REQUIRE(site.cluster->wait_state(
      [](const auto& s) { return ts::active_shares(s, "j-alpha") > 0 && ts::active_shares(s, "j-beta") > 0; },
      90s));
  // The processes' beta work really was placed on beta's nodes.
  const auto state = site.cluster->last_state();
  REQUIRE(state);
  CHECK(ts::double_bookings(*state, rmbus::e2e::node_quanta()).empty());
  // The admin endpoint (process A) still admits no key without the admin role: the cluster's is refused.
  auto agent = ts::run_to_end(RMBUS_ADMIN_BIN,
                              {"--admin", site.admin, "--key", site.dir + "/cluster.key", "--server-key",
                               site.dir + "/rm-a.pub", "--timeout-ms", "3000", "status"},
                              30s);
  CHECK(agent.status == std::optional<int>{4});
}

TEST_CASE("an RM process with an unlisted key is refused and the listed one keeps working, and once listed and "
          "the proxy sent SIGHUP it joins when it connects again, the proxy never restarted") {
  split_curve_site site{meeting::proxy, false};
  const auto b_public = bus::read_key_file(site.dir + "/rm-b.pub", false).public_key;
  // Process A schedules alpha; B's connections are refused at the handshake by the proxy.
  REQUIRE(site.cluster->wait_state([](const auto& s) { return ts::active_shares(s, "j-alpha") > 0; }, 90s));
  REQUIRE(eventually([&] { return read_all(site.dir + "/proxy.log").find("refused unknown key " + b_public) !=
                                  std::string::npos; },
                     10s));
  // Several more rounds (round_timeout_ms 3000: publication waits that long for beta's missing plan) and beta
  // still has nothing: nobody admitted schedules it. A keeps publishing states.
  int new_states = 0;  // wait_state calls this once for each rm.state received from now on
  REQUIRE(site.cluster->wait_state([&](const auto&) { return ++new_states >= 3; }, 30s));
  const auto state = site.cluster->last_state();
  REQUIRE(state);
  CHECK(ts::active_shares(*state, "j-alpha") > 0);
  CHECK(ts::active_shares(*state, "j-beta") == 0);
  CHECK(site.b->running());  // refused, not stopped: ZeroMQ retries the handshake

  // Listed now, and the proxy told (it keeps running: A and the cluster keep their connections). libzmq does
  // not retry a refused handshake, so B connects again by restarting; its new connections are admitted and
  // beta gets its work.
  std::ofstream{site.keys, std::ios::app} << "rm rm-b " << b_public << "\n";
  site.proxy->signal(SIGHUP);
  REQUIRE(eventually([&] { return read_all(site.dir + "/proxy.log").find("allowed keys reloaded") !=
                                  std::string::npos; },
                     10s));
  site.b->signal(SIGTERM);
  REQUIRE(site.b->wait(20s) == std::optional<int>{0});
  site.start_b();
  REQUIRE(site.cluster->wait_state(
      [](const auto& s) { return ts::active_shares(s, "j-alpha") > 0 && ts::active_shares(s, "j-beta") > 0; },
      90s));
  CHECK(site.proxy->running());
}

TEST_CASE("rmbus --key without CURVE in the configuration is a usage error naming what is missing") {
  char tmpl[] = "/tmp/rmbus-curve-split-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  keygen({"--out", dir + "/rm-b"});
  const std::string config = dir + "/rmbus.toml";
  std::ofstream{config} << rmbus::e2e::test_config();  // no [security]
  const auto r = ts::run_to_end(RMBUS_BIN, {"--config", config, "--key", dir + "/rm-b.key", "--check-config"}, 30s);
  INFO(r.output);
  CHECK(r.status == std::optional<int>{2});
  CHECK(r.output.find("--key and --server-key need CURVE on ([security] curve = true") != std::string::npos);
  std::system(("rm -rf '" + dir + "'").c_str());
}
