// peek_heartbeat_node (messages/heartbeat.hpp, over messages/detail/peek.hpp): the node name read from a
// heartbeat body without decoding it, for the bus forwarder's shedding. It must agree with the full decoder on
// what our encoder writes, find the key wherever it stands in the map, and give nullopt (never a read past the
// end) on anything malformed.

#include <catch2/catch.hpp>
#include <msgpack.hpp>
#include <string>

#include "messages/heartbeat.hpp"
#include "messages/workmap.hpp"

using namespace rmbus::messages;

namespace {
std::string packed(const std::function<void(msgpack::packer<msgpack::sbuffer>&)>& f) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk{buf};
  f(pk);
  return std::string{buf.data(), buf.size()};
}
}  // namespace

TEST_CASE("peek_heartbeat_node reads the node our encoder writes, as the decoder does") {
  heartbeat hb;
  hb.node = "node-17.example.org";
  hb.ip = "10.1.2.3";
  hb.memory_mb = 65536;
  hb.quiesced = true;
  const auto body = encode(envelope{1, 42, 1700000000000, "agent-17"}, hb);
  REQUIRE(decode_heartbeat("agent.heartbeat", body).ok());
  CHECK(peek_heartbeat_node(body) == std::optional<std::string_view>{"node-17.example.org"});
  // A 300-byte name needs str 16 (0xda): read too.
  hb.node = std::string(300, 'n');
  CHECK(peek_heartbeat_node(encode(envelope{1, 1, 1, "a"}, hb)) == std::optional<std::string_view>{hb.node});
}

TEST_CASE("peek_heartbeat_node finds node after nested values of every kind, in any key order") {
  const auto body = packed([](auto& pk) {
    pk.pack_map(6);
    pk.pack(std::string{"seq"});
    pk.pack(std::uint64_t{1} << 40);  // uint 64
    pk.pack(std::string{"nested"});
    pk.pack_map(2);  // a map holding an array holding a map: skipped by counting
    pk.pack(std::string{"a"});
    pk.pack_array(3);
    pk.pack(-5);
    pk.pack(2.5);
    pk.pack_map(1);
    pk.pack(std::string{"node"});  // a nested "node": not the top-level one
    pk.pack(std::string{"decoy"});
    pk.pack(std::string{"b"});
    pk.pack_bin(3);
    pk.pack_bin_body("\x01\x02\x03", 3);
    pk.pack(7);  // a key that is not a string
    pk.pack(std::string{"seven"});
    pk.pack(std::string{"nil"});
    pk.pack_nil();
    pk.pack(std::string{"node"});
    pk.pack(std::string{"x1"});
    pk.pack(std::string{"after"});
    pk.pack(true);
  });
  CHECK(peek_heartbeat_node(body) == std::optional<std::string_view>{"x1"});
}

TEST_CASE("peek_heartbeat_node gives nullopt on bodies without a readable string node") {
  CHECK_FALSE(peek_heartbeat_node(""));
  CHECK_FALSE(peek_heartbeat_node("\xc1junk"));  // 0xc1 is never used in MessagePack
  CHECK_FALSE(peek_heartbeat_node(packed([](auto& pk) { pk.pack_array(1); pk.pack(1); })));  // not a map
  CHECK_FALSE(peek_heartbeat_node(packed([](auto& pk) {
    pk.pack_map(1);
    pk.pack(std::string{"ip"});
    pk.pack(std::string{"10.0.0.1"});
  })));  // no node
  CHECK_FALSE(peek_heartbeat_node(packed([](auto& pk) {
    pk.pack_map(1);
    pk.pack(std::string{"node"});
    pk.pack(17);
  })));  // node is not a string
  // Truncated anywhere: every prefix of a valid body shorter than the end of the name gives nullopt.
  heartbeat hb;
  hb.node = "a-fairly-long-node-name";
  hb.ip = "10.0.0.1";
  const auto body = encode(envelope{1, 1, 1, "agent"}, hb);
  const auto name_end = body.find(hb.node) + hb.node.size();
  for (std::size_t n = 0; n < name_end; ++n) CHECK_FALSE(peek_heartbeat_node(std::string_view{body}.substr(0, n)));
  CHECK(peek_heartbeat_node(std::string_view{body}.substr(0, name_end)) == std::optional<std::string_view>{hb.node});
}

TEST_CASE("peek_heartbeat_node refuses lengths beyond the body without reading them") {
  // A map declaring 2^32-1 entries, then an array declaring 2^32-1 elements, in 10 bytes.
  const std::string huge_map{"\xdf\xff\xff\xff\xff\xa1k\xdd\xff\xff", 10};
  CHECK_FALSE(peek_heartbeat_node(huge_map));
  // node's value declared as a str 32 of 4 GiB in a 12-byte body.
  const std::string huge_str{"\x81\xa4node\xdb\xff\xff\xff\xff", 11};
  CHECK_FALSE(peek_heartbeat_node(huge_str));
}

// peek_workmap_work (messages/workmap.hpp): the encoded `work` of a work map, for differencing to see that a
// map repeats the last one. It must see the same work under another envelope as the same, tell other work
// apart, and never give a view equal to a decodable map's for a body the decoder refuses.
TEST_CASE("peek_workmap_work gives the same bytes for the same work under another envelope, other bytes for other work") {
  workmap m;
  work_item w;
  w.id = "job-1";
  w.user = "alice";
  w.class_name = "normal";
  w.memory_mb = 4096;
  m.work.push_back(w);
  const auto a = encode(envelope{1, 1, 1700000000000, "or"}, m);
  const auto b = encode(envelope{1, 2, 1700000010000, "or-with-a-longer-name"}, m);
  const auto wa = peek_workmap_work(a);
  const auto wb = peek_workmap_work(b);
  REQUIRE(wa.has_value());
  REQUIRE(wb.has_value());
  CHECK(*wa == *wb);
  // The view is the whole `work` array, the body's last value: an array of one (0x91) to the end.
  CHECK(static_cast<unsigned char>(wa->front()) == 0x91);
  CHECK(a.substr(a.size() - wa->size()) == *wa);
  m.work[0].memory_mb = 8192;
  const auto c = encode(envelope{1, 3, 1700000020000, "or"}, m);
  REQUIRE(peek_workmap_work(c).has_value());
  CHECK(*peek_workmap_work(c) != *wa);
  REQUIRE(decode_workmap("orchestrator.workmap", c).ok());
}

TEST_CASE("peek_workmap_work gives no view equal to a good map's for a body the decoder refuses") {
  const auto env_keys = [](auto& pk) {
    pk.pack(std::string{"v"});
    pk.pack(1);
    pk.pack(std::string{"seq"});
    pk.pack(1);
    pk.pack(std::string{"ts_ms"});
    pk.pack(1);
    pk.pack(std::string{"src"});
    pk.pack(std::string{"or"});
  };
  const auto good = packed([&](auto& pk) {
    pk.pack_map(5);
    env_keys(pk);
    pk.pack(std::string{"work"});
    pk.pack_array(0);
  });
  REQUIRE(decode_workmap("orchestrator.workmap", good).ok());
  const std::optional<std::string_view> good_view{"\x90"};  // the empty array
  CHECK(peek_workmap_work(good) == good_view);

  // `work` twice: the first is not the last key, so no view.
  const auto twice = packed([&](auto& pk) {
    pk.pack_map(6);
    env_keys(pk);
    pk.pack(std::string{"work"});
    pk.pack_array(0);
    pk.pack(std::string{"work"});
    pk.pack_array(0);
  });
  CHECK_FALSE(decode_workmap("orchestrator.workmap", twice).ok());
  CHECK_FALSE(peek_workmap_work(twice).has_value());

  // A key that is not a string.
  const auto number_key = packed([&](auto& pk) {
    pk.pack_map(6);
    env_keys(pk);
    pk.pack(7);
    pk.pack(7);
    pk.pack(std::string{"work"});
    pk.pack_array(0);
  });
  CHECK_FALSE(decode_workmap("orchestrator.workmap", number_key).ok());
  CHECK_FALSE(peek_workmap_work(number_key).has_value());

  // Bytes after the map, a cut body, or a map announcing an entry it lacks: the view differs from the good one.
  const auto trailing = good + "\x01";
  CHECK_FALSE(decode_workmap("orchestrator.workmap", trailing).ok());
  CHECK(peek_workmap_work(trailing) != good_view);
  const auto cut = good.substr(0, good.size() - 1);
  CHECK_FALSE(decode_workmap("orchestrator.workmap", cut).ok());
  CHECK(peek_workmap_work(cut) != good_view);
  auto short_map = good;
  short_map[0] = static_cast<char>(0x86);  // 6 entries announced, 5 there: `work` is not the last
  CHECK_FALSE(decode_workmap("orchestrator.workmap", short_map).ok());
  CHECK_FALSE(peek_workmap_work(short_map).has_value());

  // Not a map, empty, no `work`, or `work` before another key: no view.
  CHECK_FALSE(peek_workmap_work("\x90").has_value());
  CHECK_FALSE(peek_workmap_work("").has_value());
  const auto no_work = packed([&](auto& pk) {
    pk.pack_map(4);
    env_keys(pk);
  });
  CHECK_FALSE(peek_workmap_work(no_work).has_value());
  const auto work_first = packed([&](auto& pk) {
    pk.pack_map(5);
    pk.pack(std::string{"work"});
    pk.pack_array(0);
    env_keys(pk);
  });
  REQUIRE(decode_workmap("orchestrator.workmap", work_first).ok());  // valid, but not the shape we shortcut
  CHECK_FALSE(peek_workmap_work(work_first).has_value());
}

// peek_workmap_array / peek_workmap_item (messages/workmap.hpp): the items of a map's `work` by their bytes,
// for differencing to decode only the items that changed (actors/workmap_bytes.hpp). Each item's bytes must
// be exactly what our encoder writes for it alone, the walk must end exactly at the array's end, and damaged
// or cut bytes must give nullopt, never a read past the end.
TEST_CASE("peek_workmap_item walks a map's items: each id, and bytes equal to the item encoded alone") {
  workmap m;
  for (int i = 0; i < 20; ++i) {
    work_item w;
    w.id = i == 7 ? std::string(300, 'x') : "job-" + std::to_string(i);  // a str 16 id too
    w.user = "u" + std::to_string(i % 3);
    w.memory_mb = 1024u << (i % 8);
    if (i % 4 == 0) w.processes.push_back({"s" + std::to_string(i), "n1", process_state::running, 5, 6, 65536});
    if (i % 5 == 0) w.hosts = {"h1", "h2"};
    m.work.push_back(w);
  }
  const auto body = encode(envelope{1, 1, 1, "or"}, m);
  const auto work = peek_workmap_work(body);
  REQUIRE(work);
  const auto array = peek_workmap_array(*work);
  REQUIRE(array);
  REQUIRE(array->items == m.work.size());
  auto rest = array->bytes;
  for (const auto& w : m.work) {
    const auto item = peek_workmap_item(rest);
    REQUIRE(item);
    CHECK(item->id == w.id);
    CHECK(item->bytes == encode_work_item(w));
    rest.remove_prefix(item->bytes.size());
  }
  CHECK(rest.empty());
}

TEST_CASE("peek_workmap_item and peek_workmap_array give nullopt on damaged or cut bytes") {
  work_item w;
  w.id = "job-1";
  w.processes.push_back({"s1", "n1", process_state::running, 5, 6, std::nullopt});
  const auto one = encode_work_item(w);
  // Every cut of an item is refused.
  for (std::size_t n = 0; n < one.size(); ++n) CHECK_FALSE(peek_workmap_item(std::string_view{one}.substr(0, n)));
  CHECK(peek_workmap_item(one));
  // An item without `id`, with a non-string `id`, with a key that is not a string; something not a map.
  CHECK_FALSE(peek_workmap_item(packed([](auto& pk) {
    pk.pack_map(1);
    pk.pack(std::string{"user"});
    pk.pack(std::string{"alice"});
  })));
  CHECK_FALSE(peek_workmap_item(packed([](auto& pk) {
    pk.pack_map(1);
    pk.pack(std::string{"id"});
    pk.pack(7);
  })));
  CHECK_FALSE(peek_workmap_item(packed([](auto& pk) {
    pk.pack_map(2);
    pk.pack(std::string{"id"});
    pk.pack(std::string{"a"});
    pk.pack(3);
    pk.pack(std::string{"x"});
  })));
  CHECK_FALSE(peek_workmap_item(packed([](auto& pk) { pk.pack_array(0); })));
  // An array header announcing more items than bytes follow, and a map where the array should be.
  CHECK_FALSE(peek_workmap_array(packed([](auto& pk) { pk.pack_array(1000); })));
  CHECK_FALSE(peek_workmap_array(packed([](auto& pk) { pk.pack_map(0); })));
  CHECK_FALSE(peek_workmap_array(""));
}
