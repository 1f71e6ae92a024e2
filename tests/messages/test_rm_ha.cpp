// HA on the wire: the rm.ha beacon (round trip, every state, optional keys absent and present, malformed bodies
// refused with topic, field and what), the envelope's optional `epoch` on the RM's outputs, and the work map's
// `rm_epoch` echo (decoded, peeked without a decode, and `work` still the last key).
#include <catch2/catch.hpp>

#include <functional>

#include "messages/detail/peek.hpp"
#include "messages/epoch_fence.hpp"
#include "messages/internal/payload.hpp"
#include "messages/rm_ha.hpp"
#include "messages/topics.hpp"
#include "messages/value.hpp"
#include "samples.hpp"

using namespace rmbus::messages;

namespace {

rm_ha full_beacon() { return rm_ha{42, "rmbus.77.abc", 3, ha_state::handover, "tcp://10.0.0.2:5562", "rmbus.78.abd"}; }

value tree(const std::string& body) {
  auto r = decode_value("test", body);
  REQUIRE(r.ok());
  return r.value();
}

std::string damaged(const rm_ha& msg, const std::function<void(value::map&)>& damage) {
  auto t = tree(encode(samples::env(), msg));
  damage(*t.as_map());
  return encode_value(t);
}

void check_refused(const std::string& body, const std::string& field, const std::string& what) {
  auto r = decode_rm_ha(topics::rm_ha, body);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().topic == "rm.ha");
  CHECK(r.error().field == field);
  CHECK_THAT(r.error().what, Catch::Matchers::Contains(what));
}

}  // namespace

TEST_CASE("rm.ha round trip in every state, with and without the optional keys", "[messages][ha]") {
  for (const auto& msg : {full_beacon(), rm_ha{1, "rmbus.1.a", 0, ha_state::active, "", ""},
                          rm_ha{0, "rmbus.2.b", 1000, ha_state::standby, "tcp://h:1", ""}}) {
    const auto body = encode(samples::env(), msg);
    envelope env;
    auto r = decode_rm_ha(topics::rm_ha, body, {}, &env);
    INFO((r ? std::string{"ok"} : r.error().message()));
    REQUIRE(r.ok());
    CHECK(r.value() == msg);
    REQUIRE(env.epoch.has_value());
    CHECK(*env.epoch == msg.epoch);
    CHECK(encode(env, r.value()) == body);
    // The bus reads the envelope, epoch included, without the message.
    auto env_only = decode_envelope(topics::rm_ha, body);
    REQUIRE(env_only.ok());
    CHECK(env_only.value().epoch == msg.epoch);
  }
  // Absent optional keys are absent: 5 envelope keys (with epoch) + 3 fields = fixmap of 8.
  CHECK(static_cast<unsigned char>(encode(samples::env(), rm_ha{1, "i", 0, ha_state::active, "", ""})[0]) == 0x88);
  CHECK(to_string(ha_state::handover) == "handover");
  CHECK(parse_ha_state("standby") == ha_state::standby);
  CHECK_FALSE(parse_ha_state("leader").has_value());
}

TEST_CASE("malformed rm.ha bodies are refused naming the field", "[messages][ha]") {
  check_refused(damaged(full_beacon(), [](value::map& m) { m.erase("epoch"); }), "epoch", "missing required key");
  check_refused(damaged(full_beacon(), [](value::map& m) { m["epoch"] = "7"; }), "epoch",
                "expected unsigned integer, got string");
  check_refused(damaged(full_beacon(), [](value::map& m) { m.erase("instance"); }), "instance",
                "missing required key");
  check_refused(damaged(full_beacon(), [](value::map& m) { m["instance"] = ""; }), "instance", "must not be empty");
  check_refused(damaged(full_beacon(), [](value::map& m) { m["state"] = "leader"; }), "state",
                "unknown value 'leader' (expected active|standby|handover)");
  check_refused(damaged(full_beacon(), [](value::map& m) { m["rank"] = -1; }), "rank",
                "expected unsigned integer");
  check_refused(damaged(full_beacon(), [](value::map& m) { m["to"] = 5; }), "to", "expected string");
  check_refused(damaged(full_beacon(), [](value::map& m) { m.erase("src"); }), "src", "missing required key");
  const auto body = encode(samples::env(), full_beacon());
  check_refused(body.substr(0, body.size() - 2), "", "truncated body");
  check_refused(body + std::string(1, '\xc0'), "", "trailing bytes");
  // Unknown keys are ignored: the contract only grows.
  auto extra = damaged(full_beacon(), [](value::map& m) { m["lease_ms"] = 5; });
  CHECK(decode_rm_ha(topics::rm_ha, extra).ok());
  // Through decode_payload, by topic, as the router decodes what other processes send.
  auto p = decode_payload(topics::rm_ha, body);
  REQUIRE(p.ok());
  CHECK(std::get<rm_ha>(p.value()) == full_beacon());
}

TEST_CASE("the envelope's epoch: written only when set, read from any RM output", "[messages][ha]") {
  auto env = samples::env();
  const auto without = encode(env, samples::full_rm_state());
  CHECK(without.find("epoch") == std::string::npos);  // HA off: not one byte changes
  env.epoch = 9;
  const auto with = encode(env, samples::full_rm_state());
  envelope got;
  auto r = decode_rm_state(topics::rm_state, with, {}, &got);
  REQUIRE(r.ok());
  CHECK(r.value() == samples::full_rm_state());
  CHECK(got.epoch == std::optional<std::uint64_t>{9});
  CHECK(decode_envelope(topics::rm_state, with).value().epoch == std::optional<std::uint64_t>{9});
  CHECK_FALSE(decode_envelope(topics::rm_state, without).value().epoch.has_value());
  // An epoch that is not an unsigned integer is an envelope error, on every message.
  auto t = tree(with);
  (*t.as_map())["epoch"] = "nine";
  auto bad = decode_rm_state(topics::rm_state, encode_value(t));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "epoch");
  auto bad_env = decode_envelope(topics::rm_state, encode_value(t));
  REQUIRE_FALSE(bad_env.ok());
  CHECK(bad_env.error().field == "epoch");
}

TEST_CASE("the work map's rm_epoch: echoed, read with the head alone, work still last", "[messages][ha]") {
  auto wm = samples::full_workmap();
  wm.rm_epoch = 300;  // two bytes wide: not a fixint
  const auto body = encode(samples::env(), wm);
  auto r = decode_workmap(topics::workmap, body);
  REQUIRE(r.ok());
  CHECK(r.value().rm_epoch == std::optional<std::uint64_t>{300});
  CHECK(r.value().work == wm.work);
  // The work array is still the map's last value, so differencing can compare it without decoding, and
  // reads the echo from the head alone.
  REQUIRE(peek_workmap_work(body).has_value());
  CHECK(decode_workmap_head(topics::workmap, body, *peek_workmap_work(body)).value().rm_epoch ==
        std::optional<std::uint64_t>{300});
  auto no_echo = samples::full_workmap();
  const auto plain = encode(samples::env(), no_echo);
  CHECK_FALSE(decode_workmap_head(topics::workmap, plain, *peek_workmap_work(plain)).value().rm_epoch.has_value());
  CHECK(*peek_workmap_work(plain) == *peek_workmap_work(body));
  CHECK_FALSE(decode_workmap(topics::workmap, plain).value().rm_epoch.has_value());
  // A string rm_epoch: the decode refuses the map, and so does the head's.
  auto t = tree(body);
  (*t.as_map())["rm_epoch"] = "300";
  const auto bad = encode_value(t);
  auto refused = decode_workmap(topics::workmap, bad);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().field == "rm_epoch");
  const auto bad_head = decode_workmap_head(topics::workmap, bad, *peek_workmap_work(bad));
  REQUIRE_FALSE(bad_head.ok());
  CHECK(bad_head.error().field == "rm_epoch");
  // Peeking a hostile body never reads past its end.
  for (std::size_t n = 0; n < body.size(); n += 7) (void)rmbus::messages::detail::peek_top_level_uint(body.substr(0, n), "rm_epoch");
}

TEST_CASE("the work map's rm_cycle: round-tripped, read with the head alone, work still last, a bad one refused",
          "[messages][ha]") {
  auto wm = samples::full_workmap();
  wm.rm_epoch = 4;
  wm.rm_cycle = 70000;
  const auto body = encode(samples::env(), wm);
  auto r = decode_workmap(topics::workmap, body);
  REQUIRE(r.ok());
  CHECK(r.value().rm_cycle == std::optional<std::uint64_t>{70000});
  CHECK(r.value().rm_epoch == std::optional<std::uint64_t>{4});
  REQUIRE(peek_workmap_work(body).has_value());
  CHECK(decode_workmap_head(topics::workmap, body, *peek_workmap_work(body)).value().rm_cycle ==
        std::optional<std::uint64_t>{70000});
  const auto plain = encode(samples::env(), samples::full_workmap());
  CHECK_FALSE(decode_workmap_head(topics::workmap, plain, *peek_workmap_work(plain)).value().rm_cycle.has_value());
  CHECK_FALSE(decode_workmap(topics::workmap, plain).value().rm_cycle.has_value());
  // The echo lies outside `work`: a repeated map with a new rm_cycle is still a repeat of the same items.
  REQUIRE(peek_workmap_work(body).has_value());
  CHECK(*peek_workmap_work(plain) == *peek_workmap_work(body));
  auto t = tree(body);
  (*t.as_map())["rm_cycle"] = -1;
  const auto bad = encode_value(t);
  auto refused = decode_workmap(topics::workmap, bad);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().field == "rm_cycle");
  const auto bad_head = decode_workmap_head(topics::workmap, bad, *peek_workmap_work(bad));
  REQUIRE_FALSE(bad_head.ok());
  CHECK(bad_head.error().field == "rm_cycle");
}

TEST_CASE("the orchestrator's fence: act on an epoch at least the highest accepted, echo it and the cycle acted on",
          "[messages][ha]") {
  epoch_fence off;
  CHECK_FALSE(off.echo_cycle().has_value());  // nothing acted on yet
  for (std::uint64_t i = 0; i < 3; ++i) CHECK(off.accept(std::nullopt, i));  // HA off: everything accepted
  CHECK_FALSE(off.echo().has_value());                                    // no epoch echoed
  CHECK(off.echo_cycle() == std::optional<std::uint64_t>{2});             // the cycle acted on still is
  CHECK(off.refused() == 0);

  epoch_fence f;
  CHECK(f.accept(3, 10));
  CHECK(f.echo() == std::optional<std::uint64_t>{3});
  CHECK(f.echo_cycle() == std::optional<std::uint64_t>{10});
  CHECK(f.accept(3, 11));        // the same active's next schedule
  CHECK_FALSE(f.accept(2, 40));  // a deposed active's late schedule: neither echo moves
  CHECK(f.echo() == std::optional<std::uint64_t>{3});
  CHECK(f.echo_cycle() == std::optional<std::uint64_t>{11});
  CHECK(f.accept(5, 1));  // a new active
  CHECK_FALSE(f.accept(3, 12));
  CHECK_FALSE(f.accept(std::nullopt, 13));  // an RM without HA cannot outrank an HA active
  CHECK(f.refused() == 3);
  CHECK(f.echo() == std::optional<std::uint64_t>{5});
  CHECK(f.echo_cycle() == std::optional<std::uint64_t>{1});
}
