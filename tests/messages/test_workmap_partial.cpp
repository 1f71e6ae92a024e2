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

// decode_workmap_head and decode_workmap_item (messages/workmap.hpp): a map read item by item must accept and
// refuse exactly what decode_workmap accepts and refuses, and give the same envelope and echoes.
TEST_CASE("decode_workmap_head reads the envelope and echoes as decode_workmap does, and refuses what it refuses") {
  auto m = four_jobs();
  m.rm_epoch = 3;
  m.rm_cycle = 41;
  const auto body = encode(samples::env(9, "orch"), m);
  const auto work = peek_workmap_work(body);
  REQUIRE(work);
  envelope env_full, env_head;
  const auto full = decode_workmap(std::string{topics::workmap}, body, {}, &env_full);
  const auto head = decode_workmap_head(std::string{topics::workmap}, body, *work, {}, &env_head);
  REQUIRE(full);
  REQUIRE(head);
  CHECK(env_head == env_full);
  CHECK(head.value().rm_epoch == std::optional<std::uint64_t>{3});
  CHECK(head.value().rm_cycle == std::optional<std::uint64_t>{41});
  CHECK(head.value().work.empty());

  // An echo of the wrong type is refused by both, naming it. encode_value writes keys in their order, so
  // the body is built as the head with `work` put last by hand.
  workmap only_items;
  only_items.work = m.work;
  const auto items_body = encode(samples::env(), only_items);
  const auto items_work = *peek_workmap_work(items_body);
  auto with_bad_echo = tree_of(m);
  (*with_bad_echo.as_map()).erase("work");
  key(with_bad_echo, "rm_epoch") = value{std::string{"three"}};
  auto head_bytes = encode_value(with_bad_echo);
  head_bytes[0] = static_cast<char>(static_cast<unsigned char>(head_bytes[0]) + 1);  // one entry more: work
  const auto bad_body = head_bytes + "\xa4work" + std::string{items_work};
  REQUIRE_FALSE(decode_workmap(std::string{topics::workmap}, bad_body));
  const auto bad_work = peek_workmap_work(bad_body);
  REQUIRE(bad_work);
  const auto r = decode_workmap_head(std::string{topics::workmap}, bad_body, *bad_work);
  REQUIRE_FALSE(r);
  CHECK(r.error().field == "rm_epoch");
  // A view that is not the body's tail is refused.
  CHECK_FALSE(decode_workmap_head(std::string{topics::workmap}, body, std::string{*work}));
}

TEST_CASE("decode_workmap_item counts depth from the map's root, as decode_workmap does") {
  // An item with an unknown key holding nested arrays: in a map the item is at depth 3 (root map, `work`).
  auto nested_item = [](int arrays) {
    workmap m;
    m.work.push_back(samples::job_item("deep", 1));
    auto t = tree_of(m);
    value v{value::array{}};
    for (int i = 1; i < arrays; ++i) v = value{value::array{v}};
    key(idx(key(t, "work"), 0), "extra") = v;
    return t;
  };
  decode_limits limits;
  limits.max_depth = 8;
  for (int arrays = 4; arrays <= 6; ++arrays) {
    auto t = nested_item(arrays);
    const auto item_bytes = encode_value(idx(key(t, "work"), 0));
    // The whole map, `work` last as the encoder writes it.
    auto head = t;
    (*head.as_map()).erase("work");
    auto head_bytes = encode_value(head);
    head_bytes[0] = static_cast<char>(static_cast<unsigned char>(head_bytes[0]) + 1);
    const auto body = head_bytes + "\xa4work\x91" + item_bytes;
    const bool whole = decode_workmap(std::string{topics::workmap}, body, limits).ok();
    const bool alone = decode_workmap_item(std::string{topics::workmap}, item_bytes, limits).ok();
    CHECK(whole == alone);
    CHECK(whole == (3 + arrays <= 8));
  }
}
