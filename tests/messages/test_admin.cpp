// The admin request/reply: optional envelope, arguments as a bounded value tree, typed accessors whose
// errors name the argument, and the whatif work item decoded with the work map's rules.
#include <catch2/catch.hpp>

#include <cmath>

#include "messages/admin.hpp"
#include "messages/topics.hpp"
#include "samples.hpp"

using namespace rmbus::messages;

TEST_CASE("a request without envelope keys decodes with a default envelope") {
  // What a one-off Python client sends: {"cmd": "vary_off", "nodes": ["n1", "n2"]}
  const auto body = encode_value(value{value::map{{"cmd", "vary_off"}, {"nodes", value::array{"n1", "n2"}}}});
  envelope env{1, 99, 99, "stale"};
  auto r = decode_admin_request(topics::admin, body, {}, &env);
  REQUIRE(r.ok());
  CHECK(env == envelope{});
  CHECK(r.value().cmd == admin_commands::vary_off);
  auto nodes = arguments(r.value()).get_string_list("nodes");
  REQUIRE(nodes.ok());
  CHECK(nodes.value() == std::vector<std::string>{"n1", "n2"});
}

TEST_CASE("typed accessors name the argument when it is missing or of the wrong type") {
  admin_request req{"explain", {{"job", 42}, {"nodes", value::array{"n1", 7}}, {"neg", -5}, {"f", 2.5}}};
  const auto args = arguments(req);

  auto job = args.get_string("job");
  REQUIRE_FALSE(job.ok());
  CHECK(job.error().message() == "admin: job: expected string, got unsigned integer");

  auto missing = args.get_string("user");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message() == "admin: user: missing required key");

  auto nodes = args.get_string_list("nodes");
  REQUIRE_FALSE(nodes.ok());
  CHECK(nodes.error().field == "nodes[1]");

  CHECK(args.get_uint("job").value() == 42);
  CHECK(args.get_int("neg").value() == -5);
  CHECK(args.get_int("job").value() == 42);
  CHECK_FALSE(args.get_uint("neg").ok());
  CHECK(args.get_double("f").value() == 2.5);
  CHECK(args.get_double("job").value() == 42.0);
  CHECK_FALSE(args.get_bool("f").ok());
  CHECK(args.has("neg"));
  CHECK_FALSE(args.has("user"));
}

TEST_CASE("reserved keys in args are not written twice") {
  admin_request req{"status", {{"cmd", "evil"}, {"seq", 5}, {"extra", true}}};
  const auto body = encode(envelope{1, 3, 4, "cli"}, req);
  envelope env;
  auto r = decode_admin_request(topics::admin, body, {}, &env);
  REQUIRE(r.ok());
  CHECK(r.value().cmd == "status");
  CHECK(env.seq == 3);
  // Only "extra" survives: "cmd" and "seq" are reserved names.
  CHECK(r.value().args.size() == 1);
  CHECK(r.value().args.count("extra") == 1);
}

TEST_CASE("whatif's work argument decodes as a work item, its errors prefixed with work.") {
  auto req = samples::full_admin_request();
  auto item = whatif_work(req);
  REQUIRE(item.ok());
  CHECK(item.value().id == "hypo");
  CHECK(item.value().memory_mb == 8192);
  CHECK(item.value().max_processes == 3);

  (*req.args.at("work").as_map())["kind"] = "batch";
  item = whatif_work(req);
  REQUIRE_FALSE(item.ok());
  CHECK(item.error().message() == "admin: work.kind: unknown value 'batch' (expected job|service|ap|reservation)");

  req.args.erase("work");
  item = whatif_work(req);
  REQUIRE_FALSE(item.ok());
  CHECK(item.error().field == "work");
}

TEST_CASE("value trees render as JSON-like text and refuse binary values") {
  value v{value::map{{"a", value::array{1, -2, true, value{}, "q\"x"}}, {"b", 0.5}}};
  CHECK(to_text(v) == R"({"a":[1,-2,true,null,"q\"x"],"b":0.5})");
  // c4 01 ff: bin8 of one byte
  const std::string bin{"\xc4\x01\xff", 3};
  auto r = decode_value("admin", bin);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().what == "unsupported value type binary");
}

TEST_CASE("non-negative integers are unsigned whatever type built them, so round trips are exact") {
  CHECK(value{5}.type() == value::kind::unsigned_integer);
  CHECK(value{-5}.type() == value::kind::integer);
  CHECK(value{std::int64_t{0}}.type() == value::kind::unsigned_integer);
  auto r = decode_value("t", encode_value(value{-5}));
  REQUIRE(r.ok());
  CHECK(r.value() == value{-5});
}

TEST_CASE("an admin body encoded with a default envelope decodes again (empty src is anonymous there)") {
  // Found by the fuzzer: admin envelopes are optional, so an empty src must round-trip, whereas a bus
  // message with an empty src is refused (see test_malformed).
  const admin_request req{"status", {}};
  const auto body = encode(envelope{}, req);
  envelope env{1, 5, 5, "x"};
  auto r = decode_admin_request(topics::admin, body, {}, &env);
  REQUIRE(r.ok());
  CHECK(r.value() == req);
  CHECK(env == envelope{});
  CHECK(encode(env, r.value()) == body);
}

TEST_CASE("epoch in an admin request is an argument, not the envelope's, so it is written once") {
  // Found by the fuzzer (issue 55; seed fuzz_seeds/regression-admin-epoch-argument.bin): a whatif request
  // carrying `epoch` decoded it both into the envelope and into the arguments, and the re-encoded body
  // held the key twice. The admin envelope has no epoch (docs/protocol.md section 5).
  const auto body = encode_value(value{value::map{{"v", 1},
                                                  {"seq", 7},
                                                  {"src", "sample-src"},
                                                  {"epoch", std::uint64_t{1700000000123}},
                                                  {"cmd", "whatif"},
                                                  {"nothing", value{}}}});
  envelope env;
  auto r = decode_admin_request(topics::admin, body, {}, &env);
  REQUIRE(r.ok());
  CHECK_FALSE(env.epoch.has_value());
  CHECK(arguments(r.value()).get_uint("epoch").value() == 1700000000123);
  const auto once = encode(env, r.value());
  envelope env2;
  auto again = decode_admin_request(topics::admin, once, {}, &env2);
  REQUIRE(again.ok());
  CHECK(again.value() == r.value());
  CHECK(encode(env2, again.value()) == once);
  // The argument is any value, as every argument is: no envelope type check applies to it.
  auto text = decode_admin_request(topics::admin, encode_value(value{value::map{{"cmd", "status"}, {"epoch", "x"}}}));
  REQUIRE(text.ok());
  CHECK(arguments(text.value()).get_string("epoch").value() == "x");
}

TEST_CASE("epoch in an admin reply is a result (status's HA epoch), and an envelope epoch is not written") {
  const admin_reply rep{true, {}, {{"epoch", std::uint64_t{30002}}, {"role", "active"}}};
  envelope with_epoch{1, 2, 3, "admin"};
  with_epoch.epoch = 99;
  const auto body = encode(with_epoch, rep);
  envelope env;
  auto r = decode_admin_reply(topics::admin, body, {}, &env);
  REQUIRE(r.ok());
  CHECK_FALSE(env.epoch.has_value());
  CHECK(results(r.value()).get_uint("epoch").value() == 30002);
  CHECK(encode(env, r.value()) == body);
}
