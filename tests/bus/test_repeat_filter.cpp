// The forwarder's repeat filter (bus/repeat_filter.hpp) without sockets: the gap and the burst are respected,
// the table's size is fixed whatever the keys, and a collision with another key forwards rather than sheds.

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <string>

#include "bus/repeat_filter.hpp"

using rmbus::bus::key_hash;
using rmbus::bus::repeat_filter;
using namespace std::chrono_literals;

namespace {
constexpr std::int64_t ms = 1'000'000;  // nanoseconds
}

TEST_CASE("repeat filter: a key's message within min_gap of its last forwarded one is shed, at min_gap it is forwarded") {
  repeat_filter f{64, 40ms};
  const auto x1 = key_hash("x1");
  CHECK(f.admit(x1, 0));            // first: forwarded, remembered at t=0
  CHECK_FALSE(f.admit(x1, 1 * ms));  // 1 ms after it: shed
  CHECK_FALSE(f.admit(x1, 39 * ms));  // 39 < 40: still a repeat
  // Shed messages do not move the mark: the gap counts from the last FORWARDED one (t=0), so at 40 ms it passes.
  CHECK(f.admit(x1, 40 * ms));
  CHECK_FALSE(f.admit(x1, 79 * ms));  // 79 - 40 = 39 < 40
  CHECK(f.admit(x1, 80 * ms));
}

TEST_CASE("repeat filter: a flood of one key at 1 per microsecond lets through one per min_gap") {
  // 1 s of one key every microsecond = 1,000,000 offered; with a 37 ms gap, forwarded at t = 0, 37, 74, ...,
  // 999 ms: floor(999 / 37) + 1 = 28.
  repeat_filter f{4096, 37ms};
  const auto x1 = key_hash("x1");
  int forwarded = 0;
  for (std::int64_t t = 0; t < 1'000 * ms; t += 1'000) forwarded += f.admit(x1, t) ? 1 : 0;
  CHECK(forwarded == 28);
}

TEST_CASE("repeat filter: with burst 2 a quiet key may send one extra at once, then one per min_gap") {
  repeat_filter f{64, 40ms, 2};
  const auto a1 = key_hash("a1");
  CHECK(f.admit(a1, 0));             // tat = 40
  CHECK(f.admit(a1, 5 * ms));        // 5 >= 40 - 40: the burst's second; tat = 80
  CHECK_FALSE(f.admit(a1, 6 * ms));  // 6 < 80 - 40: spent
  CHECK_FALSE(f.admit(a1, 39 * ms));
  CHECK(f.admit(a1, 40 * ms));       // 40 >= 40; tat = 120
  CHECK_FALSE(f.admit(a1, 41 * ms));  // 41 < 80
  // A periodic sender (every 200 ms) with one extra right after each periodic one loses nothing:
  // at 240: tat = max(120, 240) + 40 = 280; the extra at 245: 245 >= 280 - 40 passes, tat = 320.
  CHECK(f.admit(a1, 240 * ms));
  CHECK(f.admit(a1, 245 * ms));
  CHECK(f.admit(a1, 440 * ms));
  CHECK(f.admit(a1, 445 * ms));
}

TEST_CASE("repeat filter: with burst 2 a flood is held to one per min_gap after its first two") {
  // 1 s of one key every microsecond with a 37 ms gap: forwarded at t = 0 and 1 us (the burst), then at 37,
  // 74, ..., 999 ms: 2 + floor(999 / 37) = 2 + 27 = 29.
  repeat_filter f{4096, 37ms, 2};
  const auto x1 = key_hash("x1");
  int forwarded = 0;
  for (std::int64_t t = 0; t < 1'000 * ms; t += 1'000) forwarded += f.admit(x1, t) ? 1 : 0;
  CHECK(forwarded == 29);
}

TEST_CASE("repeat filter: other keys are never shed by one key's flood") {
  repeat_filter f{4096, 37ms};
  const auto x1 = key_hash("x1");
  int a1_forwarded = 0;
  // x1 every microsecond; a1 every 200 ms (a real node's heartbeat period): 5 heartbeats in 1 s, all forwarded.
  for (std::int64_t t = 0; t < 1'000 * ms; t += 1'000) {
    (void)f.admit(x1, t);
    if (t % (200 * ms) == 0) a1_forwarded += f.admit(key_hash("a1"), t) ? 1 : 0;
  }
  CHECK(a1_forwarded == 5);
}

TEST_CASE("repeat filter: on a slot collision with another key the message is forwarded, and the flooder keeps its slot") {
  // One slot: every key collides.
  repeat_filter f{1, 40ms};
  const auto x1 = key_hash("x1");
  const auto a1 = key_hash("a1");
  CHECK(f.admit(x1, 0));          // x1 takes the slot
  CHECK(f.admit(a1, 1 * ms));     // a1 collides with a fresh x1: forwarded, x1 keeps the slot
  CHECK(f.admit(a1, 2 * ms));     // a1 again, 1 ms later: still forwarded (never shed on another key's slot)
  CHECK_FALSE(f.admit(x1, 3 * ms));  // x1's repeats are still shed: its slot was not taken from it
  // At 40 ms x1 is stale (its next message would be forwarded anyway): a1 may take the slot over.
  CHECK(f.admit(a1, 40 * ms));
  CHECK_FALSE(f.admit(a1, 41 * ms));  // now a1's own repeat within 40 ms is shed
  CHECK(f.admit(x1, 42 * ms));        // and x1, on a1's fresh slot, is forwarded
}

TEST_CASE("repeat filter: a storm of distinct keys keeps the table at its size and never sheds a real node") {
  repeat_filter f{4096, 37ms};
  const auto a1 = key_hash("a1");
  REQUIRE(f.admit(a1, 0));
  int storm_shed = 0;
  int a1_shed = 0;
  // 1,000,000 distinct invented names in 1 s, a1 every 200 ms among them.
  for (std::int64_t i = 0; i < 1'000'000; ++i) {
    const std::int64_t t = i * 1'000;
    storm_shed += f.admit(key_hash("storm-" + std::to_string(i)), t) ? 0 : 1;
    if (t % (200 * ms) == 0 && t > 0) a1_shed += f.admit(a1, t) ? 0 : 1;
  }
  CHECK(storm_shed == 0);  // every name came once: nothing is a repeat
  CHECK(a1_shed == 0);     // a1's slot may be another's, then a1 is forwarded; it is never shed
  CHECK(f.slots() == 4096);
  CHECK(f.used() <= 4096);
}

TEST_CASE("repeat filter: min_gap 0 sheds nothing, and a new gap applies at once") {
  repeat_filter f{16, 0ms};
  const auto x1 = key_hash("x1");
  CHECK(f.admit(x1, 0));
  CHECK(f.admit(x1, 0));
  f.set_min_gap(10ms);
  CHECK(f.admit(x1, 1 * ms));  // remembered now
  CHECK_FALSE(f.admit(x1, 2 * ms));
  f.set_min_gap(0ms);
  CHECK(f.admit(x1, 2 * ms));
}

TEST_CASE("repeat filter: a table size that is not a power of two, a negative gap or a burst outside 1..64 is refused") {
  CHECK_THROWS_AS((repeat_filter{0, 1ms}), std::invalid_argument);
  CHECK_THROWS_AS((repeat_filter{100, 1ms}), std::invalid_argument);
  CHECK_THROWS_AS((repeat_filter{64, -1ms}), std::invalid_argument);
  CHECK_THROWS_AS((repeat_filter{64, 1ms, 0}), std::invalid_argument);
  CHECK_THROWS_AS((repeat_filter{64, 1ms, 65}), std::invalid_argument);
}

TEST_CASE("key_hash is FNV-1a 64") {
  // FNV-1a of "" is the offset basis; of "a": (0xcbf29ce484222325 ^ 0x61) * 0x100000001b3 mod 2^64.
  CHECK(key_hash("") == 0xcbf29ce484222325ull);
  CHECK(key_hash("a") == 0xaf63dc4c8601ec8cull);
}
