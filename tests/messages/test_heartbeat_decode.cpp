// decode_heartbeat's two ways (messages/heartbeat.hpp): the one pass over a plain body and the full decode
// through the object tree. Whatever the body, decode_heartbeat must give what the full decode gives (the same
// heartbeat and envelope, or the same error), and the one pass may only take a body the full decode accepts,
// with the same result. decode_envelope reads flat bodies the same way (messages/detail/flat_body.hpp) and
// is held against the full decode of the envelope alike. Bodies are built byte by byte, so that every
// MessagePack form of a value, every wrong type, duplicate, missing key, bad UTF-8, limit and truncation is
// reachable.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "messages/detail/codec.hpp"
#include "messages/heartbeat.hpp"
#include "messages/topics.hpp"
#include "samples.hpp"

using namespace rmbus::messages;

namespace {

constexpr std::string_view topic = topics::heartbeat;

// Big-endian bytes of v, `width` of them.
void put_be(std::string& out, std::uint64_t v, int width) {
  for (int i = width - 1; i >= 0; --i) out += static_cast<char>((v >> (8 * i)) & 0xffu);
}

struct body_builder {
  std::mt19937_64& rng;
  std::string out;

  int pick(int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); }

  // A string in fixstr, or (now and then) in str 8, 16 or 32 even when shorter forms would do.
  void str(std::string_view s) {
    const int form = pick(8);
    if (s.size() < 32 && form < 5) {
      out += static_cast<char>(0xa0 | s.size());
    } else if (s.size() < 256 && form < 6) {
      out += '\xd9';
      put_be(out, s.size(), 1);
    } else if (s.size() < 65536 && form < 7) {
      out += '\xda';
      put_be(out, s.size(), 2);
    } else {
      out += '\xdb';
      put_be(out, s.size(), 4);
    }
    out += s;
  }
  // An unsigned integer in its smallest form, or in a wider one, or as a signed int of the same value.
  void uint(std::uint64_t v) {
    const int form = pick(10);
    if (v < 128 && form < 5) {
      out += static_cast<char>(v);
    } else if (form == 9 && v < 128) {
      out += '\xd0';  // int 8: the full decode reads a non-negative one as unsigned
      put_be(out, v, 1);
    } else {
      const int width = v < 256 && form < 7            ? 1
                        : v < 65536 && form < 8        ? 2
                        : v < (1ull << 32) && form < 9 ? 4
                                                       : 8;
      out += static_cast<char>(width == 1 ? 0xcc : width == 2 ? 0xcd : width == 4 ? 0xce : 0xcf);
      put_be(out, v, width);
    }
  }
  void boolean(bool b) { out += b ? '\xc3' : '\xc2'; }
  // A value of some other kind: nil, a negative integer, a float, an array, a nested map, binary.
  void other() {
    switch (pick(6)) {
      case 0:
        out += '\xc0';
        break;
      case 1:
        out += '\xff';
        break;  // -1, negative fixint
      case 2:
        out += '\xcb';
        put_be(out, 0x4004000000000000ull, 8);
        break;  // 2.5
      case 3:
        out += '\x92';
        out += '\x01';
        out += '\x02';
        break;
      case 4:
        out += '\x81';
        str("k");
        uint(1);
        break;
      default:
        out += '\xc4';
        put_be(out, 2, 1);
        out += "ab";
        break;
    }
  }
};

std::string random_text(std::mt19937_64& rng, std::size_t max_len) {
  static constexpr std::string_view alphabet = "abcdefghijklmnopqrstuvwxyz0123456789.-";
  std::string s(rng() % (max_len + 1), 'x');
  for (auto& ch : s) ch = alphabet[rng() % alphabet.size()];
  return s;
}

// One entry of a body under construction: its key and how to write its value.
struct entry {
  std::string key;
  enum class kind { uint, str, boolean, other } type;
  std::uint64_t u = 0;
  std::string s;
};

// A heartbeat body, valid or not: the usual keys with random values, then random damage.
std::string random_body(std::mt19937_64& rng, bool damage) {
  const auto chance = [&](int in) { return rng() % static_cast<std::uint64_t>(in) == 0; };
  std::vector<entry> es;
  es.push_back({"v", entry::kind::uint, 1, {}});
  es.push_back({"seq", entry::kind::uint, rng() >> (rng() % 64), {}});
  es.push_back({"ts_ms", entry::kind::uint, rng() >> (rng() % 64), {}});
  es.push_back({"src", entry::kind::str, 0, "agent." + random_text(rng, 40)});
  if (chance(3)) es.push_back({"epoch", entry::kind::uint, rng() % 1000, {}});
  es.push_back({"node", entry::kind::str, 0, "n" + random_text(rng, 300)});
  es.push_back({"ip", entry::kind::str, 0, random_text(rng, 15)});
  es.push_back({"memory_mb", entry::kind::uint, rng() >> (rng() % 64), {}});
  if (chance(2)) es.push_back({"memory_total_mb", entry::kind::uint, rng() >> (rng() % 64), {}});
  if (chance(2)) es.push_back({"quiesced", entry::kind::boolean, rng() % 2, {}});
  if (chance(2)) es.push_back({"cpus", entry::kind::uint, rng() % 512, {}});
  for (int unknown = static_cast<int>(rng() % 3); unknown > 0; --unknown) {
    const auto k = static_cast<entry::kind>(rng() % 4);
    es.push_back({"x_" + random_text(rng, 6), k, rng() % 70000, random_text(rng, 10)});
  }
  if (damage) {
    auto& victim = es[rng() % es.size()];
    switch (rng() % 10) {
      case 0:
        es.erase(es.begin() + static_cast<std::ptrdiff_t>(rng() % es.size()));
        break;   // a key missing
      case 1: {  // a key twice
        const entry again = es[rng() % es.size()];
        es.push_back(again);
        break;
      }
      case 2:
        victim.type = static_cast<entry::kind>(rng() % 4);
        break;  // another type
      case 3:
        victim.s = victim.s.substr(0, victim.s.size() / 2) + "\xc3\x28";
        break;  // bad UTF-8
      case 4:
        victim.s.clear();
        break;  // empty string
      case 5:
        victim.u = rng() % 3 == 0 ? 2 : (1ull << 32) + 1;
        break;  // a version of another width
      case 6:
        victim.s = std::string(70000, 'y');
        break;  // past max_string_bytes
      case 7:
        es.push_back({"\xff\xfe", entry::kind::uint, 1, {}});
        break;  // a key that is not UTF-8
      default:
        break;  // the bytes are damaged below instead
    }
  }
  std::shuffle(es.begin(), es.end(), rng);
  body_builder b{rng, {}};
  const bool map16 = es.size() > 15 || rng() % 4 == 0;
  if (map16) {
    b.out += '\xde';
    put_be(b.out, es.size(), 2);
  } else {
    b.out += static_cast<char>(0x80 | (es.size() & 0x0f));
  }
  for (const auto& e : es) {
    b.str(e.key);
    switch (e.type) {
      case entry::kind::uint:
        b.uint(e.u);
        break;
      case entry::kind::str:
        b.str(e.s);
        break;
      case entry::kind::boolean:
        b.boolean(e.u % 2 != 0);
        break;
      case entry::kind::other:
        b.other();
        break;
    }
  }
  if (damage && rng() % 3 == 0 && !b.out.empty()) {
    switch (rng() % 3) {
      case 0:
        b.out.resize(rng() % b.out.size());
        break;  // truncated
      case 1:
        b.out += '\x01';
        break;  // a trailing byte
      default:
        b.out[rng() % b.out.size()] ^= static_cast<char>(1u << (rng() % 8));
        break;  // a bit flipped
    }
  }
  return b.out;
}

struct outcome {
  bool plain_taken = false;
};

// decode_heartbeat against the full decode, and the one pass's answer against both.
outcome check_agreement(std::string_view body, const decode_limits& limits) {
  envelope env_tree, env_plain, env_full;
  const auto tree = detail::decode_heartbeat_tree(topic, body, limits, &env_tree);
  const auto plain = detail::decode_plain_heartbeat(body, limits, &env_plain);
  const auto full = decode_heartbeat(topic, body, limits, &env_full);
  INFO("body of " << body.size()
                  << " bytes; full decode: " << (tree.ok() ? std::string{"ok"} : tree.error().message()));
  REQUIRE(full.ok() == tree.ok());
  if (tree.ok()) {
    CHECK(full.value() == tree.value());
    CHECK(env_full == env_tree);
  } else {
    CHECK(full.error().field == tree.error().field);
    CHECK(full.error().what == tree.error().what);
    CHECK(full.error().topic == tree.error().topic);
  }
  if (plain) {
    REQUIRE(tree.ok());
    CHECK(*plain == tree.value());
    CHECK(env_plain == env_tree);
  }
  // The envelope alone: decode_envelope against the full decode it falls back on.
  envelope env_full_decode;
  const auto reference = detail::guarded<bool>(topic, body, limits, &env_full_decode, false,
                                               [](const msgpack::object&) { return true; });
  const auto env_only = decode_envelope(topic, body, limits);
  REQUIRE(env_only.ok() == reference.ok());
  if (reference.ok()) {
    CHECK(env_only.value() == env_full_decode);
  } else {
    CHECK(env_only.error().field == reference.error().field);
    CHECK(env_only.error().what == reference.error().what);
  }
  return {plain.has_value()};
}

}  // namespace

TEST_CASE("the one pass takes the bodies our encoder writes, and reads them as the full decode does") {
  for (const auto& hb : {samples::full_heartbeat(), samples::bare_heartbeat()}) {
    for (const auto& env :
         {samples::env(), envelope{1, 1ull << 40, 0, "agent-with-a-longer-name-than-sso", 77}}) {
      const auto body = encode(env, hb);
      envelope got_env;
      const auto got = detail::decode_plain_heartbeat(body, {}, &got_env);
      REQUIRE(got.has_value());
      CHECK(*got == hb);
      CHECK(got_env == env);
      CHECK(check_agreement(body, {}).plain_taken);
    }
  }
  // A 300-byte node name (str 16) and the largest memory (uint 64): still the one pass.
  heartbeat big{std::string(300, 'n'), "::1", UINT64_MAX, {}, false, 0};
  const auto got = detail::decode_plain_heartbeat(encode(samples::env(), big), {}, nullptr);
  REQUIRE(got.has_value());
  CHECK(*got == big);
}

TEST_CASE("the one pass leaves every faulty body to the full decode, which says what is wrong") {
  const auto hb = samples::full_heartbeat();
  const auto good = encode(samples::env(), hb);
  // A second value for node: the full decode names the key; the one pass does not take the body.
  auto twice = good;
  twice[0] = static_cast<char>(static_cast<unsigned char>(twice[0]) + 1);  // one more entry in the fixmap
  twice += "\xa4node\xa3n99";
  CHECK_FALSE(detail::decode_plain_heartbeat(twice, {}, nullptr).has_value());
  const auto dup = decode_heartbeat(topic, twice);
  REQUIRE_FALSE(dup.ok());
  CHECK(dup.error().field == "node");
  CHECK(dup.error().what == "duplicate key");

  // Limits the full decode applies are applied before the one pass takes a body: each one alone, just
  // below what this body needs, keeps it from the one pass, and the full decode refuses it.
  std::vector<std::pair<const char*, decode_limits>> tight(4);
  tight[0] = {"max_string_bytes", {}};
  tight[0].second.max_string_bytes = 2;  // "node" as a key is longer
  tight[1] = {"max_map_len", {}};
  tight[1].second.max_map_len = 3;
  tight[2] = {"max_body_bytes", {}};
  tight[2].second.max_body_bytes = good.size() - 1;
  tight[3] = {"max_depth", {}};
  tight[3].second.max_depth = 0;
  for (const auto& [name, limits] : tight) {
    INFO(name);
    CHECK_FALSE(detail::decode_plain_heartbeat(good, limits, nullptr).has_value());
    CHECK_FALSE(decode_heartbeat(topic, good, limits).ok());
  }
}

TEST_CASE("decode_heartbeat gives what the full decode gives, over random bodies good and bad") {
  std::mt19937_64 rng{20261129};
  decode_limits tight;
  tight.max_string_bytes = 64;
  tight.max_map_len = 12;
  int plain = 0, faulty = 0, total = 0;
  for (int i = 0; i < 20000; ++i) {
    const bool damage = i % 2 == 1;
    const auto body = random_body(rng, damage);
    const auto& limits = i % 5 == 4 ? tight : decode_limits{};
    const auto seen = check_agreement(body, limits);
    plain += seen.plain_taken ? 1 : 0;
    faulty += decode_heartbeat(topic, body, limits).ok() ? 0 : 1;
    ++total;
  }
  // Both ways were exercised, and both outcomes of the full decode.
  CHECK(plain > total / 5);
  CHECK(faulty > total / 5);
  CHECK(total - plain - faulty > total / 20);  // taken only by the full decode (a signed int, a nested value)
}
