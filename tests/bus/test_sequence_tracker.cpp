// Sequence accounting and topic checks without sockets: the rules of bus/sequence_tracker.hpp and
// bus/frame_checks.hpp, case by case.

#include <catch2/catch.hpp>

#include "bus/frame_checks.hpp"
#include "messages/utf8.hpp"
#include "bus/log_level.hpp"
#include "bus/sequence_tracker.hpp"

using rmbus::bus::seq_verdict;
using rmbus::bus::sequence_tracker;

TEST_CASE("a stream's first message is never a gap, whatever its seq") {
  sequence_tracker t;
  std::uint64_t missing = 99;
  // A late joiner first sees seq 57: messages 1..56 went by before it subscribed; not charged.
  CHECK(t.observe("rm", "rm.state", 57, missing) == seq_verdict::first);
  CHECK(missing == 0);
  CHECK(t.observe("rm", "rm.state", 58, missing) == seq_verdict::in_order);
  CHECK(missing == 0);
}

TEST_CASE("a jump in seq is a gap counting the skipped numbers") {
  sequence_tracker t;
  std::uint64_t missing = 0;
  t.observe("rm", "rm.state", 1, missing);
  // 1 then 5: seqs 2, 3, 4 never arrived -> 5 - 1 - 1 = 3 missing.
  CHECK(t.observe("rm", "rm.state", 5, missing) == seq_verdict::gap);
  CHECK(missing == 3);
  CHECK(t.observe("rm", "rm.state", 6, missing) == seq_verdict::in_order);
}

TEST_CASE("seq at or below the last seen is a publisher restart, and the stream starts afresh") {
  sequence_tracker t;
  std::uint64_t missing = 0;
  t.observe("agent-1", "agent.heartbeat", 40, missing);
  CHECK(t.observe("agent-1", "agent.heartbeat", 1, missing) == seq_verdict::restart);
  CHECK(missing == 0);
  // The new stream continues from 1: 2 is in order, not "still below 40".
  CHECK(t.observe("agent-1", "agent.heartbeat", 2, missing) == seq_verdict::in_order);
  // A repeated seq is also a new incarnation (a running publisher never repeats one).
  CHECK(t.observe("agent-1", "agent.heartbeat", 2, missing) == seq_verdict::restart);
}

TEST_CASE("streams are separate per src and per topic") {
  sequence_tracker t;
  std::uint64_t missing = 0;
  t.observe("a", "x", 10, missing);
  // Same topic, other src; same src, other topic: both are new streams, not restarts of ("a", "x").
  CHECK(t.observe("b", "x", 1, missing) == seq_verdict::first);
  CHECK(t.observe("a", "y", 1, missing) == seq_verdict::first);
  CHECK(t.observe("a", "x", 11, missing) == seq_verdict::in_order);
  // ("a","xy") must not be confused with ("ax","y").
  CHECK(t.observe("ax", "y", 1, missing) == seq_verdict::first);
  CHECK(t.observe("a", "xy", 5, missing) == seq_verdict::first);
  CHECK(t.streams() == 5);
}

TEST_CASE("the stream table is bounded, and streams beyond it are untracked") {
  sequence_tracker t{2};
  std::uint64_t missing = 0;
  CHECK(t.observe("a", "t", 1, missing) == seq_verdict::first);
  CHECK(t.observe("b", "t", 1, missing) == seq_verdict::first);
  CHECK(t.observe("c", "t", 1, missing) == seq_verdict::untracked);
  CHECK(t.observe("c", "t", 9, missing) == seq_verdict::untracked);
  CHECK(t.streams() == 2);
  // Known streams keep being tracked.
  CHECK(t.observe("a", "t", 3, missing) == seq_verdict::gap);
  CHECK(missing == 1);
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
