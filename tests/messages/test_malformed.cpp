// A table of malformed bodies, each rejected with an error naming the topic, the field path and what was
// wrong. Bodies are built by taking a valid encoding, decoding it into a generic value tree, damaging one
// field, and re-encoding it; byte-level damage (truncation, lying length headers) is written out as bytes.
#include <catch2/catch.hpp>

#include <functional>
#include <optional>
#include <string>

#include <msgpack.hpp>

#include "messages/topics.hpp"
#include "samples.hpp"

using namespace rmbus::messages;

namespace {

std::string bytes(std::initializer_list<unsigned> b) {
  std::string s;
  for (auto c : b) s.push_back(static_cast<char>(c));
  return s;
}

value tree(const std::string& body) {
  auto r = decode_value("test", body);
  REQUIRE(r.ok());
  return r.value();
}
value& key(value& v, const std::string& k) { return (*v.as_map())[k]; }
value& idx(value& v, std::size_t i) { return v.as_array()->at(i); }

// A valid small body (a fixmap) with one more raw entry appended: lets a test place bytes that no encoder
// would write (lying length headers, deep nesting, non-string keys) inside an otherwise good message.
std::string with_raw_kv(const std::string& body, const std::string& raw_key, const std::string& raw_value) {
  std::string out = body;
  REQUIRE((static_cast<unsigned char>(out[0]) & 0xf0) == 0x80);
  REQUIRE((static_cast<unsigned char>(out[0]) & 0x0f) < 15);
  out[0] = static_cast<char>(static_cast<unsigned char>(out[0]) + 1);
  return out + raw_key + raw_value;
}
std::string with_raw_entry(const std::string& body, const std::string& raw) {
  return with_raw_kv(body, bytes({0xa1, 'x'}), raw);
}

using decoder = std::function<result<bool>(std::string_view body, const decode_limits&)>;

template <class Fn>
decoder as_decoder(Fn fn) {
  return [fn](std::string_view body, const decode_limits& limits) -> result<bool> {
    auto r = fn(body, limits);
    if (!r) return r.error();
    return true;
  };
}

struct bad_case {
  std::string name;
  std::string topic;
  decoder decode;
  std::string body;
  std::string field;     // expected field path
  std::string what;      // expected to be contained in the message
  decode_limits limits{};
};

}  // namespace

TEST_CASE("malformed bodies give clear errors naming topic and field") {
  const auto hb_body = encode(samples::env(), samples::full_heartbeat());
  const auto wm_body = encode(samples::env(), samples::full_workmap());
  const auto st_body = encode(samples::env(), samples::full_rm_state());
  const auto nd_body = encode(samples::env(), samples::full_rm_nodes());
  const auto ev_body = encode(samples::env(), samples::full_rm_event());

  const auto hb = as_decoder([](auto b, auto& l) { return decode_heartbeat(topics::heartbeat, b, l); });
  const auto wm = as_decoder([](auto b, auto& l) { return decode_workmap(topics::workmap, b, l); });
  const auto st = as_decoder([](auto b, auto& l) { return decode_rm_state(topics::rm_state, b, l); });
  const auto nd = as_decoder([](auto b, auto& l) { return decode_rm_nodes(topics::rm_nodes, b, l); });
  const auto cy = as_decoder([](auto b, auto& l) { return decode_rm_cycle(topics::rm_cycle, b, l); });
  const auto ev = as_decoder([](auto b, auto& l) { return decode_rm_event(topics::rm_events, b, l); });
  const auto rq = as_decoder([](auto b, auto& l) { return decode_admin_request(topics::admin, b, l); });
  const auto rp = as_decoder([](auto b, auto& l) { return decode_admin_reply(topics::admin, b, l); });

  auto damaged = [](const std::string& body, auto&& damage) {
    auto t = tree(body);
    damage(t);
    return encode_value(t);
  };

  std::vector<bad_case> cases;
  cases.push_back({"truncated by one byte", "agent.heartbeat", hb, hb_body.substr(0, hb_body.size() - 1), "",
                   "truncated body"});
  cases.push_back({"truncated in the middle", "orchestrator.workmap", wm, wm_body.substr(0, wm_body.size() / 2), "",
                   "truncated body"});
  // Only the map header is left: it announces 5 entries, and 1 byte cannot hold any, so the body-size cap
  // on map lengths refuses it before anything is reserved.
  cases.push_back({"truncated to the map header", "orchestrator.workmap", wm, wm_body.substr(0, 1), "",
                   "a map declares more entries than max_map_len or the body can hold (limit 0)"});
  cases.push_back({"empty body", "rm.state", st, "", "", "empty body"});
  cases.push_back({"not MessagePack (0xc1 is never used)", "rm.state", st, bytes({0xc1, 0x00}), "",
                   "not MessagePack"});
  cases.push_back({"plain text", "agent.heartbeat", hb, "hello, world", "", "11 trailing bytes"});
  cases.push_back({"an array, not a map", "rm.nodes", nd, encode_value(value{value::array{}}), "",
                   "expected map, got array"});
  cases.push_back({"trailing bytes", "agent.heartbeat", hb, hb_body + bytes({0xc0, 0xc0}), "",
                   "2 trailing bytes after the first MessagePack value"});
  {
    decode_limits small;
    small.max_body_bytes = 64;
    cases.push_back({"body over max_body_bytes", "orchestrator.workmap", wm, wm_body, "",
                     "exceeds max_body_bytes (64)", small});
  }
  cases.push_back({"array32 header claiming 2^31 elements", "orchestrator.workmap", wm,
                   with_raw_entry(hb_body, bytes({0xdd, 0x7f, 0xff, 0xff, 0xff})), "", "max_array_len"});
  // A string or binary value is only materialised once all its bytes are there, so a lying str32/bin32
  // header costs nothing and reads as a truncated body.
  cases.push_back({"str32 header claiming 2 GB", "agent.heartbeat", hb,
                   with_raw_entry(hb_body, bytes({0xdb, 0x7f, 0xff, 0xff, 0xff})), "", "truncated body"});
  cases.push_back({"map32 header claiming 2^31 entries", "agent.heartbeat", hb,
                   with_raw_entry(hb_body, bytes({0xdf, 0x7f, 0xff, 0xff, 0xff})), "", "max_map_len"});
  cases.push_back({"bin32 header claiming 2 GB", "agent.heartbeat", hb,
                   with_raw_entry(hb_body, bytes({0xc6, 0x7f, 0xff, 0xff, 0xff})), "", "truncated body"});
  {
    // 16 nested arrays under the root map make 17 levels; the limit is 16.
    std::string nest(16, static_cast<char>(0x91));
    nest.back() = static_cast<char>(0x90);
    cases.push_back({"nesting deeper than max_depth", "agent.heartbeat", hb, with_raw_entry(hb_body, nest), "",
                     "nesting deeper than max_depth"});
  }
  {
    decode_limits small;
    small.max_string_bytes = 4;  // "10.0.0.1" is 8 bytes
    cases.push_back({"string over max_string_bytes", "agent.heartbeat", hb, hb_body, "", "max_string_bytes",
                     small});
  }
  cases.push_back({"missing required key", "agent.heartbeat", hb,
                   damaged(hb_body, [](value& t) { t.as_map()->erase("memory_mb"); }), "memory_mb",
                   "missing required key"});
  cases.push_back({"missing envelope key", "agent.heartbeat", hb,
                   damaged(hb_body, [](value& t) { t.as_map()->erase("seq"); }), "seq", "missing required key"});
  cases.push_back({"wrong type: string for uint", "agent.heartbeat", hb,
                   damaged(hb_body, [](value& t) { key(t, "memory_mb") = "lots"; }), "memory_mb",
                   "expected unsigned integer, got string"});
  cases.push_back({"negative size", "agent.heartbeat", hb,
                   damaged(hb_body, [](value& t) { key(t, "memory_mb") = -1; }), "memory_mb",
                   "expected unsigned integer, got negative integer"});
  cases.push_back({"wrong type: optional bool given as int", "agent.heartbeat", hb,
                   damaged(hb_body, [](value& t) { key(t, "quiesced") = 1; }), "quiesced",
                   "expected boolean, got unsigned integer"});
  cases.push_back({"empty node name", "agent.heartbeat", hb, damaged(hb_body, [](value& t) { key(t, "node") = ""; }),
                   "node", "must not be empty"});
  cases.push_back({"empty src on a bus message", "agent.heartbeat", hb,
                   damaged(hb_body, [](value& t) { key(t, "src") = ""; }), "src", "must not be empty"});
  // Strings must be UTF-8 (Python refuses anything else): a lone 0xff, an overlong '/', a UTF-16 surrogate.
  for (const auto& [name, raw] : {std::pair{"0xff", std::string{"n\xff"}}, std::pair{"overlong", std::string{"\xc0\xaf"}},
                                  std::pair{"surrogate", std::string{"\xed\xa0\x80"}},
                                  std::pair{"cut sequence", std::string{"ab\xe6\x97"}}}) {
    cases.push_back({std::string{"invalid UTF-8: "} + name, "agent.heartbeat", hb,
                     damaged(hb_body, [raw = raw](value& t) { key(t, "node") = raw; }), "node", "is not valid UTF-8"});
  }
  cases.push_back({"unknown enum value with control bytes is quoted printably", "rm.nodes", nd,
                   damaged(nd_body, [](value& t) { key(idx(key(t, "nodes"), 0), "state") = "up\n\x01"; }),
                   "nodes[0].state", R"(unknown value 'up\x0a\x01')"});
  cases.push_back({"v over 32 bits", "agent.heartbeat", hb,
                   damaged(hb_body, [](value& t) { key(t, "v") = std::uint64_t{1} << 32; }), "v",
                   "does not fit 32 bits"});
  cases.push_back({"non-string key", "agent.heartbeat", hb,
                   with_raw_kv(hb_body, bytes({0x05}), bytes({0x01})), "",
                   "map key is not a string (got unsigned integer)"});
  cases.push_back({"workmap without work", "orchestrator.workmap", wm,
                   damaged(wm_body, [](value& t) { t.as_map()->erase("work"); }), "work", "missing required key"});
  cases.push_back({"work is a map", "orchestrator.workmap", wm,
                   damaged(wm_body, [](value& t) { key(t, "work") = value::map{}; }), "work",
                   "expected array, got map"});
  cases.push_back({"unknown share status", "rm.state", st,
                   damaged(st_body, [](value& t) { key(idx(key(idx(key(t, "jobs"), 0), "shares"), 1), "status") = "gone"; }),
                   "jobs[0].shares[1].status", "unknown value 'gone' (expected running|new|preempt|evict)"});
  cases.push_back({"float quanta", "rm.state", st,
                   damaged(st_body, [](value& t) { key(idx(key(idx(key(t, "jobs"), 0), "shares"), 2), "quanta") = 1.5; }),
                   "jobs[0].shares[2].quanta", "expected unsigned integer, got float"});
  cases.push_back({"unknown node state", "rm.nodes", nd,
                   damaged(nd_body, [](value& t) { key(idx(key(t, "nodes"), 1), "state") = "sleeping"; }),
                   "nodes[1].state",
                   "unknown value 'sleeping' (expected up|missing|down|varied_off|quiesced|blacklisted)"});
  cases.push_back({"rm.cycle missing a duration", "rm.cycle", cy,
                   damaged(encode(samples::env(), samples::full_rm_cycle()),
                           [](value& t) { t.as_map()->erase("defrag_us"); }),
                   "defrag_us", "missing required key"});
  cases.push_back({"event detail value not a string", "rm.events", ev,
                   damaged(ev_body, [](value& t) { key(key(t, "detail"), "node") = 4; }), "detail.node",
                   "expected string, got unsigned integer"});
  cases.push_back({"admin request without cmd", "admin", rq, encode_value(value{value::map{{"nodes", "n1"}}}),
                   "cmd", "missing required key"});
  cases.push_back({"admin request with a numeric cmd", "admin", rq, encode_value(value{value::map{{"cmd", 3}}}),
                   "cmd", "expected string, got unsigned integer"});
  cases.push_back({"admin request with a bad envelope key", "admin", rq,
                   encode_value(value{value::map{{"cmd", "status"}, {"seq", "x"}}}), "seq",
                   "expected unsigned integer, got string"});
  cases.push_back({"admin reply not ok without error", "admin", rp, encode_value(value{value::map{{"ok", false}}}),
                   "error", "required (non-empty) when ok is false"});
  {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk{buf};
    pk.pack_map(2);
    pk.pack("cmd");
    pk.pack("status");
    pk.pack("cmd");
    pk.pack("qload");
    cases.push_back({"duplicate key", "admin", rq, std::string{buf.data(), buf.size()}, "cmd", "duplicate key"});
  }

  for (const auto& c : cases) {
    SECTION(c.name) {
      auto r = c.decode(c.body, c.limits);
      REQUIRE_FALSE(r.ok());
      INFO(r.error().message());
      CHECK(r.error().topic == c.topic);
      CHECK(r.error().field == c.field);
      CHECK_THAT(r.error().what, Catch::Contains(c.what));
      // The message reads "topic: field: what" (or "topic: what" for whole-body damage).
      const auto expected_prefix = c.field.empty() ? c.topic + ": " : c.topic + ": " + c.field + ": ";
      CHECK(r.error().message().rfind(expected_prefix, 0) == 0);
    }
  }
}

TEST_CASE("unknown keys are ignored at every level") {
  auto t = tree(encode(samples::env(), samples::full_workmap()));
  key(t, "future_top") = "x";
  key(idx(key(t, "work"), 0), "future_item") = value::array{1, 2, 3};
  key(idx(key(idx(key(t, "work"), 0), "processes"), 0), "future_process") = value::map{{"a", 1}};
  auto r = decode_workmap(topics::workmap, encode_value(t));
  REQUIRE(r.ok());
  CHECK(r.value() == samples::full_workmap());
}

TEST_CASE("a small body whose object tree outgrows the decoder's first memory chunk decodes whole") {
  // A heartbeat with a future key holding 2,000 one-byte integers: about 2 KB of body, 2,000 objects, far
  // more than the first chunk a body of that size gets, and still every field comes out right.
  auto t = tree(encode(samples::env(), samples::full_heartbeat()));
  value::array many;
  for (int i = 0; i < 2000; ++i) many.emplace_back(i % 100);
  key(t, "future_list") = many;
  key(t, "future_map") = value::map{{"a", 1}, {"b", value::array{1, 2, 3}}};
  const auto body = encode_value(t);
  REQUIRE(body.size() < 4096);
  envelope env;
  auto r = decode_heartbeat(topics::heartbeat, body, decode_limits{}, &env);
  REQUIRE(r.ok());
  CHECK(r.value() == samples::full_heartbeat());
  CHECK(env == samples::env());
  // The generic decoder sees every element too.
  auto d = decode_value("test", body);
  REQUIRE(d.ok());
  REQUIRE(d.value().as_map()->at("future_list").as_array()->size() == 2000);
  CHECK(d.value().as_map()->at("future_list").as_array()->at(1999) == value(99));
}

TEST_CASE("multi-byte UTF-8 names are accepted and kept byte for byte") {
  heartbeat h = samples::bare_heartbeat();
  h.node = "n\xc5\x93ud-\xe6\x97\xa5-\xf0\x9f\x96\xa5";  // "nœud-日-🖥"
  const auto body = encode(samples::env(), h);
  auto r = decode_heartbeat(topics::heartbeat, body);
  REQUIRE(r.ok());
  CHECK(r.value().node == h.node);
}
