// peek_heartbeat_node (messages/heartbeat.hpp, over messages/detail/peek.hpp): the node name read from a
// heartbeat body without decoding it, for the bus forwarder's shedding. It must agree with the full decoder on
// what our encoder writes, find the key wherever it stands in the map, and give nullopt (never a read past the
// end) on anything malformed.

#include <catch2/catch.hpp>
#include <msgpack.hpp>
#include <string>

#include "messages/heartbeat.hpp"

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
