// High availability over two forwarders (issue 21, "the bus must survive the host too"; docs/bus.md "Several
// forwarders", docs/reliability.md "HA"): two rmbus candidates, each with its embedded forwarder (the RM
// hosts of the deployment), and the fake cluster (agents, a fencing orchestrator, an observer) connected to
// both. The active is SIGKILLed, its forwarder with it; the standby takes over through its own forwarder.
// Waits are on published messages and on what rmbus-admin prints, with deadlines; nothing asserts a timing.
#include <algorithm>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <optional>

#include "messages/ha_ballot.hpp"
#include "tests/e2e/ha_checks.hpp"
#include "tests/e2e/ha_fixture.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::ha_fixture;
using rmbus::e2e::ha_options;
using rmbus::e2e::job;
using rmbus::e2e::metric;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;

namespace {

constexpr auto deadline = 60s;

std::size_t events_of(const ts::fake_cluster& c, const std::string& kind) {
  const auto ev = c.events();
  return static_cast<std::size_t>(
      std::count_if(ev.begin(), ev.end(), [&](const auto& e) { return e.kind == kind; }));
}

// Every node of ha_fixture's cluster reported up.
bool all_up(const msg::rm_nodes& n) {
  std::size_t up = 0;
  for (const auto& r : n.nodes)
    if (r.state == msg::node_state::up) ++up;
  return up >= 6;
}

}  // namespace

TEST_CASE(
    "HA, two forwarders: the active and its forwarder SIGKILLed together, the standby takes over through "
    "the other, no node missing and nothing counted twice",
    "[ha][faults]") {
  ha_options o;
  o.own_forwarders = true;
  ha_fixture f{o};
  auto& c = f.cluster();
  c.start();
  std::string old_instance;
  const auto active = f.wait_active(deadline, &old_instance);
  REQUIRE(active.has_value());
  const std::size_t standby = 1 - *active;
  const auto running = rmbus::e2e::running_work(f, deadline);
  REQUIRE(c.wait_nodes(all_up, deadline));
  const auto old_epoch = c.accepted_epoch().value_or(0);
  REQUIRE(old_epoch >= 1);
  CHECK(f.status_value(standby, "role") == "standby");
  // Both forwarders carry the bus: the cluster and the standby receive every message twice and drop a copy.
  const auto before = c.bus_stats();
  CHECK(before.duplicates > 0);
  CHECK(metric(f, standby, "rmbus_bus_duplicate_messages_total").value_or(0) > 0);
  CHECK(c.states_repeated() == 0);

  const auto killed_at = std::chrono::steady_clock::now();
  f.signal(*active, SIGKILL);  // its embedded forwarder dies with it
  REQUIRE(f.wait(*active, 10s).has_value());
  const auto first = rmbus::e2e::first_acted_above(c, old_epoch, deadline);
  REQUIRE(first.has_value());
  const auto to_first_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killed_at);
  REQUIRE(c.wait_state(
      [&](const msg::rm_state& s) { return rmbus::e2e::recovered(s, running) == running.size(); }, deadline));
  const auto new_epoch = c.accepted_epoch().value_or(0);
  CHECK(new_epoch == rmbus::messages::next_ballot(old_epoch, standby));  // candidate i has rank i
  INFO(f.admin(standby, {"status"}).output);
  CHECK(f.status_value(standby, "role") == "active");
  CHECK(c.wait_event(
             [&](const msg::rm_event& e) {
               return e.kind == "ha_takeover" && e.detail.count("previous") &&
                      e.detail.at("previous") == old_instance;
             },
             10s)
            .has_value());

  // The cluster carries on through the surviving forwarder: new work is scheduled under the new epoch's ids,
  // and rounds go on for many heartbeat intervals (300 ms: a node silent that long goes missing).
  c.submit(job("dave-1", "dave", "normal", 1024, 4));
  c.submit(job("erin-1", "erin", "beta-normal", 2048, 2));
  std::optional<msg::rm_state> with_new;
  REQUIRE(c.wait_state(
      [&](const msg::rm_state& s) {
        if (ts::active_shares(s, "dave-1") != 4 || ts::active_shares(s, "erin-1") != 2) return false;
        with_new = s;
        return true;
      },
      deadline));
  REQUIRE(with_new.has_value());
  const auto* dave = ts::find_job(*with_new, "dave-1");
  REQUIRE(dave != nullptr);
  for (const auto& sh : dave->shares)
    CHECK(sh.id.find("-e" + std::to_string(new_epoch) + ".") != std::string::npos);
  for (int i = 0; i < 10; ++i) REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  REQUIRE(c.wait_nodes(all_up, deadline));

  // No node was reported missing or down, by the dead active or the new one, and nothing was evicted.
  CHECK(events_of(c, "node_missing") == 0);
  CHECK(events_of(c, "node_down") == 0);
  CHECK(events_of(c, "evict") == 0);
  const auto last = c.last_state();
  REQUIRE(last.has_value());
  CHECK(rmbus::e2e::recovered(*last, running) == running.size());
  CHECK(ts::double_bookings(*last, rmbus::e2e::node_quanta()).empty());
  // Nothing counted twice: no rm.state handed to the orchestrator twice, the new active's heartbeat count
  // never above what the agents sent (read before and after, the count in between), no gap, no restart.
  CHECK(c.states_repeated() == 0);
  const auto received = metric(f, standby, "rmbus_heartbeats_received_total");
  const auto sent = c.heartbeats_sent();
  REQUIRE(received.has_value());
  CHECK(*received > 0);
  CHECK(*received <= static_cast<double>(sent));
  const auto after = c.bus_stats();
  CHECK(after.gaps == 0);
  CHECK(after.restarts == 0);
  // No schedule of the dead active's epoch acted on once the new one's was.
  rmbus::e2e::check_fenced(c, old_epoch, *first);
  std::printf(
      "[figures] two forwarders: SIGKILL of the active and its forwarder -> first rm.state of epoch %llu "
      "after %lld ms; %zu processes recovered with their ids; %llu copies dropped by the cluster; "
      "heartbeats sent %llu, counted by the new active %.0f\n",
      static_cast<unsigned long long>(new_epoch), static_cast<long long>(to_first_ms.count()), running.size(),
      static_cast<unsigned long long>(after.duplicates), static_cast<unsigned long long>(sent), *received);
}
