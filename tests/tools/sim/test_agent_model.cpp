// The simulated agents: heartbeat schedules with seeded jitter (within bounds, deterministic per seed, each
// node's own), and scripted failures (down, back up, flapping, overlapping).

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "tools/sim/agent_model.hpp"

using namespace rmbus::sim;

namespace {

std::vector<node_def> nodes(int n) {
  std::vector<node_def> out;
  for (int i = 0; i < n; ++i) out.push_back({"n" + std::to_string(i), 4096, ""});
  return out;
}

// Heartbeat times per node, advancing 1 ms at a time so that each heartbeat is seen at its due time.
std::map<std::size_t, std::vector<std::int64_t>> beats(agent_model& m, std::int64_t until) {
  std::map<std::size_t, std::vector<std::int64_t>> out;
  for (std::int64_t t = 0; t <= until; ++t)
    for (std::size_t i : m.advance(t).heartbeats) out[i].push_back(t);
  return out;
}

}  // namespace

TEST_CASE("agents: every interval is period +- jitter, the first beat within one period") {
  agent_model m{nodes(10), {}, {200, 50}, 1};
  const auto b = beats(m, 20000);
  REQUIRE(b.size() == 10);
  for (const auto& [node, times] : b) {
    INFO("node " << node);
    CHECK(times.front() >= 0);
    CHECK(times.front() < 200);
    for (std::size_t k = 1; k < times.size(); ++k) {
      CHECK(times[k] - times[k - 1] >= 150);
      CHECK(times[k] - times[k - 1] <= 250);
    }
    // 20 s at a mean of 200 ms is about 100 beats; the bounds of 250 and 150 ms give 80..134.
    CHECK(times.size() >= 80);
    CHECK(times.size() <= 134);
  }
}

TEST_CASE("agents: the jitter really varies the intervals") {
  agent_model m{nodes(1), {}, {200, 50}, 3};
  const auto times = beats(m, 10000)[0];
  std::set<std::int64_t> intervals;
  for (std::size_t k = 1; k < times.size(); ++k) intervals.insert(times[k] - times[k - 1]);
  // 49 intervals drawn from 101 values: all equal would mean no jitter at all.
  CHECK(intervals.size() > 10);
}

TEST_CASE("agents: no jitter gives exactly the period") {
  agent_model m{nodes(2), {}, {100, 0}, 5};
  const auto b = beats(m, 1000);
  for (const auto& [node, times] : b)
    for (std::size_t k = 1; k < times.size(); ++k) CHECK(times[k] - times[k - 1] == 100);
}

TEST_CASE("agents: the same seed gives the same schedule, another seed another") {
  agent_model a{nodes(5), {}, {200, 50}, 42}, b{nodes(5), {}, {200, 50}, 42}, c{nodes(5), {}, {200, 50}, 43};
  const auto ba = beats(a, 5000), bb = beats(b, 5000), bc = beats(c, 5000);
  CHECK(ba == bb);
  CHECK_FALSE(ba == bc);
}

TEST_CASE("agents: a node's schedule does not depend on the nodes listed after it") {
  agent_model small{nodes(3), {}, {200, 50}, 9}, big{nodes(6), {}, {200, 50}, 9};
  const auto s = beats(small, 5000), b = beats(big, 5000);
  for (std::size_t i = 0; i < 3; ++i) CHECK(s.at(i) == b.at(i));
}

TEST_CASE("agents: a node down sends nothing, and comes back on its own schedule") {
  // n0 is down from 1000 ms until 3000 ms.
  agent_model m{nodes(2), {{"n0", 1000, 3000, std::nullopt}}, {100, 0}, 1};
  std::vector<node_transition> transitions;
  std::map<std::size_t, std::vector<std::int64_t>> b;
  for (std::int64_t t = 0; t <= 5000; ++t) {
    auto step = m.advance(t);
    for (auto i : step.heartbeats) b[i].push_back(t);
    transitions.insert(transitions.end(), step.transitions.begin(), step.transitions.end());
  }
  CHECK(transitions == std::vector<node_transition>{{1000, 0, false}, {3000, 0, true}});
  for (auto t : b[0]) CHECK((t < 1000 || t >= 3000));
  // n0 beats every 100 ms outside [1000, 3000): 10 before, 20 from 3000 to 4999 (+1 if one falls on 5000).
  CHECK(b[0].size() >= 30);
  CHECK(b[0].size() <= 31);
  CHECK(b[1].size() >= 50);  // n1 never stops
  CHECK(m.is_up(0, 999));
  CHECK_FALSE(m.is_up(0, 1000));
  CHECK_FALSE(m.is_up(0, 2999));
  CHECK(m.is_up(0, 3000));
  CHECK(m.nodes_up(2000) == 1);
}

TEST_CASE("agents: flapping alternates every flap period until up_at") {
  // Down at 1000 for 500 ms, up 500 ms, down again at 2000 ... until 2200, then up for good.
  agent_model m{nodes(1), {{"n0", 1000, 2200, 500}}, {100, 0}, 1};
  CHECK(m.advance(0).transitions.empty());
  // One big step: every transition in (0, 10000] is listed in time order.
  const auto step = m.advance(10000);
  CHECK(step.transitions ==
        std::vector<node_transition>{{1000, 0, false}, {1500, 0, true}, {2000, 0, false}, {2200, 0, true}});
  CHECK(m.is_up(0, 1700));
  CHECK_FALSE(m.is_up(0, 2100));
  CHECK(m.is_up(0, 9000));
}

TEST_CASE("agents: flapping without an end goes on for ever") {
  agent_model m{nodes(1), {{"n0", 0, std::nullopt, 1000}}, {100, 0}, 1};
  // Down in even periods [0,1000), [2000,3000), ...; up in odd ones.
  CHECK_FALSE(m.is_up(0, 0));
  CHECK(m.is_up(0, 1000));
  // 1,000,500 ms is in period 1000 (even: down); 1,001,500 in period 1001 (odd: up).
  CHECK_FALSE(m.is_up(0, 1000500));
  CHECK(m.is_up(0, 1001500));
  // The first step [0, 0] already reports the failure at time 0.
  CHECK(m.advance(0).transitions == std::vector<node_transition>{{0, 0, false}});
  const auto step = m.advance(4500);
  CHECK(step.transitions ==
        std::vector<node_transition>{{1000, 0, true}, {2000, 0, false}, {3000, 0, true}, {4000, 0, false}});
  CHECK(m.next_due_ms() <= 4600);  // the next heartbeat (due in 100 ms) comes before the next change at 5000
}

TEST_CASE("agents: overlapping failures of one node combine") {
  // Down 1000-2000 and 1500-3000: down from 1000 to 3000; the changes at 1500 and 2000 change nothing.
  agent_model m{nodes(1), {{"n0", 1000, 2000, std::nullopt}, {"n0", 1500, 3000, std::nullopt}}, {100, 0}, 1};
  const auto step = m.advance(5000);
  CHECK(step.transitions == std::vector<node_transition>{{1000, 0, false}, {3000, 0, true}});
}

TEST_CASE("agents: next_due_ms is the earliest heartbeat or change") {
  agent_model m{nodes(1), {{"n0", 50, std::nullopt, std::nullopt}}, {1000, 0}, 1};
  m.advance(0);
  // The first beat falls somewhere in [0, 1000); the failure at 50 is the next thing unless the beat is
  // first.
  CHECK(m.next_due_ms() <= 1000);
  m.advance(60);
  CHECK(m.next_due_ms() >= 61);
}

TEST_CASE("agents: a long stall does not replay thousands of heartbeats") {
  agent_model m{nodes(1), {}, {10, 0}, 1};
  m.advance(0);
  // 1,000,000 ms at a 10 ms period would be 100,000 beats; at most 1000 per step are replayed.
  CHECK(m.advance(1000000).heartbeats.size() <= 1000);
  CHECK(m.next_due_ms() > 1000000);
}
