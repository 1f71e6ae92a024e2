// The subscriber's table of recently handed-on keys: fixed in size, a live key keeps its slot against a storm
// of others, a stale one gives it up.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "bus/known_keys.hpp"

using rmbus::bus::known_keys;

namespace {
constexpr std::int64_t window = 1000;
}

TEST_CASE("a key is known for the window after it was heard, and not after") {
  known_keys k{16};
  CHECK_FALSE(k.known(7, 0, window));
  k.heard(7, 100, window);
  CHECK(k.known(7, 100, window));
  CHECK(k.known(7, 1099, window));   // 999 ns after: within
  CHECK_FALSE(k.known(7, 1100, window));  // 1000 ns after: out
  k.heard(7, 1500, window);  // heard again: known again
  CHECK(k.known(7, 2000, window));
}

TEST_CASE("a colliding key cannot take a live key's slot, and takes a stale one") {
  known_keys k{16};
  // 3 and 3 + 16 share slot 3 of 16.
  k.heard(3, 0, window);
  k.heard(19, 500, window);  // the live key keeps its slot
  CHECK(k.known(3, 500, window));
  CHECK_FALSE(k.known(19, 500, window));
  k.heard(19, 1200, window);  // 3 was last heard 1200 ns ago: stale, its slot goes
  CHECK(k.known(19, 1200, window));
  CHECK_FALSE(k.known(3, 1200, window));
}

TEST_CASE("a storm of distinct keys never pushes out a key heard every interval") {
  known_keys k{1024};
  const std::uint64_t real = 42;
  for (std::int64_t t = 0; t < 100000; t += 10) {
    if (t % 300 == 0) k.heard(real, t, window);  // every 300 ns, within the window of 1000
    k.heard(static_cast<std::uint64_t>(t) * 2654435761u + 1, t, window);  // a new name every 10 ns
    REQUIRE((t < 300 || k.known(real, t, window)));
  }
}

TEST_CASE("the table size must be a power of two") {
  CHECK_THROWS_AS(known_keys{0}, std::invalid_argument);
  CHECK_THROWS_AS(known_keys{100}, std::invalid_argument);
  CHECK_NOTHROW(known_keys{128});
}
