// Which RM rmbus-web asks explain of: the configured --admin until rm.ha names an active, then the active of
// the highest epoch, read from real rm.ha bodies (messages/rm_ha.hpp) as the web decodes them.
#include <catch2/catch.hpp>

#include "messages/rm_ha.hpp"
#include "messages/value.hpp"
#include "tools/web/explain_target.hpp"
#include "tools/web/view_model.hpp"

namespace msg = rmbus::messages;
using rmbus::web::explain_target;
using rmbus::web::ha_beacon;

namespace {

// An rm.ha beacon as the RM encodes it, decoded as rmbus-web decodes it.
ha_beacon beacon(const std::string& instance, std::uint64_t epoch, msg::ha_state state, const std::string& admin) {
  msg::rm_ha b;
  b.instance = instance;
  b.epoch = epoch;
  b.rank = 1;
  b.state = state;
  b.admin = admin;
  const auto body = msg::encode(msg::envelope{1, 0, 0, instance + ":ha"}, b);
  auto decoded = rmbus::web::decode_web(std::string{rmbus::web::ha_topic}, body, {});
  auto* h = std::get_if<ha_beacon>(&decoded);
  REQUIRE(h != nullptr);
  return *h;
}

}  // namespace

TEST_CASE("explain follows the active the newest epoch names, from the configured endpoint on") {
  explain_target t{"tcp://127.0.0.1:5562"};
  CHECK(t.endpoint() == "tcp://127.0.0.1:5562");
  CHECK_FALSE(t.active_epoch().has_value());

  // The first active (epoch 1) and its standby: explain goes to the active.
  CHECK_FALSE(t.heard(beacon("rmbus.2.b", 1, msg::ha_state::standby, "tcp://127.0.0.1:6562")));
  CHECK(t.endpoint() == "tcp://127.0.0.1:5562");
  CHECK_FALSE(t.heard(beacon("rmbus.1.a", 1, msg::ha_state::active, "tcp://127.0.0.1:5562")));
  CHECK(t.active_instance() == "rmbus.1.a");
  CHECK(t.active_epoch() == std::optional<std::uint64_t>{1});

  // a dies; b takes over under epoch 2 and names its admin endpoint: explain follows it.
  CHECK(t.heard(beacon("rmbus.2.b", 2, msg::ha_state::active, "tcp://127.0.0.1:6562")));
  CHECK(t.endpoint() == "tcp://127.0.0.1:6562");
  CHECK(t.active_instance() == "rmbus.2.b");

  // A late beacon of the former active (epoch 1, not yet demoted) does not pull explain back.
  CHECK_FALSE(t.heard(beacon("rmbus.1.a", 1, msg::ha_state::active, "tcp://127.0.0.1:5562")));
  CHECK(t.endpoint() == "tcp://127.0.0.1:6562");
  // Nor does another claim of the same epoch, nor a standby's or a handover beacon.
  CHECK_FALSE(t.heard(beacon("rmbus.3.c", 2, msg::ha_state::active, "tcp://127.0.0.1:7562")));
  CHECK_FALSE(t.heard(beacon("rmbus.1.a", 2, msg::ha_state::standby, "tcp://127.0.0.1:5562")));
  CHECK_FALSE(t.heard(beacon("rmbus.2.b", 2, msg::ha_state::handover, "tcp://127.0.0.1:6562")));
  CHECK(t.endpoint() == "tcp://127.0.0.1:6562");

  // A handover to a (epoch 3): explain goes back to a; a wildcard bind address is made connectable here.
  CHECK(t.heard(beacon("rmbus.1.a", 3, msg::ha_state::active, "tcp://*:5562")));
  CHECK(t.endpoint() == "tcp://127.0.0.1:5562");
  CHECK(t.active_epoch() == std::optional<std::uint64_t>{3});
}

TEST_CASE("an active beacon without an admin endpoint keeps the endpoint in use but moves the epoch on") {
  explain_target t{"tcp://127.0.0.1:5562"};
  CHECK_FALSE(t.heard(beacon("rmbus.2.b", 4, msg::ha_state::active, "")));
  CHECK(t.endpoint() == "tcp://127.0.0.1:5562");
  CHECK(t.active_epoch() == std::optional<std::uint64_t>{4});
  // An older active naming an endpoint is still fenced off.
  CHECK_FALSE(t.heard(beacon("rmbus.1.a", 3, msg::ha_state::active, "tcp://127.0.0.1:6562")));
  CHECK(t.endpoint() == "tcp://127.0.0.1:5562");
}
