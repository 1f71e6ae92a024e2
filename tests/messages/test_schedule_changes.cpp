// rm.schedule.changes (docs/protocol.md 4.3.1): its codec and what it refuses, the changes between two
// schedules, and the subscriber's rule (messages/schedule_follower.hpp): start at a full message, apply
// changes in order, wait for the next full one after a gap, and fence epochs as rm.state.
#include <catch2/catch.hpp>

#include <algorithm>

#include "messages/detail/codec.hpp"
#include "messages/rm_schedule_changes.hpp"
#include "messages/schedule_follower.hpp"
#include "messages/topics.hpp"

using namespace rmbus::messages;
using outcome = schedule_follower::outcome;

namespace {

envelope env_of(std::uint64_t seq) { return envelope{1, seq, 1'700'000'000'000, "rm"}; }

job_schedule job(const std::string& id, std::size_t shares, job_status status = job_status::scheduled) {
  job_schedule j;
  j.id = id;
  j.status = status;
  j.memory_mb = 1024;
  j.user = "u-" + id;
  j.class_name = "normal";
  for (std::size_t i = 0; i < shares; ++i) j.shares.push_back({id + "-s" + std::to_string(i), "n1", 1, share_status::running, {}});
  return j;
}

rm_state state(std::uint64_t cycle, schedule_listing jobs) {
  rm_state s;
  s.cycle = cycle;
  s.jobs = std::move(jobs);
  s.workmap_seq = cycle * 10;
  s.workmap_src = "orch";
  return s;
}

std::vector<job_schedule> sorted(std::vector<job_schedule> jobs) {
  std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return jobs;
}

rm_schedule_changes round_trip(const rm_schedule_changes& m) {
  auto back = decode_rm_schedule_changes(topics::rm_schedule_changes, encode(env_of(1), m));
  REQUIRE(back);
  return back.value();
}

}  // namespace

TEST_CASE("full and changes messages round-trip") {
  const auto a = state(1, {job("a", 2), job("b", 1)});
  const auto b = state(2, {job("a", 3), job("c", 0, job_status::pending)});
  const auto full = full_schedule(a);
  CHECK(full.full);
  CHECK(round_trip(full) == full);
  const auto changes = make_schedule_changes(1, a, b);
  CHECK_FALSE(changes.full);
  CHECK(changes.base_cycle == 1);
  CHECK(changes.cycle == 2);
  CHECK(sorted(changes.jobs) == sorted({job("a", 3), job("c", 0, job_status::pending)}));
  CHECK(changes.removed == std::vector<std::string>{"b"});
  CHECK(round_trip(changes) == changes);
  // Nothing changed: an empty changes message, still numbered.
  const auto none = make_schedule_changes(2, b, state(3, b.jobs));
  CHECK(none.jobs.empty());
  CHECK(none.removed.empty());
  CHECK(none.cycle == 3);
}

TEST_CASE("malformed changes messages are refused with the field named") {
  auto error_of = [](const rm_schedule_changes& m) {
    auto r = decode_rm_schedule_changes(topics::rm_schedule_changes, encode(env_of(1), m));
    REQUIRE_FALSE(r);
    return r.error();
  };
  rm_schedule_changes no_base;
  no_base.cycle = 2;
  no_base.base_cycle = 0;
  CHECK(error_of(no_base).field == "base_cycle");
  rm_schedule_changes twice;
  twice.cycle = 2;
  twice.base_cycle = 1;
  twice.jobs = {job("a", 1)};
  twice.removed = {"a"};
  const auto e = error_of(twice);
  CHECK(e.field == "removed[0]");
  CHECK(e.what == "job named twice");
  // A full message with `removed` (written by hand: the encoder never writes one).
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env_of(1), 4);
  detail::pack_kv_uint(pk, "cycle", 3);
  detail::pack_kv_bool(pk, "full", true);
  detail::pack_key(pk, "jobs");
  pk.pack_array(0);
  detail::pack_key(pk, "removed");
  pk.pack_array(0);
  auto r = decode_rm_schedule_changes(topics::rm_schedule_changes, detail::to_string(buf));
  REQUIRE_FALSE(r);
  CHECK(r.error().field == "removed");
}

TEST_CASE("a late subscriber waits for a full message then follows the changes to the same schedule") {
  std::vector<rm_state> rounds{state(1, {job("a", 1)}), state(2, {job("a", 2), job("b", 1)}),
                               state(3, {job("b", 2)}), state(4, {job("b", 2), job("c", 1)}),
                               state(5, {job("c", 3), job("d", 1)}), state(6, {job("d", 2)})};
  std::vector<rm_schedule_changes> stream;
  for (std::size_t i = 0; i < rounds.size(); ++i)
    stream.push_back(i % 3 == 0 ? full_schedule(rounds[i]) : make_schedule_changes(rounds[i - 1].cycle, rounds[i - 1], rounds[i]));
  // Joining at every point of the stream: before the next full message it waits; after it, every message
  // gives the schedule of its round.
  for (std::size_t join = 0; join < stream.size(); ++join) {
    schedule_follower f;
    for (std::size_t i = join; i < stream.size(); ++i) {
      const auto o = f.take(round_trip(stream[i]), std::nullopt);
      if (!f.complete()) {
        CHECK(o == outcome::waiting);
        CHECK_FALSE(stream[i].full);
        continue;
      }
      CHECK(o == outcome::applied);
      const auto s = f.schedule();
      CHECK(s.cycle == rounds[i].cycle);
      CHECK(s.workmap_seq == rounds[i].workmap_seq);
      CHECK(sorted({s.jobs.begin(), s.jobs.end()}) == sorted({rounds[i].jobs.begin(), rounds[i].jobs.end()}));
    }
  }
}

TEST_CASE("a lost changes message is a gap: the follower waits for the next full message") {
  const auto a = state(1, {job("a", 1)});
  const auto b = state(2, {job("a", 2)});
  const auto c = state(3, {job("a", 3)});
  schedule_follower f;
  REQUIRE(f.take(full_schedule(a), std::nullopt) == outcome::applied);
  // b's changes are lost; c's build on b.
  CHECK(f.take(make_schedule_changes(2, b, c), std::nullopt) == outcome::waiting);
  CHECK_FALSE(f.complete());
  CHECK(f.gaps() == 1);
  CHECK(f.take(make_schedule_changes(3, c, state(4, c.jobs)), std::nullopt) == outcome::waiting);
  CHECK(f.gaps() == 1);  // one gap, reported once
  REQUIRE(f.take(full_schedule(state(5, {job("z", 1)})), std::nullopt) == outcome::applied);
  CHECK(f.complete());
  CHECK(f.schedule().jobs == schedule_listing{job("z", 1)});
}

TEST_CASE("epochs: a lower epoch is fenced and a higher one is followed from its first full message") {
  const auto a = state(10, {job("a", 1)});
  schedule_follower f;
  REQUIRE(f.take(full_schedule(a), 3) == outcome::applied);
  // A deposed RM of epoch 2 still publishing: ignored, whatever it says.
  CHECK(f.take(full_schedule(state(11, {job("x", 9)})), 2) == outcome::fenced);
  CHECK(f.schedule().jobs == a.jobs);
  // The new active of epoch 4 numbers its own rounds: its changes wait for its first full message.
  const auto b = state(1, {job("a", 2)});
  CHECK(f.take(make_schedule_changes(10, a, b), 4) == outcome::waiting);
  CHECK_FALSE(f.complete());
  CHECK(f.take(full_schedule(b), 4) == outcome::applied);
  CHECK(f.schedule().jobs == b.jobs);
  CHECK(f.accepted_epoch() == 4);
}
