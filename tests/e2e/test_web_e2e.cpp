// rmbus-web against the real rmbus with CURVE on: keys made by rmbus-keygen, a fake cluster with an
// agent+orchestrator key, and rmbus-web with a key listed for monitor and admin (it sees the schedule and
// explain answers) or for monitor only (it sees the schedule; explain is refused, and says so).

#include <unistd.h>

#include <filesystem>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "bus/curve.hpp"
#include "tests/e2e/curve_helpers.hpp"
#include "tests/e2e/rm_fixture.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/fake_cluster.hpp"
#include "tests/tools/web/web_process.hpp"

using namespace std::chrono_literals;
namespace ts = rmbus::test_support;
namespace bus = rmbus::bus;
using nlohmann::json;
using rmbus::e2e::eventually;
using rmbus::e2e::keygen;
using rmbus::e2e::read_all;

namespace {

// rmbus-web with `args`, its log in the test's folder.
std::unique_ptr<ts::web_process> start_web(const std::string& dir, const std::string& name,
                                           std::vector<std::string> args) {
  args.insert(args.end(), {"--admin-timeout-ms", "5000"});
  return std::make_unique<ts::web_process>(dir + "/" + name + ".log", std::move(args));
}

// The snapshot lists job `id` with at least one active share.
bool sees_running(const ts::web_process& web, const std::string& id) {
  const auto [status, body] = web.get("/api/snapshot");
  if (status != 200) return false;
  const auto snap = json::parse(body);  // kept: a range-for over a temporary's member would dangle
  for (const auto& j : snap["jobs"])
    if (j[0] == id && j[6].get<int>() > 0) return true;
  return false;
}

}  // namespace

TEST_CASE("rmbus-web on a CURVE bus: the schedule with a monitor key, explain only with an admin key too") {
  char tmpl[] = "/tmp/rmbus-web-e2e-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  // Removed at the end (after every process below has stopped: declared first, destroyed last).
  struct remove_at_end {
    std::string dir;
    ~remove_at_end() { std::filesystem::remove_all(dir); }
  } cleanup{dir};
  const std::string keys = dir + "/keys";
  keygen({"--out", dir + "/rmbus"});
  keygen({"--out", dir + "/cluster", "--roles", "agent,orchestrator", "--keys", keys});
  keygen({"--out", dir + "/web", "--roles", "monitor,admin", "--keys", keys});
  keygen({"--out", dir + "/viewer", "--roles", "monitor", "--keys", keys});

  const std::string config = dir + "/rmbus.toml";
  std::ofstream{config} << rmbus::e2e::test_config()
                        << "\n[security]\ncurve = true\nkey = \"rmbus.key\"\nkeys = \"keys\"\n";
  const auto pub = ts::loopback(ts::free_port());
  const auto sub = ts::loopback(ts::free_port());
  const auto admin = ts::loopback(ts::free_port());
  ts::child_process rm{RMBUS_BIN,
                       {"--config", config, "--bus-pub", pub, "--bus-sub", sub, "--admin", admin, "--metrics", "off"},
                       dir + "/rmbus.log"};
  ts::cluster_options co;
  co.bus_pub = pub;
  co.bus_sub = sub;
  co.name = "web-cluster";
  co.curve = bus::curve_client{bus::read_key_file(dir + "/rmbus.pub", false).public_key,
                               bus::read_key_file(dir + "/cluster.key", true)};
  ts::fake_cluster cluster{co};
  for (const char* n : {"a1", "a2", "a3", "a4", "b1", "b2"}) cluster.add_node(n, 8192);
  cluster.submit({"j1", "ann", "normal", 2048});
  cluster.start();
  REQUIRE(cluster.wait_state([](const auto& s) { return ts::active_shares(s, "j1") > 0; }, 90s));

  SECTION("a monitor and admin key: the schedule, and explain answered by the RM") {
    const auto web = start_web(dir, "web", {"--bus-sub", sub, "--admin", admin, "--key", dir + "/web.key",
                                            "--server-key", dir + "/rmbus.pub"});
    const bool seen = eventually([&] { return sees_running(*web, "j1"); }, 30s);
    INFO(web->get("/api/snapshot").second.substr(0, 3000));
    REQUIRE(seen);
    const auto [status, body] = web->get("/api/explain?job=j1");
    INFO(body);
    CHECK(status == 200);
    const auto e = json::parse(body);
    CHECK(e["ok"] == true);
    CHECK(e["results"]["explanation"]["job"] == "j1");
    CHECK(e["results"]["pool"] == "alpha");
  }

  SECTION("a monitor key alone: the schedule, and explain refused with the reason") {
    const auto web = start_web(dir, "viewer", {"--bus-sub", sub, "--admin", admin, "--key", dir + "/viewer.key",
                                               "--server-key", dir + "/rmbus.pub"});
    const bool seen = eventually([&] { return sees_running(*web, "j1"); }, 30s);
    INFO(web->get("/api/snapshot").second.substr(0, 3000));
    REQUIRE(seen);
    const auto [status, body] = web->get("/api/explain?job=j1");
    INFO(body);
    CHECK(status == 502);
    CHECK(json::parse(body)["error"] == admin + " refused this key: it is not listed there with the admin role");
  }

  SECTION("no key on a CURVE bus: nothing arrives, and the page says it waits") {
    const auto web = start_web(dir, "nokey", {"--bus-sub", sub});
    // The forwarder refuses the handshake, so no round ever reaches it; a few of the RM's rounds pass meanwhile.
    const auto seen = cluster.states_seen();
    REQUIRE(eventually([&] { return cluster.states_seen() >= seen + 5; }, 30s));
    const auto [status, body] = web->get("/api/snapshot");
    REQUIRE(status == 200);
    CHECK(json::parse(body)["health"]["cycle"].is_null());
  }
}
