// Sequence accounting and topic checks without sockets: the rules of bus/sequence_tracker.hpp and
// bus/frame_checks.hpp, case by case.

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "bus/frame_checks.hpp"
#include "messages/utf8.hpp"
#include "bus/log_level.hpp"
#include "bus/sequence_tracker.hpp"

using rmbus::bus::seq_verdict;
using rmbus::bus::sequence_tracker;

// ts_ms as a publisher stamps it: later for later messages; a copy carries its original's.
constexpr std::uint64_t t0 = 1'700'000'000'000;
std::uint64_t ts(std::uint64_t seq) { return t0 + 10 * seq; }

TEST_CASE("a stream's first message is never a gap, whatever its seq") {
  sequence_tracker t;
  std::uint64_t missing = 99;
  // A late joiner first sees seq 57: messages 1..56 went by before it subscribed; not charged.
  CHECK(t.observe("rm", "rm.state", 57, ts(57), missing) == seq_verdict::first);
  CHECK(missing == 0);
  CHECK(t.observe("rm", "rm.state", 58, ts(58), missing) == seq_verdict::in_order);
  CHECK(missing == 0);
}

TEST_CASE("a jump in seq is a gap counting the skipped numbers") {
  sequence_tracker t;
  std::uint64_t missing = 0;
  t.observe("rm", "rm.state", 1, ts(1), missing);
  // 1 then 5: seqs 2, 3, 4 never arrived -> 5 - 1 - 1 = 3 missing.
  CHECK(t.observe("rm", "rm.state", 5, ts(5), missing) == seq_verdict::gap);
  CHECK(missing == 3);
  CHECK(t.observe("rm", "rm.state", 6, ts(6), missing) == seq_verdict::in_order);
}

// A subscriber connected to several forwarders (the copy rules).
sequence_tracker several(std::size_t max_streams = 65536) { return sequence_tracker{max_streams, sequence_tracker::paths::several}; }

TEST_CASE("one path (one forwarder): seq at or below the last seen is a restart whatever its ts, as before copies existed") {
  sequence_tracker t;
  std::uint64_t missing = 0;
  t.observe("agent-1", "agent.heartbeat", 40, ts(40), missing);
  CHECK(t.observe("agent-1", "agent.heartbeat", 1, ts(1), missing) == seq_verdict::restart);
  CHECK(missing == 0);
  // The new stream continues from 1: 2 is in order, not "still below 40".
  CHECK(t.observe("agent-1", "agent.heartbeat", 2, ts(2), missing) == seq_verdict::in_order);
  // A repeated seq is also a new incarnation (a running publisher never repeats one), even in the same ms.
  CHECK(t.observe("agent-1", "agent.heartbeat", 2, ts(2), missing) == seq_verdict::restart);
  // And a restart's stream takes every later seq, whatever its ts.
  CHECK(t.observe("agent-1", "agent.heartbeat", 3, ts(1), missing) == seq_verdict::in_order);
}

TEST_CASE("several paths: seq at or below the last seen, sent later than anything seen, is a publisher restart") {
  auto t = several();
  std::uint64_t missing = 0;
  t.observe("agent-1", "agent.heartbeat", 40, ts(40), missing);
  CHECK(t.observe("agent-1", "agent.heartbeat", 1, ts(41), missing) == seq_verdict::restart);
  CHECK(missing == 0);
  // The new stream continues from 1: 2 is in order, not "still below 40".
  CHECK(t.observe("agent-1", "agent.heartbeat", 2, ts(42), missing) == seq_verdict::in_order);
  // A repeated seq with a later ts_ms is also a new incarnation (a running publisher never repeats one).
  CHECK(t.observe("agent-1", "agent.heartbeat", 2, ts(43), missing) == seq_verdict::restart);
}

TEST_CASE("a restart is told even when the previous run was shorter than the window") {
  // An agent that sent 5 heartbeats and was restarted sends seq 1, 2, 3 again: all inside the window and
  // all "seen", but sent later than the newest: a restart, and every message of the new run is handed on.
  auto t = several();
  std::uint64_t missing = 0;
  for (std::uint64_t s = 1; s <= 5; ++s) t.observe("node-1", "agent.heartbeat", s, ts(s), missing);
  CHECK(t.observe("node-1", "agent.heartbeat", 1, ts(100), missing) == seq_verdict::restart);
  CHECK(t.observe("node-1", "agent.heartbeat", 2, ts(101), missing) == seq_verdict::in_order);
  CHECK(t.observe("node-1", "agent.heartbeat", 3, ts(102), missing) == seq_verdict::in_order);
  // A copy of the old run's seq 4 still in flight through a slower forwarder: stamped before the restart,
  // so late, although its seq is above the new run's last; the new run goes on unharmed.
  CHECK(t.observe("node-1", "agent.heartbeat", 4, ts(4), missing) == seq_verdict::late);
  CHECK(t.observe("node-1", "agent.heartbeat", 4, ts(103), missing) == seq_verdict::in_order);
  // And the new run's own copies are duplicates.
  CHECK(t.observe("node-1", "agent.heartbeat", 3, ts(102), missing) == seq_verdict::duplicate);
}

TEST_CASE("a restart far below the window is a restart") {
  auto t = several();
  std::uint64_t missing = 0;
  t.observe("orch", "orchestrator.workmap", 10'000, ts(10'000), missing);
  CHECK(t.observe("orch", "orchestrator.workmap", 1, ts(10'001), missing) == seq_verdict::restart);
  CHECK(missing == 0);
}

TEST_CASE("copies through two forwarders in order: each message handed on once, nothing else counted") {
  auto t = several();
  std::uint64_t missing = 0;
  std::vector<seq_verdict> got;
  // Forwarder A's copy, then B's, message by message.
  for (std::uint64_t s = 1; s <= 200; ++s) {
    got.push_back(t.observe("rm:bus", "rm.state", s, ts(s), missing));
    CHECK(missing == 0);
    got.push_back(t.observe("rm:bus", "rm.state", s, ts(s), missing));
  }
  CHECK(std::count(got.begin(), got.end(), seq_verdict::duplicate) == 200);
  CHECK(std::count_if(got.begin(), got.end(), [](auto v) { return rmbus::bus::handed_on(v); }) == 200);
  CHECK(std::count(got.begin(), got.end(), seq_verdict::restart) == 0);
  CHECK(std::count(got.begin(), got.end(), seq_verdict::gap) == 0);
}

TEST_CASE("interleaved copies, one path lagging up to the window: no restart, no gap, nothing twice") {
  auto t = several();
  std::uint64_t missing = 0;
  std::map<seq_verdict, int> count;
  std::vector<std::uint64_t> handed;
  const std::uint64_t lag = sequence_tracker::window - 1;
  // Path A runs `lag` messages ahead of path B.
  for (std::uint64_t s = 1; s <= 500 + lag; ++s) {
    if (s <= 500) {
      const auto v = t.observe("node-7", "agent.heartbeat", s, ts(s), missing);
      ++count[v];
      if (rmbus::bus::handed_on(v)) handed.push_back(s);
    }
    if (s > lag) {
      const auto b = s - lag;
      const auto v = t.observe("node-7", "agent.heartbeat", b, ts(b), missing);
      ++count[v];
      if (rmbus::bus::handed_on(v)) handed.push_back(b);
    }
  }
  CHECK(count[seq_verdict::duplicate] == 500);
  CHECK(count[seq_verdict::restart] == 0);
  CHECK(count[seq_verdict::gap] == 0);
  CHECK(count[seq_verdict::late] == 0);
  REQUIRE(handed.size() == 500);
  for (std::uint64_t i = 0; i < 500; ++i) CHECK(handed[i] == i + 1);  // in order, each once
}

TEST_CASE("a copy lagging beyond the window is late, still never handed on or taken for a restart") {
  auto t = several();
  std::uint64_t missing = 0;
  for (std::uint64_t s = 1; s <= 100; ++s) t.observe("src", "x", s, ts(s), missing);
  CHECK(t.observe("src", "x", 100 - sequence_tracker::window, ts(100 - sequence_tracker::window), missing) ==
        seq_verdict::late);
  CHECK(t.observe("src", "x", 1, ts(1), missing) == seq_verdict::late);
  CHECK(t.observe("src", "x", 101, ts(101), missing) == seq_verdict::in_order);
}

TEST_CASE("a message one forwarder dropped arrives late through the other: counted late, never twice") {
  auto t = several();
  std::uint64_t missing = 0;
  CHECK(t.observe("s", "x", 1, ts(1), missing) == seq_verdict::first);
  // Path A dropped 2 and 3 and delivered 4 first: a gap of 2.
  CHECK(t.observe("s", "x", 4, ts(4), missing) == seq_verdict::gap);
  CHECK(missing == 2);
  // Path B's 1 (a copy), then 2 and 3 (never seen: late, the stream has moved past them), then 4 (a copy).
  CHECK(t.observe("s", "x", 1, ts(1), missing) == seq_verdict::duplicate);
  CHECK(t.observe("s", "x", 2, ts(2), missing) == seq_verdict::late);
  CHECK(t.observe("s", "x", 3, ts(3), missing) == seq_verdict::late);
  CHECK(t.observe("s", "x", 4, ts(4), missing) == seq_verdict::duplicate);
  // A third copy of 2 (a third forwarder) is now known: a duplicate, not late again.
  CHECK(t.observe("s", "x", 2, ts(2), missing) == seq_verdict::duplicate);
  CHECK(t.observe("s", "x", 5, ts(5), missing) == seq_verdict::in_order);
}

TEST_CASE("a late copy after a gap is a duplicate, not a restart") {
  auto t = several();
  std::uint64_t missing = 0;
  t.observe("s", "x", 5, ts(5), missing);
  CHECK(t.observe("s", "x", 9, ts(9), missing) == seq_verdict::gap);  // 6, 7, 8 lost on every path
  CHECK(missing == 3);
  CHECK(t.observe("s", "x", 5, ts(5), missing) == seq_verdict::duplicate);
  CHECK(t.observe("s", "x", 9, ts(9), missing) == seq_verdict::duplicate);
  CHECK(t.observe("s", "x", 10, ts(10), missing) == seq_verdict::in_order);
  // A gap wider than the window forgets what came before it: an old copy is late, not a restart.
  CHECK(t.observe("s", "x", 10 + 2 * sequence_tracker::window, ts(500), missing) == seq_verdict::gap);
  CHECK(t.observe("s", "x", 10, ts(10), missing) == seq_verdict::late);
}

TEST_CASE("messages sent in the same millisecond are told apart by seq") {
  auto t = several();
  std::uint64_t missing = 0;
  for (std::uint64_t s = 1; s <= 10; ++s) CHECK(rmbus::bus::handed_on(t.observe("s", "x", s, t0, missing)));
  for (std::uint64_t s = 1; s <= 10; ++s) CHECK(t.observe("s", "x", s, t0, missing) == seq_verdict::duplicate);
}

TEST_CASE("streams are separate per src and per topic") {
  sequence_tracker t;
  std::uint64_t missing = 0;
  t.observe("a", "x", 10, ts(10), missing);
  // Same topic, other src; same src, other topic: both are new streams, not restarts of ("a", "x").
  CHECK(t.observe("b", "x", 1, ts(1), missing) == seq_verdict::first);
  CHECK(t.observe("a", "y", 1, ts(1), missing) == seq_verdict::first);
  CHECK(t.observe("a", "x", 11, ts(11), missing) == seq_verdict::in_order);
  // ("a","xy") must not be confused with ("ax","y").
  CHECK(t.observe("ax", "y", 1, ts(1), missing) == seq_verdict::first);
  CHECK(t.observe("a", "xy", 5, ts(5), missing) == seq_verdict::first);
  CHECK(t.streams() == 5);
}

TEST_CASE("the stream table is bounded, and streams beyond it are untracked but still deduplicated") {
  {
    sequence_tracker one_path{1};  // one forwarder: untracked streams are handed on unchecked, as before
    std::uint64_t missing = 0;
    CHECK(one_path.observe("a", "t", 1, ts(1), missing) == seq_verdict::first);
    CHECK(one_path.observe("c", "t", 1, ts(1), missing) == seq_verdict::untracked);
    CHECK(one_path.observe("c", "t", 1, ts(1), missing) == seq_verdict::untracked);
  }
  auto t = several(2);
  std::uint64_t missing = 0;
  CHECK(t.observe("a", "t", 1, ts(1), missing) == seq_verdict::first);
  CHECK(t.observe("b", "t", 1, ts(1), missing) == seq_verdict::first);
  CHECK(t.observe("c", "t", 1, ts(1), missing) == seq_verdict::untracked);
  CHECK(t.observe("c", "t", 1, ts(1), missing) == seq_verdict::duplicate);  // its copy
  CHECK(t.observe("c", "t", 9, ts(9), missing) == seq_verdict::untracked);
  // Another stream's message with the same seq and ts is no copy of c's.
  CHECK(t.observe("d", "t", 9, ts(9), missing) == seq_verdict::untracked);
  CHECK(t.streams() == 2);
  // Known streams keep being tracked.
  CHECK(t.observe("a", "t", 3, ts(3), missing) == seq_verdict::gap);
  CHECK(missing == 1);
}

TEST_CASE("hostile names fill the table, not memory: a hundred thousand streams beyond it") {
  auto t = several(1000);
  std::uint64_t missing = 0;
  std::uint64_t untracked = 0, duplicates = 0;
  for (int i = 0; i < 100'000; ++i) {
    const auto name = "fake-" + std::to_string(i);
    const auto v = t.observe(name, "agent.heartbeat", 1, t0, missing);
    if (v == seq_verdict::untracked) ++untracked;
    if (v == seq_verdict::duplicate) ++duplicates;
  }
  CHECK(t.streams() == 1000);
  CHECK(untracked == 99'000);
  CHECK(duplicates == 0);  // distinct streams are never taken for copies of one another
}

TEST_CASE("topics must be non-empty, bounded, valid UTF-8") {
  using rmbus::bus::check_topic;
  CHECK_FALSE(check_topic("rm.state", 256).has_value());
  CHECK_FALSE(check_topic("agent.h\xc3\xa9"
                          "artbeat",
                          256)
                  .has_value());  // é is fine
  CHECK(check_topic("", 256).value() == "empty topic");
  CHECK(check_topic("abcdef", 5).value() == "topic of 6 bytes exceeds the limit of 5");
  CHECK(check_topic("rm.\xff", 256).value() == "topic is not valid UTF-8");
  CHECK_FALSE(rmbus::messages::valid_utf8("\xc0\xaf"));      // overlong '/'
  CHECK_FALSE(rmbus::messages::valid_utf8("\xed\xa0\x80"));  // UTF-16 surrogate
  CHECK_FALSE(rmbus::messages::valid_utf8("\xe2\x82"));      // truncated
  CHECK(rmbus::messages::valid_utf8("\xf0\x9f\x98\x80"));    // 4-byte sequence
}

TEST_CASE("printable_topic escapes hostile bytes and cuts long topics") {
  using rmbus::bus::printable_topic;
  CHECK(printable_topic("rm.state", 64) == "rm.state");
  CHECK(printable_topic("a\x01"
                        "b\xff\\",
                        64) == "a\\x01b\\xff\\x5c");
  CHECK(printable_topic("abcdefgh", 3) == "abc...");
}

TEST_CASE("log levels parse strictly") {
  using rmbus::bus::parse_log_level;
  CHECK(parse_log_level("debug") == spdlog::level::debug);
  CHECK(parse_log_level("error") == spdlog::level::err);
  CHECK(parse_log_level("off") == spdlog::level::off);
  // spdlog's from_str would silently turn these into `off`.
  CHECK_FALSE(parse_log_level("DEBUG").has_value());
  CHECK_FALSE(parse_log_level("verbose").has_value());
  CHECK_FALSE(parse_log_level("").has_value());
}
