// Job accounting's arithmetic (actors/job_accounting.hpp): when a job counts as finished, the quanta-seconds
// it held integrated across published schedules, processes, preemptions and evictions counted once each, the
// times, and the record's JSON line and event.
#include <catch2/catch.hpp>

#include "actors/job_accounting.hpp"

namespace msg = rmbus::messages;
using rmbus::actors::job_accounting;
using rmbus::actors::job_record;

namespace {

msg::work_item item(const std::string& id, const std::string& user, std::uint64_t submitted,
                    msg::work_state state = msg::work_state::waiting) {
  msg::work_item w;
  w.id = id;
  w.user = user;
  w.class_name = "normal";
  w.submitted_ms = submitted;
  w.state = state;
  return w;
}

std::vector<const msg::work_item*> ptrs(const std::vector<msg::work_item>& items) {
  std::vector<const msg::work_item*> out;
  for (const auto& w : items) out.push_back(&w);
  return out;
}

msg::share_schedule share(const std::string& id, std::uint64_t quanta, msg::share_status status) {
  return msg::share_schedule{id, "n1", quanta, status, {}};
}

msg::job_schedule job(const std::string& id, std::vector<msg::share_schedule> shares) {
  msg::job_schedule j;
  j.id = id;
  j.status = msg::job_status::scheduled;
  j.shares = std::move(shares);
  return j;
}

using st = msg::share_status;

}  // namespace

TEST_CASE("quanta-seconds integrate the listed shares from schedule to schedule and up to the finishing round",
          "[actors][accounting]") {
  job_accounting acc;
  const std::vector<msg::work_item> both{item("j1", "alice", 500), item("j2", "bob", 600)};
  CHECK(acc.take_work(ptrs(both), 1000).empty());
  CHECK(acc.tracked() == 2);
  // t=2000: two new shares of 2 quanta: 4 quanta held from now; started now.
  acc.take_schedule({job("j1", {share("s1", 2, st::new_), share("s2", 2, st::new_)}), job("j2", {})}, 2000);
  // t=5000: 4 quanta x 3000 ms = 12000; s2 preempted, s3 new: 6 quanta listed (a preempted share still
  // occupies its space until its process ends).
  acc.take_schedule({job("j1", {share("s1", 2, st::running), share("s2", 2, st::preempt), share("s3", 2, st::new_)}),
                     job("j2", {})},
                    5000);
  // t=5500: + 6 x 500 = 3000 (15000); s2 still preempt: not a second preemption.
  acc.take_schedule({job("j1", {share("s1", 2, st::running), share("s2", 2, st::preempt), share("s3", 2, st::running)}),
                     job("j2", {})},
                    5500);
  // t=6000: + 6 x 500 = 3000 (18000); s2 gone, s3 evicted: 4 quanta listed.
  acc.take_schedule({job("j1", {share("s1", 2, st::running), share("s3", 2, st::evict)}), job("j2", {})}, 6000);
  // t=7000: j1 left the map: + 4 x 1000 = 4000; 22000 quanta x ms = 22.000 quanta-seconds.
  const std::vector<msg::work_item> only_j2{item("j2", "bob", 600)};
  auto done = acc.take_work(ptrs(only_j2), 7000);
  REQUIRE(done.size() == 1);
  const auto& r = done[0];
  CHECK(r.id == "j1");
  CHECK(r.user == "alice");
  CHECK(r.class_name == "normal");
  CHECK(r.kind == "job");
  CHECK(r.group.empty());
  CHECK(r.ended == "gone");
  CHECK(r.quanta_ms == 22000);
  CHECK(rmbus::actors::quanta_seconds_text(r.quanta_ms) == "22.000");
  CHECK(r.processes == 3);  // s1, s2, s3
  CHECK(r.preemptions == 1);
  CHECK(r.evictions == 1);
  CHECK(r.submitted_ms == 500);
  CHECK(r.started_ms == 2000);
  CHECK(r.finished_ms == 7000);
  CHECK(acc.tracked() == 1);
}

TEST_CASE("a completed job is accounted once, and one never seen alive is not accounted", "[actors][accounting]") {
  job_accounting acc;
  const std::vector<msg::work_item> first{item("j2", "bob", 600), item("old", "carol", 1, msg::work_state::completed)};
  CHECK(acc.take_work(ptrs(first), 1000).empty());  // "old" finished before we saw it run: no record
  CHECK(acc.tracked() == 1);
  const std::vector<msg::work_item> completed{item("j2", "bob", 600, msg::work_state::completed)};
  auto done = acc.take_work(ptrs(completed), 8000);
  REQUIRE(done.size() == 1);
  CHECK(done[0].ended == "completed");
  CHECK(done[0].quanta_ms == 0);   // never given a share
  CHECK(done[0].started_ms == 0);  // never ran
  CHECK(done[0].finished_ms == 8000);
  // Still in the map, completed: no second record; then gone: none either.
  CHECK(acc.take_work(ptrs(completed), 9000).empty());
  CHECK(acc.take_work({}, 10000).empty());
  CHECK(acc.tracked() == 0);
}

TEST_CASE("a job missing from a schedule holds nothing from then on", "[actors][accounting]") {
  job_accounting acc;
  const std::vector<msg::work_item> w{item("j1", "alice", 0)};
  acc.take_work(ptrs(w), 0);
  acc.take_schedule({job("j1", {share("s1", 3, st::running)})}, 1000);
  // t=2000: 3 x 1000 = 3000; j1 not listed (e.g. a pool's plan lost): 0 quanta from now.
  acc.take_schedule({}, 2000);
  // t=4000: relisted with the same share: a share not listed in the previous schedule counts as given again.
  acc.take_schedule({job("j1", {share("s1", 3, st::running)})}, 4000);
  // finished at 5000: + 3 x 1000 = 3000; total 6000.
  auto done = acc.take_work({}, 5000);
  REQUIRE(done.size() == 1);
  CHECK(done[0].quanta_ms == 6000);
  CHECK(done[0].processes == 2);
  CHECK(done[0].started_ms == 1000);
}

TEST_CASE("records finished in one round come in id order", "[actors][accounting]") {
  job_accounting acc;
  const std::vector<msg::work_item> w{item("b", "u", 0), item("a", "u", 0), item("c", "u", 0)};
  acc.take_work(ptrs(w), 0);
  auto done = acc.take_work({}, 10);
  REQUIRE(done.size() == 3);
  CHECK(done[0].id == "a");
  CHECK(done[1].id == "b");
  CHECK(done[2].id == "c");
}

TEST_CASE("quanta-seconds are shown exactly with three decimals", "[actors][accounting]") {
  using rmbus::actors::quanta_seconds_text;
  CHECK(quanta_seconds_text(0) == "0.000");
  CHECK(quanta_seconds_text(1) == "0.001");
  CHECK(quanta_seconds_text(123456) == "123.456");
  CHECK(quanta_seconds_text(5000050) == "5000.050");
}

TEST_CASE("the JSON line escapes what the bus may carry and keeps the field order", "[actors][accounting]") {
  job_record r;
  r.id = "j\"1";
  r.kind = "job";
  r.user = "a\\b\n\x01";
  r.class_name = "caf\xc3\xa9";  // valid UTF-8 (é) passes through
  r.ended = "gone";
  r.quanta_ms = 1500;
  r.processes = 2;
  r.preemptions = 1;
  r.evictions = 0;
  r.submitted_ms = 10;
  r.started_ms = 20;
  r.finished_ms = 30;
  CHECK(rmbus::actors::to_json_line(r) ==
        "{\"id\":\"j\\\"1\",\"kind\":\"job\",\"user\":\"a\\\\b\\n\\u0001\",\"class\":\"caf\xc3\xa9\",\"group\":\"\","
        "\"ended\":\"gone\",\"quanta_seconds\":1.500,\"processes\":2,\"preemptions\":1,\"evictions\":0,"
        "\"submitted_ms\":10,\"started_ms\":20,\"finished_ms\":30,\"from_start\":true}");
  // Bytes that are not UTF-8 (a lone continuation byte, a truncated sequence, an overlong '/') become U+FFFD.
  CHECK(rmbus::actors::json_string("x\x80y") == "\"x\\ufffdy\"");
  CHECK(rmbus::actors::json_string("\xc3") == "\"\\ufffd\"");
  CHECK(rmbus::actors::json_string("\xc0\xaf") == "\"\\ufffd\\ufffd\"");
  CHECK(rmbus::actors::json_string("\xf0\x9f\x98\x80") == "\"\xf0\x9f\x98\x80\"");  // a 4-byte sequence
  const auto e = rmbus::actors::to_event(r);
  CHECK(e.kind == "job_done");
  CHECK(e.detail.at("job") == "j\"1");
  CHECK(e.detail.at("quanta_seconds") == "1.500");
  CHECK(e.detail.at("processes") == "2");
  CHECK(e.detail.at("group").empty());
  CHECK(e.detail.at("from_start") == "true");
  CHECK(e.detail.size() == 14);
}

TEST_CASE("a job's record names the share group rm.state gives it", "[actors][accounting]") {
  job_accounting acc;
  const std::vector<msg::work_item> one{item("j1", "alice", 500)};
  CHECK(acc.take_work(ptrs(one), 1000).empty());
  auto j = job("j1", {share("s1", 1, st::running)});
  j.group = "physics";
  acc.take_schedule({j}, 2000);
  const auto done = acc.take_work({}, 3000);
  REQUIRE(done.size() == 1);
  CHECK(done[0].group == "physics");
  CHECK(done[0].user == "alice");
}

TEST_CASE("a schedule listing jobs or shares in another order counts nothing twice", "[actors][accounting]") {
  job_accounting acc;
  const std::vector<msg::work_item> both{item("a1", "alice", 100), item("b1", "bob", 100)};
  acc.take_work(ptrs(both), 1000);
  acc.take_schedule({job("a1", {share("s1", 1, st::running), share("s2", 1, st::running)}),
                     job("b1", {share("s3", 1, st::running)})},
                    2000);
  // The same shares, the jobs out of id order and a1's shares swapped; then s2 preempted, listed first.
  acc.take_schedule({job("b1", {share("s3", 1, st::running)}),
                     job("a1", {share("s2", 1, st::running), share("s1", 1, st::running)})},
                    3000);
  acc.take_schedule({job("a1", {share("s2", 1, st::preempt), share("s1", 1, st::running)}),
                     job("b1", {share("s3", 1, st::running)})},
                    4000);
  acc.take_schedule({job("a1", {share("s1", 1, st::running), share("s2", 1, st::preempt)}),
                     job("b1", {share("s3", 1, st::running)})},
                    5000);
  auto done = acc.take_work({}, 6000);
  REQUIRE(done.size() == 2);
  CHECK(done[0].id == "a1");
  CHECK(done[0].processes == 2);    // s1, s2: the swapped listing gave nothing new
  CHECK(done[0].preemptions == 1);  // s2, once, however it is listed
  // a1 held 2 quanta from 2000 to 6000: 8000 quanta x ms. b1 1 quantum over the same time: 4000.
  CHECK(done[0].quanta_ms == 8000);
  CHECK(done[1].id == "b1");
  CHECK(done[1].processes == 1);
  CHECK(done[1].quanta_ms == 4000);
}

TEST_CASE("a job already running when the accounting began is recorded as not from its start", "[actors][accounting]") {
  job_accounting acc;
  // First sight: j-new has no process yet; j-old already lists one (it ran before this accounting existed).
  auto old_job = item("j-old", "alice", 100);
  old_job.processes.emplace_back();
  old_job.processes.back().id = "s1";
  const std::vector<msg::work_item> first{item("j-new", "bob", 900), old_job};
  CHECK(acc.take_work(ptrs(first), 1000).empty());
  acc.take_schedule({job("j-new", {share("s2", 1, st::new_)}), job("j-old", {share("s1", 1, st::running)})}, 1000);
  // Later j-new lists its process too: that does not change what the first sight said.
  auto new_job = item("j-new", "bob", 900);
  new_job.processes.emplace_back();
  new_job.processes.back().id = "s2";
  const std::vector<msg::work_item> second{new_job, old_job};
  CHECK(acc.take_work(ptrs(second), 2000).empty());
  const auto done = acc.take_work({}, 3000);
  REQUIRE(done.size() == 2);
  CHECK(done[0].id == "j-new");
  CHECK(done[0].from_start);
  CHECK(done[1].id == "j-old");
  CHECK_FALSE(done[1].from_start);
  CHECK(rmbus::actors::to_json_line(done[1]).find(",\"from_start\":false}") != std::string::npos);
  CHECK(rmbus::actors::to_event(done[1]).detail.at("from_start") == "false");
}
