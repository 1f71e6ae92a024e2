// A full work map taken by its items' bytes (actors/workmap_bytes.hpp): whatever the orchestrator changes
// between two maps, the change applied to the last map's items gives exactly the items a full decode of the
// new map gives, and only the items whose bytes differ are decoded. What it cannot take (an id twice, a
// damaged item, bytes that are not an array of items with ids, too many items, nothing held) it leaves to
// the full decode, changing nothing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <set>

#include <msgpack.hpp>

#include "actors/workmap_bytes.hpp"

using namespace rmbus::actors;
using namespace rmbus::messages;

namespace {

const std::string topic = "orchestrator.workmap";

work_item item(const std::string& id, std::uint64_t done = 0) {
  work_item w;
  w.id = id;
  w.user = "user-" + id.substr(0, 2);
  w.class_name = "normal";
  w.memory_mb = 1024;
  w.threads = 1;
  w.items_total = 10;
  w.items_done = done;
  return w;
}

std::string encoded_work(const std::vector<work_item>& items, std::uint64_t seq = 1) {
  workmap m;
  m.work = items;
  const auto body = encode(envelope{1, seq, 1, "orch"}, m);
  return std::string{*peek_workmap_work(body)};
}

workmap_bytes::item_map decoded(const std::vector<work_item>& items) {
  workmap m;
  m.work = items;
  auto r = decode_workmap(topic, encode(envelope{1, 1, 1, "orch"}, m));
  REQUIRE(r);
  REQUIRE(r.value().bad_items.empty());
  workmap_bytes::item_map out;
  for (auto& w : r.value().work) out.insert_or_assign(w.id, w);
  return out;
}

std::set<std::string> ids_of(const std::vector<work_item>& items) {
  std::set<std::string> out;
  for (const auto& w : items) out.insert(w.id);
  return out;
}

// One random change an orchestrator could make between two maps.
void change_randomly(std::vector<work_item>& items, std::mt19937& rng, int& next_id) {
  auto pick = [&] { return std::uniform_int_distribution<std::size_t>(0, items.size() - 1)(rng); };
  switch (std::uniform_int_distribution<int>(0, 6)(rng)) {
    case 0:  // a job arrives, anywhere in the map
      items.insert(items.begin() + static_cast<std::ptrdiff_t>(items.empty() ? 0 : pick()),
                   item("j" + std::to_string(next_id++)));
      break;
    case 1:  // one leaves
      if (!items.empty()) items.erase(items.begin() + static_cast<std::ptrdiff_t>(pick()));
      break;
    case 2:  // a process starts
      if (!items.empty()) {
        auto& w = items[pick()];
        w.processes.push_back({"s" + std::to_string(next_id++), "n1", process_state::running, 10, 0, std::nullopt});
        w.state = work_state::running;
      }
      break;
    case 3:  // progress
      if (!items.empty()) items[pick()].items_done += 1;
      break;
    case 4:  // the map's order changes
      if (items.size() > 2) {
        const auto a = pick(), b = pick();
        std::swap(items[a], items[b]);
      }
      break;
    case 5:  // a process ends
      if (!items.empty()) {
        auto& w = items[pick()];
        if (!w.processes.empty()) w.processes.pop_back();
      }
      break;
    default:  // a field the scheduler reads
      if (!items.empty()) items[pick()].memory_mb += 512;
      break;
  }
}

}  // namespace

TEST_CASE("a map compared by its items' bytes gives the items a full decode gives, seed after seed") {
  std::size_t decoded_total = 0, items_total = 0, changes_total = 0;
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng{seed};
    int next_id = 0;
    std::vector<work_item> items;
    for (int i = 0; i < 30; ++i) items.push_back(item("j" + std::to_string(next_id++)));
    workmap_bytes bytes;
    bytes.remember(encoded_work(items));
    REQUIRE(bytes.holds());
    auto held = decoded(items);
    for (int step = 0; step < 25; ++step) {
      const auto before_ids = ids_of(items);
      const auto before = items;
      const int changes = std::uniform_int_distribution<int>(0, 4)(rng);
      for (int c = 0; c < changes; ++c) change_randomly(items, rng, next_id);
      const auto work = encoded_work(items, static_cast<std::uint64_t>(step + 2));
      auto c = bytes.compare(topic, work, held, {});
      REQUIRE(c);
      const auto expected = decoded(items);
      // The lists name exactly the ids added, changed and removed.
      for (const auto& w : c->added) CHECK(before_ids.count(w.id) == 0);
      for (const auto& w : c->changed) CHECK(held.at(w.id) != expected.at(w.id));
      for (const auto& id : c->removed) CHECK(expected.count(id) == 0);
      std::size_t differing = 0;
      for (const auto& [id, w] : expected)
        differing += held.count(id) == 0 || held.at(id) != w ? 1 : 0;
      for (const auto& [id, w] : held) differing += expected.count(id) == 0 ? 1 : 0;
      CHECK(c->added.size() + c->changed.size() + c->removed.size() == differing);
      // Only items whose bytes are not an item of the last map at the expected place are read.
      CHECK(c->decoded <= items.size());
      CHECK(c->items == items.size());
      workmap_bytes::apply(*c, held);
      bytes.adopt(std::move(*c));
      REQUIRE(held == expected);
      CHECK(bytes.bytes() == work);
      decoded_total += c->decoded;
      items_total += items.size();
      changes_total += differing;
    }
  }
  // The point of it: far fewer items read than the maps held.
  CHECK(decoded_total * 4 < items_total);
  CHECK(changes_total > 0);
}

TEST_CASE("items that keep their place are matched without a read: only the changed ones are decoded") {
  std::vector<work_item> items;
  for (int i = 0; i < 100; ++i) items.push_back(item("j" + std::to_string(i)));
  workmap_bytes bytes;
  bytes.remember(encoded_work(items));
  auto held = decoded(items);
  items[3].items_done = 5;
  items[70].processes.push_back({"s1", "n1", process_state::running, 1, 0, std::nullopt});
  auto c = bytes.compare(topic, encoded_work(items), held, {});
  REQUIRE(c);
  CHECK(c->decoded == 2);
  REQUIRE(c->changed.size() == 2);
  CHECK(c->changed[0].id == "j3");
  CHECK(c->changed[1].id == "j70");
  CHECK(c->added.empty());
  CHECK(c->removed.empty());
  // One arrives at the front and one leaves: the others shift, and are still matched by their bytes.
  bytes.adopt(std::move(*c));
  held = decoded(items);
  items.erase(items.begin() + 50);
  items.insert(items.begin(), item("new"));
  c = bytes.compare(topic, encoded_work(items), held, {});
  REQUIRE(c);
  CHECK(c->decoded == 1);
  REQUIRE(c->added.size() == 1);
  CHECK(c->added[0].id == "new");
  CHECK(c->removed == std::vector<std::string>{"j50"});
}

TEST_CASE("a map's bytes are kept where they came, inside its whole body, not copied") {
  std::vector<work_item> items;
  for (int i = 0; i < 10; ++i) items.push_back(item("j" + std::to_string(i)));
  workmap m;
  m.work = items;
  auto first = std::make_shared<const std::string>(encode(envelope{1, 1, 1, "orch"}, m));
  const auto first_work = *peek_workmap_work(*first);
  workmap_bytes bytes;
  bytes.remember({first, first_work});
  CHECK(bytes.bytes().data() == first_work.data());
  CHECK(bytes.bytes().size() == first_work.size());

  const auto held = decoded(items);
  items[4].items_done = 3;
  m.work = items;
  auto second = std::make_shared<const std::string>(encode(envelope{1, 2, 1, "orch"}, m));
  const auto second_work = *peek_workmap_work(*second);
  auto c = bytes.compare(topic, {second, second_work}, held, {});
  REQUIRE(c);
  REQUIRE(c->changed.size() == 1);
  bytes.adopt(std::move(*c));
  CHECK(bytes.bytes().data() == second_work.data());
  // The body is held by the bytes kept: the sender's copy may go.
  const std::weak_ptr<const std::string> watch = second;
  second.reset();
  CHECK_FALSE(watch.expired());
  bytes.forget();
  CHECK(watch.expired());
}

TEST_CASE("an item written in other bytes but decoding to the same value is no change") {
  std::vector<work_item> items{item("a"), item("b")};
  workmap_bytes bytes;
  bytes.remember(encoded_work(items));
  const auto held = decoded(items);
  // "b" with its keys in another order: other bytes, the same item.
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk{buf};
  pk.pack_array(2);
  const auto a = encode_work_item(items[0]);
  buf.write(a.data(), a.size());
  const auto& b = items[1];
  pk.pack_map(13);
  auto kv = [&](const char* k, const auto& v) {
    pk.pack(std::string{k});
    pk.pack(v);
  };
  kv("user", b.user);
  kv("id", b.id);
  kv("kind", std::string{"job"});
  kv("class", b.class_name);
  kv("memory_mb", b.memory_mb);
  kv("submitted_ms", b.submitted_ms);
  kv("state", std::string{"waiting"});
  kv("max_processes", b.max_processes);
  kv("threads", b.threads);
  kv("items_total", b.items_total);
  kv("items_done", b.items_done);
  kv("item_ms", b.item_ms);
  pk.pack(std::string{"processes"});
  pk.pack_array(0);
  const std::string work{buf.data(), buf.size()};
  REQUIRE(work != encoded_work(items));
  auto c = bytes.compare(topic, work, held, {});
  REQUIRE(c);
  CHECK(c->decoded == 1);
  CHECK(c->changed.empty());
  CHECK(c->added.empty());
  CHECK(c->removed.empty());
}

TEST_CASE("what the bytes cannot settle is left to a full decode, and nothing is taken") {
  const std::vector<work_item> items{item("a"), item("b"), item("c")};
  workmap_bytes bytes;
  const auto held = decoded(items);

  SECTION("nothing held yet") { CHECK_FALSE(bytes.compare(topic, encoded_work(items), held, {})); }

  bytes.remember(encoded_work(items));
  REQUIRE(bytes.holds());
  const auto kept = std::string{bytes.bytes()};

  SECTION("an id twice") {
    auto twice = items;
    twice.push_back(item("a", 3));
    CHECK_FALSE(bytes.compare(topic, encoded_work(twice), held, {}));
    auto unchanged_twice = items;
    unchanged_twice.push_back(items[0]);  // the same bytes twice: still an id twice
    CHECK_FALSE(bytes.compare(topic, encoded_work(unchanged_twice), held, {}));
  }
  SECTION("a changed item that does not decode") {
    auto damaged = items;
    damaged[1].memory_mb = 7;
    auto work = encoded_work(damaged);
    // The state value "waiting" becomes "waitinG": an unknown state.
    const auto at = work.find("waiting", work.find("\xa1" "b"));
    REQUIRE(at != std::string::npos);
    work[at + 6] = 'G';
    CHECK_FALSE(bytes.compare(topic, work, held, {}));
  }
  SECTION("bytes that are not one array of items with string ids") {
    auto work = encoded_work(items);
    CHECK_FALSE(bytes.compare(topic, work + "\xc0", held, {}));              // something after the array
    CHECK_FALSE(bytes.compare(topic, work.substr(0, work.size() - 1), held, {}));  // cut short
    CHECK_FALSE(bytes.compare(topic, std::string{"\x81\xa2id\xa1" "a"}, held, {}));    // a map, not an array
    CHECK_FALSE(bytes.compare(topic, std::string{"\x91\x81\xa2id\x07"}, held, {}));   // an id not a string
    CHECK_FALSE(bytes.compare(topic, std::string{"\x91\x81\x07\xa1" "a"}, held, {}));  // a key not a string
  }
  SECTION("more items than max_array_len") {
    decode_limits tight;
    tight.max_array_len = 2;
    CHECK_FALSE(bytes.compare(topic, encoded_work(items), held, tight));
  }
  CHECK(bytes.holds());
  CHECK(bytes.bytes() == kept);  // nothing of the refused map was taken
}

TEST_CASE("a map naming an id twice, or not made of items, is not remembered") {
  workmap_bytes bytes;
  bytes.remember(encoded_work({item("a"), item("a", 2)}));
  CHECK_FALSE(bytes.holds());
  bytes.remember(encoded_work({item("a")}));
  CHECK(bytes.holds());
  bytes.remember(std::string{"\x91\xc0"});
  CHECK_FALSE(bytes.holds());
  CHECK(bytes.bytes().empty());
}
