// The delta form of orchestrator.workmap (docs/protocol.md 4.2.1): round trips, how a body is told to be a
// delta, the delta an orchestrator computes, and every way a delta is refused whole with an error naming it.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "messages/detail/codec.hpp"
#include "messages/topics.hpp"
#include "messages/workmap_delta.hpp"

using namespace rmbus::messages;

namespace {

envelope env_of(std::uint64_t seq) { return envelope{1, seq, 1'700'000'000'000, "orch"}; }

work_item item(const std::string& id, std::uint64_t mb = 1024) {
  work_item w;
  w.id = id;
  w.user = "alice";
  w.memory_mb = mb;
  w.submitted_ms = 1000;
  w.threads = 1;
  w.items_total = 10;
  return w;
}

decode_error error_of(const std::string& body) {
  auto d = decode_workmap_delta(topics::workmap, body);
  REQUIRE_FALSE(d);
  return d.error();
}

// A body with the envelope and the given extra top-level entries, built by hand.
template <class Fn>
std::string body_with(std::uint32_t extra, Fn&& fill) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env_of(7), extra);
  fill(pk);
  return detail::to_string(buf);
}

}  // namespace

TEST_CASE("a delta round-trips with and without rm_epoch") {
  workmap_delta d;
  d.base_seq = 41;
  d.added = {item("j1"), item("j2", 2048)};
  auto changed = item("j0");
  changed.state = work_state::running;
  changed.processes.push_back({"s1", "n1", process_state::running, 10, 20, 4096});
  d.changed = {changed};
  d.removed = {"gone"};
  for (auto epoch : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{7}}) {
    d.rm_epoch = epoch;
    envelope env;
    auto back = decode_workmap_delta(topics::workmap, encode(env_of(42), d), {}, &env);
    REQUIRE(back);
    CHECK(back.value() == d);
    CHECK(env.seq == 42);
    CHECK(env.src == "orch");
  }
}

TEST_CASE("a body is a delta when it has base_seq and no work before it") {
  workmap_delta d;
  d.base_seq = 3;
  CHECK(is_workmap_delta(encode(env_of(4), d)));
  workmap full;
  full.work = {item("j1")};
  CHECK_FALSE(is_workmap_delta(encode(env_of(4), full)));
  CHECK_FALSE(is_workmap_delta("not messagepack"));
  CHECK_FALSE(is_workmap_delta(""));
  // base_seq of the wrong type still marks a delta (and the delta decoder then says what is wrong).
  const auto bad = body_with(1, [](detail::packer& pk) { detail::pack_kv_str(pk, "base_seq", "x"); });
  CHECK(is_workmap_delta(bad));
  CHECK(error_of(bad).field == "base_seq");
}

TEST_CASE("make_workmap_delta lists added and changed items and removed ids: applied it gives the new map") {
  std::map<std::string, work_item> before{{"a", item("a")}, {"b", item("b")}, {"c", item("c")}};
  auto after = before;
  after.erase("a");
  after["b"].items_done = 5;
  after["d"] = item("d");
  const auto d = make_workmap_delta(9, before, after);
  CHECK(d.base_seq == 9);
  REQUIRE(d.added.size() == 1);
  CHECK(d.added[0].id == "d");
  REQUIRE(d.changed.size() == 1);
  CHECK(d.changed[0] == after["b"]);
  CHECK(d.removed == std::vector<std::string>{"a"});
  CHECK(make_workmap_delta(9, after, after) == workmap_delta{9, {}, {}, {}, {}, {}});
}

TEST_CASE("a delta without base_seq or with base_seq 0 is refused") {
  const auto none = body_with(1, [](detail::packer& pk) {
    detail::pack_key(pk, "removed");
    pk.pack_array(0);
  });
  CHECK(error_of(none).field == "base_seq");
  CHECK(error_of(none).what == "missing required key");
  workmap_delta d;
  d.base_seq = 0;
  const auto e = error_of(encode(env_of(1), d));
  CHECK(e.field == "base_seq");
  CHECK(e.what.find("at least 1") != std::string::npos);
}

TEST_CASE("one malformed item refuses the whole delta naming the item's field") {
  workmap_delta d;
  d.base_seq = 1;
  d.added = {item("ok"), item("bad")};
  auto body = encode(env_of(2), d);
  // Turn the second item's kind "job" into "jXb": an unknown enum value.
  const auto at = body.rfind("job");
  REQUIRE(at != std::string::npos);
  body[at + 1] = 'X';
  const auto e = error_of(body);
  CHECK(e.field == "added[1].kind");
  CHECK(e.what.find("unknown value 'jXb'") != std::string::npos);
}

TEST_CASE("an id named twice in one delta or an empty removed id or a work array refuses the delta") {
  workmap_delta d;
  d.base_seq = 1;
  d.added = {item("x")};
  d.removed = {"x"};
  auto e = error_of(encode(env_of(2), d));
  CHECK(e.field == "removed[0]");
  CHECK(e.what.find("named twice") != std::string::npos);

  d.added.clear();
  d.removed = {""};
  CHECK(error_of(encode(env_of(2), d)).field == "removed[0]");

  const auto with_work = body_with(2, [](detail::packer& pk) {
    detail::pack_kv_uint(pk, "base_seq", 1);
    detail::pack_key(pk, "work");
    pk.pack_array(0);
  });
  CHECK(error_of(with_work).field == "work");
}

TEST_CASE("more than workmap_delta_max_entries ids in one delta is refused: send a full map") {
  workmap_delta d;
  d.base_seq = 1;
  for (std::size_t i = 0; i <= workmap_delta_max_entries; ++i) d.removed.push_back("j" + std::to_string(i));
  const auto e = error_of(encode(env_of(2), d));
  CHECK(e.field == "removed");
  CHECK(e.what.find("send a full map") != std::string::npos);
}
