// Mass loss is not node loss: one dead node is evicted at once; when more than 30% of a pool goes silent in
// one interval, evictions are paced at 10% of the pool per interval and a node that comes back is never
// evicted.
#include <catch2/catch.hpp>

#include "actors/mass_loss_guard.hpp"

using namespace rmbus::actors;

namespace {
mass_loss_settings settings() { return mass_loss_settings{30, 10, 1000}; }
}  // namespace

TEST_CASE("a single dead node is evicted at once") {
  mass_loss_guard g{settings()};
  mass_loss_guard::actions a;
  g.missing("p", "n1", 20, 0, a);
  g.down("p", "n1", 4000, a);
  CHECK(a.evict == std::vector<std::string>{"n1"});
  CHECK(a.entered.empty());
  CHECK_FALSE(g.in_mass_loss("p"));
}

TEST_CASE("30% of a pool is not yet mass loss, more than 30% within one interval is") {
  mass_loss_guard g{settings()};
  mass_loss_guard::actions a;
  // 20 nodes: 6 silent is 30%, not more than 30%.
  for (int i = 0; i < 6; ++i) g.missing("p", "a" + std::to_string(i), 20, 100, a);
  CHECK_FALSE(g.in_mass_loss("p"));
  // Spread over two intervals, 7 silent nodes are still no mass loss: the first 6 are older than 1000 ms.
  g.missing("p", "b", 20, 1200, a);
  CHECK_FALSE(g.in_mass_loss("p"));
  // Within one interval: 1 + 6 more = 7 of 20 = 35% > 30%.
  for (int i = 0; i < 6; ++i) g.missing("p", "c" + std::to_string(i), 20, 1300, a);
  CHECK(g.in_mass_loss("p"));
  CHECK(a.entered == std::vector<std::string>{"p"});
  CHECK_FALSE(g.in_mass_loss("other"));
}

TEST_CASE("in mass loss evictions are paced at 10% of the pool per interval, oldest first") {
  mass_loss_guard g{settings()};
  mass_loss_guard::actions a;
  // 40 nodes, 20 go silent together: 50% > 30%. Pace: ceil(10% x 40) = 4 per interval.
  for (int i = 0; i < 20; ++i) g.missing("p", "n" + std::to_string(i), 40, 0, a);
  REQUIRE(g.in_mass_loss("p"));
  for (int i = 0; i < 20; ++i) g.down("p", "n" + std::to_string(i), 4000, a);
  CHECK(a.evict == std::vector<std::string>{"n0", "n1", "n2", "n3"});  // this interval's 4
  CHECK(g.waiting("p") == 16);
  mass_loss_guard::actions next;
  g.tick({{"p", 40}}, 5000, next);
  CHECK(next.evict == std::vector<std::string>{"n4", "n5", "n6", "n7"});
  CHECK(g.waiting("p") == 12);
  CHECK(next.ended.empty());
}

TEST_CASE("the mass loss lasts while the silent nodes are on their way to down, which takes several intervals") {
  mass_loss_guard g{settings()};
  mass_loss_guard::actions a;
  for (int i = 0; i < 5; ++i) g.missing("p", "n" + std::to_string(i), 10, 0, a);  // 50% silent
  REQUIRE(g.in_mass_loss("p"));
  // Intervals pass before node_stability declares them down: the pool stays in mass loss.
  for (std::int64_t t : {1000, 2000, 3000}) {
    mass_loss_guard::actions x;
    g.tick({{"p", 10}}, t, x);
    CHECK(x.ended.empty());
  }
  CHECK(g.in_mass_loss("p"));
  mass_loss_guard::actions d;
  for (int i = 0; i < 5; ++i) g.down("p", "n" + std::to_string(i), 4000, d);
  // ceil(10% x 10) = 1 per interval, and this interval's one was not used yet.
  CHECK(d.evict.size() == 1);
}

TEST_CASE("a node whose heartbeats return before its turn is never evicted, and the mass loss ends") {
  mass_loss_guard g{settings()};
  mass_loss_guard::actions a;
  for (int i = 0; i < 10; ++i) g.missing("p", "n" + std::to_string(i), 10, 0, a);  // the whole pool: a switch blinked
  for (int i = 0; i < 10; ++i) g.down("p", "n" + std::to_string(i), 4000, a);
  // ceil(10% x 10) = 1 per interval: n0 goes at once.
  CHECK(a.evict == std::vector<std::string>{"n0"});
  // The switch is back: every other node heartbeats again before its turn.
  for (int i = 1; i < 10; ++i) g.back("p", "n" + std::to_string(i));
  mass_loss_guard::actions later;
  g.tick({{"p", 10}}, 5000, later);
  CHECK(later.evict.empty());  // nothing was evicted that did not have to be
  CHECK(later.ended == std::vector<std::string>{"p"});
  CHECK_FALSE(g.in_mass_loss("p"));
  // Afterwards a single dead node is evicted at once again.
  mass_loss_guard::actions after;
  g.missing("p", "n3", 10, 9000, after);
  g.down("p", "n3", 13000, after);
  CHECK(after.evict == std::vector<std::string>{"n3"});
}

TEST_CASE("forgotten nodes neither wait for eviction nor count as silent: a forgotten storm ends its mass loss") {
  mass_loss_guard g{settings()};
  mass_loss_guard::actions a;
  // 4 real nodes and 36 invented ones: all 36 go silent together (90% of 40) and down.
  for (int i = 0; i < 36; ++i) g.missing("p", "s" + std::to_string(i), 40, 0, a);
  REQUIRE(g.in_mass_loss("p"));
  for (int i = 0; i < 36; ++i) g.down("p", "s" + std::to_string(i), 4000, a);
  CHECK(a.evict.size() == 4);  // ceil(10% x 40) = 4 this interval
  CHECK(g.waiting("p") == 32);
  // The 36 are forgotten: nothing waits, nothing is silent; the pool is 4 nodes again.
  std::set<std::string> storm;
  for (int i = 0; i < 36; ++i) storm.insert("s" + std::to_string(i));
  g.forget("p", storm);
  CHECK(g.waiting("p") == 0);
  mass_loss_guard::actions later;
  g.tick({{"p", 4}}, 5000, later);
  CHECK(later.evict.empty());
  CHECK(later.ended == std::vector<std::string>{"p"});  // 0 silent of 4 <= 30%
  CHECK_FALSE(g.in_mass_loss("p"));
}
