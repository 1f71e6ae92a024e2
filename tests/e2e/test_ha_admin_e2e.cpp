// What an operator sees of HA through rmbus-admin, the logs and the metrics (issue 51): reads on a standby are
// answered by the active (and say so); a demoted RM exports the epoch its status shows; an RM without HA
// started by mistake on an HA bus is named in its own log and in the HA candidates' logs and events; status
// warns when no standby is left. Real rmbus candidates on a real rmbus-proxy (tests/e2e/ha_fixture.hpp).
#include <catch2/catch.hpp>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/e2e/admin_json.hpp"
#include "tests/e2e/file_waits.hpp"
#include "tests/e2e/ha_checks.hpp"
#include "tests/e2e/ha_fixture.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::ha_fixture;
using rmbus::e2e::ha_options;
using rmbus::e2e::job;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;
using nlohmann::json;

namespace {

constexpr auto deadline = 60s;

json json_of(const ts::run_result& r) { return rmbus::e2e::admin_json(r.output); }

}  // namespace

TEST_CASE("HA: reads on a standby are answered by the active, which is named", "[ha]") {
  ha_fixture f{ha_options{}};
  auto& c = f.cluster();
  c.start();
  std::string active_instance;
  const auto active = f.wait_active(deadline, &active_instance);
  REQUIRE(active.has_value());
  const std::size_t standby = 1 - *active;
  c.submit(job("alice-1", "alice", "normal", 1024, 8));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 8; }, deadline));

  const auto occ = f.admin(standby, {"qoccupancy"});
  INFO(occ.output);
  CHECK(occ.status == std::optional<int>{0});
  CHECK(occ.output.find("rmbus-admin: " + f.admin_endpoint(standby) + " is a standby; answered by the active " +
                        active_instance + " at " + f.admin_endpoint(*active)) != std::string::npos);
  CHECK(occ.output.find("alice-1 x") != std::string::npos);

  const auto j = json_of(f.admin(standby, {"--json", "explain", "alice-1"}));
  CHECK(j.at("ok") == true);
  CHECK(j.at("answered_by") == f.admin_endpoint(*active));
  CHECK(j.at("redirected_from") == f.admin_endpoint(standby));
  CHECK(j.at("explanation").at("known") == true);

  // An action is not carried to another RM than the one named: refused, with where to send it.
  const auto off = f.admin(standby, {"vary-off", "a1"});
  CHECK(off.status == std::optional<int>{1});
  CHECK(off.output.find("standby; active is " + active_instance) != std::string::npos);
}

TEST_CASE("HA: a demoted RM exports the epoch its status shows", "[ha]") {
  ha_fixture f{ha_options{}};
  auto& c = f.cluster();
  c.start();
  const auto first = f.wait_active(deadline);
  REQUIRE(first.has_value());
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  const std::size_t other = 1 - *first;
  REQUIRE(rmbus::e2e::eventually([&] { return f.admin(*first, {"handover"}).status == std::optional<int>{0}; }, 20s));
  REQUIRE(rmbus::e2e::eventually([&] { return f.status_value(other, "role") == "active"; }, 20s));
  // The new active's epoch is above the one the demoted RM had: both its status and its metric say so.
  const auto new_epoch = std::stoull(f.status_value(other, "epoch"));
  CHECK(rmbus::e2e::eventually(
      [&] {
        const auto shown = f.status_value(*first, "epoch");
        const auto exported = rmbus::e2e::metric(f, *first, "rmbus_ha_epoch");
        return shown == std::to_string(new_epoch) && exported && *exported == static_cast<double>(new_epoch);
      },
      10s));
  CHECK(rmbus::e2e::metric(f, *first, "rmbus_ha_role") == std::optional<double>{0});
  // A standby schedules nothing by design: its fresh schedulers are not called restarting.
  CHECK(f.status_value(*first, "restarting").empty());
}

TEST_CASE("HA: an RM without HA started on the HA bus is named in every log, and status warns of no standby",
          "[ha]") {
  ha_fixture f{ha_options{}};
  auto& c = f.cluster();
  c.start();
  std::string active_instance;
  const auto active = f.wait_active(deadline, &active_instance);
  REQUIRE(active.has_value());
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));

  // The mistake: a plain rmbus (its configuration without [ha]) on the same bus.
  const auto plain_config = f.dir() + "/plain.toml";
  std::ofstream{plain_config} << rmbus::e2e::test_config();
  const auto plain_log = f.dir() + "/plain.log";
  ts::child_process plain{RMBUS_BIN,
                          {"--config", plain_config, "--bus-pub", f.bus_pub(), "--bus-sub", f.bus_sub(),
                           "--no-forwarder", "--admin", ts::loopback(ts::free_port()), "--metrics", "off"},
                          plain_log};
  CHECK(rmbus::e2e::eventually(
      [&] {
        return rmbus::e2e::read_all(plain_log).find("another RM with [ha] enabled publishes on this bus: " +
                                                    active_instance) != std::string::npos;
      },
      20s));
  CHECK(rmbus::e2e::eventually(
      [&] {
        return rmbus::e2e::read_all(f.log_file(*active)).find("an RM without HA publishes rm.state on this bus: rmbus.") !=
               std::string::npos;
      },
      20s));
  CHECK(c.wait_event([](const msg::rm_event& e) { return e.kind == "foreign_rm"; }, 20s).has_value());
  plain.signal(SIGTERM);
  plain.wait(10s);

  // The standby stops: the active's status warns that nothing would take over.
  f.signal(1 - *active, SIGTERM);
  f.wait(1 - *active, 10s);
  CHECK(rmbus::e2e::eventually(
      [&] {
        const auto st = f.admin(*active, {"status"});
        return st.output.find("warning     no standby heard") != std::string::npos;
      },
      20s));
  CHECK(!json_of(f.admin(*active, {"--json", "status"})).at("ha_warning").get<std::string>().empty());
}
