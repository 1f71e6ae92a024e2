// An idle RM reads as idle, not dead (issue 51, item 3): the real rmbus with no orchestrator, asked as an
// operator asks. `rmbus-admin status --json` says why nothing is scheduled (`scheduling`: no work map for N
// s, none since start), and `rmbus-top --once` prints its picture with that reason and exits 0 instead of
// asking whether rmbus runs. Once the orchestrator publishes, status says `scheduling`; when its maps stop,
// status says how long since the last one and that there was one.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/e2e/admin_json.hpp"
#include "tests/e2e/file_waits.hpp"
#include "tests/e2e/rm_fixture.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::eventually;
using rmbus::e2e::layout;
using rmbus::e2e::rm_fixture;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;
using nlohmann::json;

namespace {

constexpr auto deadline = 60s;

// rmbus-admin status --json, parsed.
json status_of(rm_fixture& f) {
  const auto r = f.admin({"--json", "status"});
  INFO(r.output);
  REQUIRE(r.status == std::optional<int>{0});
  return rmbus::e2e::admin_json(r.output);
}

std::string scheduling_state(const json& status) {
  if (!status.contains("scheduling")) return "(no scheduling key)";
  return status["scheduling"].value("state", "(no state)");
}

// Asks status until its scheduling state is `state` (bounded by the deadline); `status` keeps the last reply.
bool wait_scheduling_state(rm_fixture& f, const std::string& state, json& status) {
  return eventually(
      [&] {
        status = status_of(f);
        return scheduling_state(status) == state;
      },
      deadline);
}

}  // namespace

TEST_CASE("an RM without an orchestrator says in status and in rmbus-top --once that it is idle, and why") {
  rm_fixture f{layout::single};  // the cluster is not started: no agent, no orchestrator

  // The fixture's start-up window is 2 x 300 ms; then, with no map ever, the RM is idle at once.
  json status;
  const bool idle = wait_scheduling_state(f, "no_workmap", status);
  INFO(status.dump());
  REQUIRE(idle);
  const auto& s = status["scheduling"];
  CHECK(s["for_ms"].get<std::uint64_t>() > 0);
  CHECK(s["limit_ms"].get<std::uint64_t>() == 20000);  // 2 x the embedded default's 10 s orchestrator period
  const auto text = s["text"].get<std::string>();
  CHECK(text.rfind("idle: no work map for ", 0) == 0);
  CHECK(text.find("(none since rmbus started)") != std::string::npos);
  CHECK(status["cycle"] == 0);

  // The text form says the same on its own line.
  const auto plain = f.admin({"status"});
  INFO(plain.output);
  CHECK(plain.output.find("\nscheduling  idle: no work map for ") != std::string::npos);

  // rmbus-top --once: the picture, with the reason, and exit 0 (it used to exit 3 asking "is rmbus running").
  const auto top = ts::run_to_end(
      RMBUS_TOP_BIN, {"--once", "--bus-sub", f.bus_sub(), "--timeout-ms", "15000", "--width", "160"}, 30s);
  INFO(top.output);
  CHECK(top.status == std::optional<int>{0});
  CHECK(top.output.find("rmbus-top  NOT SCHEDULING  no rm.state yet  nodes 0") != std::string::npos);
  CHECK(top.output.find("\nscheduling  idle: no work map for ") != std::string::npos);
  CHECK(top.output.find("is rmbus running") == std::string::npos);
}

TEST_CASE("status says scheduling while work maps come, and idle with the last round once they stop") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(rmbus::e2e::job("alice-1", "alice", "normal", 1024));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") > 0; }, deadline));
  json status = status_of(f);
  INFO(status.dump());
  CHECK(scheduling_state(status) == "scheduling");

  // The orchestrator stops; its agents go on. After 2 configured periods (20 s) and at most one report period
  // (5 s), the RM says it is idle, that it had maps, and which round was the last.
  c.pause_maps(true);
  const bool idle = wait_scheduling_state(f, "no_workmap", status);
  INFO(status.dump());
  REQUIRE(idle);
  const auto text = status["scheduling"]["text"].get<std::string>();
  CHECK(text.find("(the last round was " + std::to_string(status["cycle"].get<std::uint64_t>()) + ")") !=
        std::string::npos);
  CHECK(status["scheduling"]["for_ms"].get<std::uint64_t>() >= 20000);

  // Maps again: scheduling again.
  c.pause_maps(false);
  CHECK(eventually([&] { return scheduling_state(status_of(f)) == "scheduling"; }, deadline));
}
