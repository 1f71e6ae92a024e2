// free_blocks: DUCC's free-space tables (nSharesByOrder) and its removeSharesByOrder count model.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "core/free_blocks.hpp"

using rmbus::core::free_blocks;

namespace {

free_blocks from_table(const std::vector<std::int64_t>& by_size) {  // index = size, [0] ignored
  free_blocks f(static_cast<int>(by_size.size()) - 1);
  for (std::size_t s = 1; s < by_size.size(); ++s) f.add(static_cast<int>(s), by_size[s]);
  return f;
}

std::vector<std::int64_t> nshares_table(const free_blocks& f) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(f.max_order()) + 1, 0);
  for (int o = 1; o <= f.max_order(); ++o) out[static_cast<std::size_t>(o)] = f.nshares(o);
  return out;
}

// The definition, computed the slow way: sum over p >= o of floor(p / o) * blocks(p).
std::int64_t naive_nshares(const free_blocks& f, int o) {
  std::int64_t sum = 0;
  for (int p = o; p <= f.max_order(); ++p) sum += (p / o) * f.blocks(p);
  return sum;
}

}  // namespace

TEST_CASE("nSharesByOrder: the internals chapter example (free machines plus virtual machines)") {
  // nMachinesByOrder = [0 2 0 1 4], vMachinesByOrder = [0 1 2 0 0] -> blocks [_ 3 2 1 4]
  free_blocks n = from_table({0, 2, 0, 1, 4});
  free_blocks v = from_table({0, 1, 2, 0, 0});
  n += v;
  // o=1: 3*1 + 2*2 + 1*3 + 4*4 = 26
  // o=2: 2*1 (size 2) + 1*1 (size 3) + 4*2 (size 4) = 11
  // o=3: 1*1 + 4*1 = 5;  o=4: 4*1 = 4
  CHECK(nshares_table(n) == std::vector<std::int64_t>{0, 26, 11, 5, 4});
  CHECK(n.total_qshares() == 26);
}

TEST_CASE("nSharesByOrder: NodePool.java's example, 2x16G 1x48G 4x64G at a 16 GB quantum") {
  // machine orders: 16/16 = 1 (x2), 48/16 = 3 (x1), 64/16 = 4 (x4) -> [0 2 0 1 4]
  free_blocks f(4);
  f.add(1, 2);
  f.add(3, 1);
  f.add(4, 4);
  // o=1: 2 + 3 + 16 = 21; o=2: 1 + 4*2 = 9; o=3: 1 + 4 = 5; o=4: 4
  CHECK(nshares_table(f) == std::vector<std::int64_t>{0, 21, 9, 5, 4});
}

TEST_CASE("nshares outside 1..max_order is 0, blocks outside is 0") {
  free_blocks f(4);
  f.add(4, 2);
  CHECK(f.nshares(0) == 0);
  CHECK(f.nshares(5) == 0);
  CHECK(f.blocks(0) == 0);
  CHECK(f.blocks(7) == 0);
}

TEST_CASE("take_shares: an exact multiple is consumed and the rest re-expressed with a residual") {
  // Two blocks of 4, take 3 order-2 nshares. f=1 (size 2): none. f=2 (size 4): available 2*2 = 4 nshares,
  // given 3, rest 1 -> blocks of 4: 1*2/4 = 0, residual 1*2 % 4 = 2 -> one block of 2.
  free_blocks f = from_table({0, 0, 0, 0, 2});
  f.take_shares(2, 3);
  CHECK(f == from_table({0, 0, 1, 0, 0}));
  CHECK(f.nshares(2) == 1);
}

TEST_CASE("take_shares: exact multiples are taken smallest multiple first") {
  // Blocks of 2, 4, 6; take 4 order-2 nshares.
  // f=1 (size 2): 1 nshare, count 4 -> 3. f=2 (size 4): 2 nshares, count -> 1.
  // f=3 (size 6): available 3, given 1, rest 2 -> blocks of 6: 2*2/6 = 0, residual 4 -> one block of 4.
  free_blocks f = from_table({0, 0, 1, 0, 1, 0, 1});
  f.take_shares(2, 4);
  CHECK(f == from_table({0, 0, 0, 0, 1, 0, 0}));
}

TEST_CASE("take_shares: splits other blocks from the order upward when multiples run out") {
  // Blocks: two of 3, one of 5; take 3 order-2 nshares (nshares(2) = 1 + 1 + 2 = 4).
  // Multiples 2 and 4: empty. Split from size 2 up: both 3s yield 1 each (count 3 -> 1), each leaving a 1;
  // the 5 is needed only in part: leaves 5 - 1*2 = 3.
  free_blocks f = from_table({0, 0, 0, 2, 0, 1});
  REQUIRE(f.nshares(2) == 4);
  f.take_shares(2, 3);
  CHECK(f == from_table({0, 2, 0, 1, 0, 0}));
  CHECK(f.nshares(2) == 1);
}

TEST_CASE("take_shares on the internals example: order 3 then splitting the 4s") {
  // Blocks [_ 3 2 1 4]; take 5 order-3 nshares. f=1 (size 3): 1, count -> 4. f=2 would be size 6 > 4.
  // Split: the four 4s yield 1 each, each leaving a 1 -> ones: 3 + 4 = 7, twos stay 2.
  free_blocks f = from_table({0, 3, 2, 1, 4});
  f.take_shares(3, 5);
  CHECK(f == from_table({0, 7, 2, 0, 0}));
  // o=1: 7 + 2*2 = 11 = 26 - 5*3; o=2: 2
  CHECK(nshares_table(f) == std::vector<std::int64_t>{0, 11, 2, 0, 0});
}

TEST_CASE("take_shares of more than there is is a bug, reported, and changes nothing") {
  free_blocks f = from_table({0, 0, 1});
  CHECK_THROWS_AS(f.take_shares(2, 2), std::logic_error);
  CHECK(f == from_table({0, 0, 1}));
  CHECK_THROWS_AS(f.remove(2, 2), std::logic_error);
  f.take_shares(2, 0);  // nothing asked, nothing done
  CHECK(f.blocks(2) == 1);
}

TEST_CASE("grow keeps counts: add beyond max_order grows: remove undoes add") {
  free_blocks f(2);
  f.add(1, 3);
  f.add(2, 1);
  f.grow(8);
  CHECK(f.max_order() == 8);
  CHECK(f.blocks(1) == 3);
  CHECK(f.blocks(2) == 1);
  CHECK(f.nshares(1) == 5);
  f.grow(4);  // never shrinks
  CHECK(f.max_order() == 8);
  f.add(10);  // grows to 10
  CHECK(f.max_order() == 10);
  CHECK(f.nshares(5) == 2);  // floor(10/5) * 1
  f.remove(10);
  CHECK(f.nshares(5) == 0);
  CHECK(f == from_table({0, 3, 1}));  // equality ignores the width of the table
  f.add(0, 5);                        // a size of 0 is no space
  CHECK(f.nshares(1) == 5);
}

TEST_CASE("the cached nshares equals the naive double loop after random add/remove/take (seeded)") {
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    const int max_order = std::uniform_int_distribution<int>(1, 64)(rng);
    free_blocks f(max_order);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int step = 0; step < 300; ++step) {
      const int op = pick(0, 9);
      const int size = pick(1, f.max_order());
      if (op < 4) {
        f.add(size, pick(1, 5));
      } else if (op < 6) {
        if (f.blocks(size) > 0) f.remove(size, pick(1, static_cast<int>(f.blocks(size))));
      } else if (op < 7) {
        f.grow(f.max_order() + pick(0, 3));
      } else {
        const std::int64_t avail = f.nshares(size);
        if (avail == 0) continue;
        const std::int64_t count = std::uniform_int_distribution<std::int64_t>(1, avail)(rng);
        const std::int64_t q_before = f.total_qshares();
        f.take_shares(size, count);
        // The model hands out exactly count * order quanta and exactly count nshares of that order.
        REQUIRE(f.total_qshares() == q_before - count * size);
        REQUIRE(f.nshares(size) == avail - count);
      }
      for (int o = 1; o <= f.max_order(); ++o) {
        CAPTURE(step, o);
        REQUIRE(f.nshares(o) == naive_nshares(f, o));
      }
    }
  }
}

TEST_CASE("a copy is an independent scratch table") {
  free_blocks a = from_table({0, 0, 0, 0, 2});
  free_blocks b = a;
  b.take_shares(4, 1);
  CHECK(a.nshares(4) == 2);
  CHECK(b.nshares(4) == 1);
  CHECK_FALSE(a == b);
}

TEST_CASE("reset: a table used before, wider or narrower, behaves as a new one of the given width") {
  // How Much reuses one table from user to user; a count or cached nshares left from the last user would
  // give this one space it was never awarded.
  free_blocks reused = from_table({0, 3, 2, 1, 4});
  reused.take_shares(3, 2);
  CHECK(reused.nshares(1) > 0);  // the cache holds values now
  const std::vector<std::vector<std::int64_t>> tables{{0, 0, 5}, {0, 1, 0, 0, 0, 0, 0, 2}};  // narrower, wider
  for (const auto& next : tables) {
    reused.reset(static_cast<int>(next.size()) - 1);
    CHECK(reused.max_order() == static_cast<int>(next.size()) - 1);
    CHECK(reused.total_qshares() == 0);
    for (int o = 1; o <= reused.max_order(); ++o) CHECK(reused.nshares(o) == 0);
    for (std::size_t s = 1; s < next.size(); ++s) reused.add(static_cast<int>(s), next[s]);
    const free_blocks fresh = from_table(next);
    CHECK(reused == fresh);
    CHECK(reused.total_qshares() == fresh.total_qshares());
    CHECK(nshares_table(reused) == nshares_table(fresh));
    reused.take_shares(1, 3);
    free_blocks fresh_taken = fresh;
    fresh_taken.take_shares(1, 3);
    CHECK(reused == fresh_taken);
    CHECK(nshares_table(reused) == nshares_table(fresh_taken));
  }
  CHECK_THROWS_AS(reused.reset(-1), std::invalid_argument);
}
