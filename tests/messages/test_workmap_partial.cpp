// A work map with malformed items keeps its good items and names each bad one (id, field, what); only
// top-level damage rejects the whole map. Bodies are damaged through the generic value tree.
#include <catch2/catch.hpp>

#include "messages/topics.hpp"
#include "samples.hpp"

using namespace rmbus::messages;

namespace {

value tree_of(const workmap& m) {
  auto r = decode_value("test", encode(samples::env(), m));
  REQUIRE(r.ok());
  return r.value();
}
value& key(value& v, const std::string& k) { return (*v.as_map())[k]; }
value& idx(value& v, std::size_t i) { return v.as_array()->at(i); }

workmap four_jobs() {
  workmap m;
  for (int i = 1; i <= 4; ++i) m.work.push_back(samples::job_item("j" + std::to_string(i), 1'000 * i));
  return m;
}

}  // namespace

TEST_CASE("one bad item among good ones: the good ones are decoded, the bad one is named") {
  auto t = tree_of(four_jobs());
  // Item 2 ("j3") says its second process is in a state the contract does not have.
  key(idx(key(idx(key(t, "work"), 2), "processes"), 1), "state") = "zombie";

  auto r = decode_workmap(topics::workmap, encode_value(t));
  REQUIRE(r.ok());
  const auto& m = r.value();
  // 4 items - 1 bad = 3 good, in wire order.
  REQUIRE(m.work.size() == 3);
  CHECK(m.work[0].id == "j1");
  CHECK(m.work[1].id == "j2");
  CHECK(m.work[2].id == "j4");
  CHECK(m.work[2] == samples::job_item("j4", 4'000));
  REQUIRE(m.bad_items.size() == 1);
  const auto& bad = m.bad_items[0];
  CHECK(bad.index == 2);
  CHECK(bad.id == "j3");
  CHECK(bad.error.topic == "orchestrator.workmap");
  CHECK(bad.error.field == "work[2].processes[1].state");
  CHECK(bad.error.message() ==
        "orchestrator.workmap: work[2].processes[1].state: "
        "unknown value 'zombie' (expected starting|initializing|running|ended)");
}

TEST_CASE("bad items whose id cannot be read, or that are not maps, are reported without an id") {
  auto t = tree_of(four_jobs());
  key(idx(key(t, "work"), 0), "id") = 17;        // id of the wrong type
  idx(key(t, "work"), 1) = value{};              // nil instead of an item
  key(idx(key(t, "work"), 3), "memory_mb") = "a lot";

  auto r = decode_workmap(topics::workmap, encode_value(t));
  REQUIRE(r.ok());
  REQUIRE(r.value().work.size() == 1);
  CHECK(r.value().work[0].id == "j3");
  const auto& bad = r.value().bad_items;
  REQUIRE(bad.size() == 3);
  CHECK(bad[0].index == 0);
  CHECK(bad[0].id.empty());
  CHECK(bad[0].error.field == "work[0].id");
  CHECK(bad[0].error.what == "expected string, got unsigned integer");
  CHECK(bad[1].index == 1);
  CHECK(bad[1].id.empty());
  CHECK(bad[1].error.field == "work[1]");
  CHECK(bad[1].error.what == "expected map, got nil");
  CHECK(bad[2].index == 3);
  CHECK(bad[2].id == "j4");
  CHECK(bad[2].error.field == "work[3].memory_mb");
  CHECK(bad[2].error.what == "expected unsigned integer, got string");
}

TEST_CASE("a missing required key in an item names the key: an empty id is refused") {
  auto t = tree_of(four_jobs());
  key(idx(key(t, "work"), 1), "processes").as_array()->at(0).as_map()->erase("run_ms");
  key(idx(key(t, "work"), 2), "id") = "";
  auto r = decode_workmap(topics::workmap, encode_value(t));
  REQUIRE(r.ok());
  CHECK(r.value().work.size() == 2);
  REQUIRE(r.value().bad_items.size() == 2);
  CHECK(r.value().bad_items[0].id == "j2");
  CHECK(r.value().bad_items[0].error.field == "work[1].processes[0].run_ms");
  CHECK(r.value().bad_items[0].error.what == "missing required key");
  CHECK(r.value().bad_items[1].error.field == "work[2].id");
  CHECK(r.value().bad_items[1].error.what == "must not be empty");
}

TEST_CASE("top-level damage rejects the whole work map") {
  auto t = tree_of(four_jobs());
  key(t, "src") = 5;
  auto r = decode_workmap(topics::workmap, encode_value(t));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().field == "src");
}

TEST_CASE("a map that is mostly junk is rejected whole rather than listing every bad item") {
  // workmap_max_bad_items (1000) bad items are listed; the 1001st rejects the map.
  value::array junk(workmap_max_bad_items + 1, value{});
  auto t = tree_of(workmap{});
  key(t, "work") = junk;
  auto r = decode_workmap(topics::workmap, encode_value(t));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().field == "work");
  CHECK_THAT(r.error().what, Catch::StartsWith("more than 1000 malformed work items"));

  // Exactly 1000 bad items (plus one good) still decode.
  junk.resize(workmap_max_bad_items);
  junk.push_back(value{});
  auto good = tree_of(four_jobs());
  junk.back() = idx(key(good, "work"), 0);
  key(t, "work") = junk;
  r = decode_workmap(topics::workmap, encode_value(t));
  REQUIRE(r.ok());
  CHECK(r.value().work.size() == 1);
  CHECK(r.value().bad_items.size() == workmap_max_bad_items);
}
