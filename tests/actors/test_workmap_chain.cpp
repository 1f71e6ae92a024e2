// The chain of work-map deltas differencing keeps (actors/workmap_chain.hpp): deltas in order give the map a
// full map would; a gap, a delta before any full map, another src, or a delta that contradicts its base
// changes nothing, is reported once, and later deltas wait for the next full map.
#include <catch2/catch.hpp>

#include "actors/workmap_chain.hpp"

using namespace rmbus::actors;
using namespace rmbus::messages;
using outcome = workmap_chain::outcome;

namespace {

work_item item(const std::string& id, std::uint64_t done = 0) {
  work_item w;
  w.id = id;
  w.user = "alice";
  w.memory_mb = 1024;
  w.threads = 1;
  w.items_total = 10;
  w.items_done = done;
  return w;
}

workmap_chain::item_map map_of(std::initializer_list<work_item> items) {
  workmap_chain::item_map m;
  for (const auto& w : items) m.emplace(w.id, w);
  return m;
}

}  // namespace

TEST_CASE("deltas applied in order give the map the equivalent full map holds") {
  workmap_chain chain{1000};
  auto held = map_of({item("a"), item("b"), item("c")});
  chain.full_map("orch", 10);
  auto target = held;
  for (std::uint64_t seq = 11; seq <= 20; ++seq) {
    auto next = target;
    next.erase(next.begin());                                     // one leaves
    next["n" + std::to_string(seq)] = item("n" + std::to_string(seq));  // one arrives
    next.rbegin()->second.items_done = seq;                        // one changes
    const auto d = make_workmap_delta(seq - 1, target, next);
    const auto v = chain.apply("orch", seq, d, held);
    REQUIRE(v.what == outcome::applied);
    target = next;
    CHECK(held == target);
    CHECK(chain.last_seq() == seq);
  }
}

TEST_CASE("a gap is reported once and later deltas wait until the next full map resumes the chain") {
  workmap_chain chain{1000};
  auto held = map_of({item("a")});
  chain.full_map("orch", 5);
  const auto before = held;
  // Delta 6 was lost: delta 7 names it as its base.
  workmap_delta d7{6, {item("x")}, {}, {}, {}, {}};
  auto v = chain.apply("orch", 7, d7, held);
  CHECK(v.what == outcome::gap);
  CHECK(v.reason.find("base 6") != std::string::npos);
  CHECK(held == before);
  CHECK(chain.waiting_for_full_map());
  workmap_delta d8{7, {item("y")}, {}, {}, {}, {}};
  CHECK(chain.apply("orch", 8, d8, held).what == outcome::waiting);
  CHECK(held == before);
  // Recovery: a full map, then deltas on it again.
  held = map_of({item("a"), item("x"), item("y")});
  chain.full_map("orch", 9);
  workmap_delta d10{9, {}, {}, {"x"}, {}, {}};
  CHECK(chain.apply("orch", 10, d10, held).what == outcome::applied);
  CHECK(held == map_of({item("a"), item("y")}));
}

TEST_CASE("a delta before any full map or after a reset is a gap and so is one of another src") {
  workmap_chain chain{1000};
  workmap_chain::item_map held;
  workmap_delta d{1, {item("a")}, {}, {}, {}, {}};
  CHECK(chain.apply("orch", 2, d, held).what == outcome::gap);
  CHECK(chain.apply("orch", 3, workmap_delta{2, {}, {}, {}, {}, {}}, held).what == outcome::waiting);
  CHECK(held.empty());
  chain.full_map("orch", 4);
  chain.reset();  // reconfiguration
  CHECK(chain.apply("orch", 5, workmap_delta{4, {item("b")}, {}, {}, {}, {}}, held).what == outcome::gap);
  CHECK(held.empty());

  chain.full_map("orch", 6);
  const auto v = chain.apply("other", 7, workmap_delta{6, {item("c")}, {}, {}, {}, {}}, held);
  CHECK(v.what == outcome::gap);
  CHECK(v.reason.find("other") != std::string::npos);
  CHECK(held.empty());
}

TEST_CASE("a delta that contradicts its base is refused whole: nothing of it applied and the chain waits") {
  const auto base = map_of({item("a"), item("b")});
  struct bad_case {
    const char* name;
    workmap_delta d;
    const char* says;
  };
  const std::vector<bad_case> cases{
      {"added id held already", {1, {item("c"), item("a")}, {}, {}, {}, {}}, "added[1]: id 'a' is in the map already"},
      {"changed id unknown", {1, {item("c")}, {item("b", 3), item("zz")}, {}, {}, {}}, "changed[1]: unknown id 'zz'"},
      {"removed id unknown", {1, {}, {item("b", 3)}, {"a", "zz"}, {}, {}}, "removed[1]: unknown id 'zz'"},
      {"beyond max items", {1, {item("c"), item("d"), item("e")}, {}, {}, {}, {}}, "more than max_array_len 4"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      workmap_chain chain{4};
      auto held = base;
      chain.full_map("orch", 1);
      const auto v = chain.apply("orch", 2, c.d, held);
      CHECK(v.what == outcome::refused);
      CHECK(v.reason.find(c.says) != std::string::npos);
      CHECK(held == base);
      CHECK(chain.apply("orch", 3, workmap_delta{2, {}, {}, {"a"}, {}, {}}, held).what == outcome::waiting);
      CHECK(held == base);
    }
  }
}
