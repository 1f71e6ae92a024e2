// The envelope every body carries, and the limits that keep untrusted bytes from crashing or exhausting us.
#include <catch2/catch.hpp>

#include <string>

#include <msgpack.hpp>

#include "messages/envelope.hpp"
#include "messages/topics.hpp"

using namespace rmbus::messages;

namespace {
std::string bytes(std::initializer_list<unsigned> b) {
  std::string s;
  for (auto c : b) s.push_back(static_cast<char>(c));
  return s;
}
}  // namespace

TEST_CASE("envelope round trip keeps every field and gives the same bytes") {
  const envelope env{1, 42, 1'700'000'000'123, "agent-n01"};
  const auto body = encode(env);
  auto r = decode_envelope(topics::heartbeat, body);
  REQUIRE(r.ok());
  CHECK(r.value() == env);
  CHECK(encode(r.value()) == body);
}

TEST_CASE("decode_envelope rejects a missing key, a wrong type and a foreign version, naming the field") {
  // fixmap of 3: v=1, seq=1, ts_ms=5 (no src)
  const auto no_src = bytes({0x83, 0xa1, 'v', 0x01, 0xa3, 's', 'e', 'q', 0x01, 0xa5, 't', 's', '_', 'm', 's', 0x05});
  auto r = decode_envelope("agent.heartbeat", no_src);
  REQUIRE_FALSE(r);
  CHECK(r.error().field == "src");
  CHECK(r.error().message() == "agent.heartbeat: src: missing required key");

  // seq given as the string "1"
  const auto str_seq = bytes({0x84, 0xa1, 'v', 0x01, 0xa3, 's', 'e', 'q', 0xa1, '1', 0xa5, 't', 's', '_', 'm', 's',
                              0x05, 0xa3, 's', 'r', 'c', 0xa1, 'a'});
  r = decode_envelope("rm.state", str_seq);
  REQUIRE_FALSE(r);
  CHECK(r.error().message() == "rm.state: seq: expected unsigned integer, got string");

  envelope v2{2, 1, 1, "x"};
  r = decode_envelope("rm.state", encode(v2));
  REQUIRE_FALSE(r);
  CHECK(r.error().field == "v");
}

TEST_CASE("an array32 header announcing 2^31 elements is refused without allocating") {
  // dd 7f ff ff ff: array32 of 2147483647 elements; without an unpack limit this is std::bad_alloc.
  auto r = decode_envelope("rm.state", bytes({0xdd, 0x7f, 0xff, 0xff, 0xff}));
  REQUIRE_FALSE(r);
  CHECK(r.error().what.find("max_array_len") != std::string::npos);
}

TEST_CASE("trailing bytes, empty bodies and oversized bodies are whole-body errors") {
  const auto body = encode(envelope{1, 1, 1, "x"});
  auto r = decode_envelope("t", body + "\x01");
  REQUIRE_FALSE(r);
  CHECK(r.error().field.empty());
  CHECK(r.error().what == "1 trailing bytes after the first MessagePack value");

  r = decode_envelope("t", "");
  REQUIRE_FALSE(r);
  CHECK(r.error().what.find("empty body") != std::string::npos);

  decode_limits tiny;
  tiny.max_body_bytes = body.size() - 1;
  r = decode_envelope("t", body, tiny);
  REQUIRE_FALSE(r);
  CHECK(r.error().what.find("max_body_bytes") != std::string::npos);
}

TEST_CASE("max_depth counts the body's own map as depth 1") {
  // Root map + 3 nested arrays under an unknown key = depth 4.
  std::string body = encode(envelope{1, 1, 1, "x"});
  body[0] = static_cast<char>(static_cast<unsigned char>(body[0]) + 1);  // fixmap of 4 -> 5 entries
  body += bytes({0xa1, 'x', 0x91, 0x91, 0x90});
  decode_limits limits;
  limits.max_depth = 4;
  CHECK(decode_envelope("t", body, limits).ok());
  limits.max_depth = 3;
  auto r = decode_envelope("t", body, limits);
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "nesting deeper than max_depth (limit 3)");
}

TEST_CASE("the envelope of a large body with nested maps, arrays and every scalar is read without decoding it") {
  // The fast path reads only the root's keys; the rest must still be well-formed and within the limits.
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk{buf};
  pk.pack_map(6);
  pk.pack(std::string{"payload"});
  pk.pack_array(3);
  pk.pack_map(2);
  pk.pack(std::string{"k"});
  pk.pack(-5);
  pk.pack(std::uint64_t{7});  // a non-string key below the root is the message's business, not the envelope's
  pk.pack(1.5);
  pk.pack_nil();
  pk.pack(true);
  pk.pack(std::string{"v"});
  pk.pack(1);
  pk.pack(std::string{"seq"});
  pk.pack(std::uint64_t{42});
  pk.pack(std::string{"ts_ms"});
  pk.pack(std::uint64_t{1'700'000'000'000});
  pk.pack(std::string{"src"});
  pk.pack(std::string{"agent-7"});
  pk.pack(std::string{"more"});
  pk.pack_array(0);
  const std::string body{buf.data(), buf.size()};
  auto r = decode_envelope("t", body);
  REQUIRE(r);
  CHECK(r.value() == envelope{1, 42, 1'700'000'000'000, "agent-7"});
  // Trailing bytes, a duplicate envelope key and an over-long array are still refused.
  CHECK_FALSE(decode_envelope("t", body + "x"));
  decode_limits tight;
  tight.max_array_len = 2;
  CHECK_FALSE(decode_envelope("t", body, tight));
}

// decode_envelope_before: the envelope of a body read from the entries before its last key's value, which is
// left unread for the message's own decoder (the work map's `work`). The entries it reads are checked as
// decode_envelope checks them; a body whose last key is another is read whole.
TEST_CASE("decode_envelope_before reads the head only: the tail value is left unread, the head checked") {
  const auto with_tail = [](const std::string& head_extra, const std::string& tail_key, const std::string& tail) {
    std::string body = encode(envelope{1, 5, 1'700'000'000'000, "orch"});
    const auto extra_entries = head_extra.empty() ? 1 : 2;
    body[0] = static_cast<char>(static_cast<unsigned char>(body[0]) + extra_entries);  // fixmap: more entries
    return body + head_extra + "\xa4" + tail_key + tail;
  };
  const std::string good_work = "\x91\x81\xa2id\xa1" "a";
  const std::string junk_work = "\x91\xc1\xc1\xc1";  // 0xc1 is never valid MessagePack
  const auto good = with_tail("", "work", good_work);
  const auto r = decode_envelope_before("t", good, "work");
  REQUIRE(r);
  CHECK(r.value() == envelope{1, 5, 1'700'000'000'000, "orch"});
  CHECK(decode_envelope("t", good).value() == r.value());

  // The tail is not read: junk there passes here (its decoder refuses it), where decode_envelope refuses it.
  const auto junk = with_tail("", "work", junk_work);
  CHECK_FALSE(decode_envelope("t", junk));
  CHECK(decode_envelope_before("t", junk, "work"));

  // Another last key: the body is read whole, junk and all.
  const auto other = with_tail("", "payload", junk_work);
  CHECK_FALSE(decode_envelope_before("t", other, "work"));

  // The head is checked as before: a bad envelope entry, or a value before the tail that breaks a limit.
  std::string bad_seq = good;
  bad_seq.replace(bad_seq.find("\xa3seq") + 4, 1, "\xa1x");  // seq 5 -> "x"
  REQUIRE_FALSE(decode_envelope("t", bad_seq));
  CHECK_FALSE(decode_envelope_before("t", bad_seq, "work"));
  const auto long_head = with_tail("\xa4note\x93\x01\x02\x03", "work", good_work);
  decode_limits tight;
  tight.max_array_len = 2;
  CHECK(decode_envelope_before("t", long_head, "work"));
  CHECK_FALSE(decode_envelope_before("t", long_head, "work", tight));
  // The body's size counts whole, the tail included.
  tight = {};
  tight.max_body_bytes = good.size() - 1;
  CHECK_FALSE(decode_envelope_before("t", good, "work", tight));
}
