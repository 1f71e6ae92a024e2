// The keyed hash of senders' names (bus/keyed_hash.hpp): one instance hashes a name the same way every time;
// two instances (two keys) hash the same names differently, so no name list collides in every process.

#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "bus/keyed_hash.hpp"

using rmbus::bus::keyed_hash;

TEST_CASE("a keyed hash is stable within its instance and tells names apart") {
  const keyed_hash h;
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 10'000; ++i) {
    const auto name = "node-" + std::to_string(i);
    CHECK(h(name) == h(std::string_view{name}));
    seen.insert(h(name));
  }
  CHECK(seen.size() == 10'000);  // a 64-bit collision among 10,000 names would be a broken hash
  CHECK(h("") == h(std::string_view{}));
  CHECK(h("a") != h("b"));
}

TEST_CASE("two instances hash the same names under different keys") {
  const keyed_hash one, other;
  int equal = 0;
  for (int i = 0; i < 64; ++i) {
    const auto name = "node-" + std::to_string(i);
    if (one(name) == other(name)) ++equal;
  }
  // With an unkeyed hash all 64 would be equal; with two random keys a single equal one has odds of 2^-58.
  CHECK(equal == 0);
}
