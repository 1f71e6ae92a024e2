// Why the RM runs no rounds (actors/not_scheduling_watch.hpp) and the rm.events `not_scheduling` that carries
// it (messages/not_scheduling.hpp): each reason from its facts, the order they are judged in, the event read
// back, aged, and described.
#include <catch2/catch.hpp>

#include "actors/not_scheduling_watch.hpp"

using namespace rmbus::actors;
namespace msg = rmbus::messages;

namespace {

// An RM started at t = 100 000 with the embedded default's timings: a 60 s start-up window (2 x 30 s
// heartbeats), a work map every 10 s, rounds time out after 3 s.
scheduling_facts started_at_100s(std::int64_t now_ms) {
  scheduling_facts f;
  f.now_ms = now_ms;
  f.started_ms = 100000;
  f.window_ms = 60000;
  f.workmap_period_ms = 10000;
  f.round_timeout_ms = 3000;
  return f;
}

}  // namespace

TEST_CASE("in the start-up window the RM is starting, with the time left", "[actors][not_scheduling]") {
  auto f = started_at_100s(118000);
  const auto why = why_not_scheduling(f);
  REQUIRE(why.has_value());
  CHECK(why->reason == msg::not_scheduling_reasons::starting);
  CHECK(why->for_ms == 18000);
  CHECK(why->limit_ms == 60000);
  CHECK(why->left_ms == 42000);  // 100 000 + 60 000 - 118 000
  CHECK(msg::describe(*why) ==
        "starting: in the start-up stability window, scheduling starts in 42 s (a 60 s window; at once on a "
        "work "
        "map naming live processes)");
}

TEST_CASE("ready without a work map for two periods is idle, and not with a recent map or a round in flight",
          "[actors][not_scheduling]") {
  auto f = started_at_100s(175000);
  f.ready = true;
  // No map since start: idle at once when the window ends, counted from start.
  auto why = why_not_scheduling(f);
  REQUIRE(why.has_value());
  CHECK(why->reason == msg::not_scheduling_reasons::no_workmap);
  CHECK(why->for_ms == 75000);
  CHECK(why->limit_ms == 20000);  // 2 x 10 s
  CHECK_FALSE(why->ever);
  CHECK(msg::describe(*why) ==
        "idle: no work map for 75 s (none since rmbus started): is the orchestrator "
        "publishing to this bus?");
  // A map 20 s ago (two periods exactly) still counts as scheduling; 20.001 s does not.
  f.last_map_ms = 155000;
  CHECK_FALSE(why_not_scheduling(f).has_value());
  f.now_ms = 175001;
  f.cycle = 12;
  why = why_not_scheduling(f);
  REQUIRE(why.has_value());
  CHECK(why->for_ms == 20001);
  CHECK(why->ever);
  CHECK(msg::describe(*why) ==
        "idle: no work map for 20 s (the last round was 12): is the orchestrator "
        "publishing to this bus?");
  // A round in flight (within its timeout) is scheduling, whatever the map's age.
  f.round_started_ms = 174000;
  CHECK_FALSE(why_not_scheduling(f).has_value());
}

TEST_CASE("a round in flight past its timeout and a second is overdue, before any other reason",
          "[actors][not_scheduling]") {
  auto f = started_at_100s(130000);  // still in the window: overdue is judged first
  f.cycle = 7;
  f.round_started_ms = 126000;  // 4 000 ms = 3 000 + 1 000: not yet
  auto why = why_not_scheduling(f);
  REQUIRE(why.has_value());
  CHECK(why->reason == msg::not_scheduling_reasons::starting);
  f.round_started_ms = 125999;  // 4 001 ms
  why = why_not_scheduling(f);
  REQUIRE(why.has_value());
  CHECK(why->reason == msg::not_scheduling_reasons::round_overdue);
  CHECK(why->for_ms == 4001);
  CHECK(why->limit_ms == 3000);
  CHECK(why->cycle == 7);
  CHECK(msg::describe(*why) == "stuck: round 7 started 4.0 s ago and is not published (round timeout 3.0 s)");
}

TEST_CASE("the event reads back, ages, and a malformed one is not taken", "[actors][not_scheduling]") {
  msg::not_scheduling n{"starting", 18000, 60000, 42000, 0, false};
  const auto e = msg::to_event(n);
  CHECK(e.kind == "not_scheduling");
  CHECK(e.detail.at("text") == msg::describe(n));
  REQUIRE(msg::not_scheduling_of(e).has_value());
  CHECK(*msg::not_scheduling_of(e) == n);
  // 50 s later: 68 s in, nothing left (not a negative number).
  const auto later = msg::aged(n, 50000);
  CHECK(later.for_ms == 68000);
  CHECK(later.left_ms == 0);
  auto bad = e;
  bad.detail["for_ms"] = "12x";
  CHECK_FALSE(msg::not_scheduling_of(bad).has_value());
  bad = e;
  bad.detail.erase("reason");
  CHECK_FALSE(msg::not_scheduling_of(bad).has_value());
  CHECK_FALSE(msg::not_scheduling_of(msg::rm_event{"health", {{"reason", "x"}}}).has_value());
  // A reason a newer RM may add is read, and told as it is.
  CHECK(msg::describe(msg::not_scheduling{"paused", 1, 0, 0, 0, false}) == "not scheduling: paused");
}
