// rm.schedule.changes end to end (docs/protocol.md 4.3.1): the real rmbus with [bus]
// schedule_changes_full_every. A subscriber that joins late follows the changes to exactly the schedule the
// full rm.state of the same round carries; an orchestrator that reads only the changes schedules as one
// reading rm.state does; rm.state itself still goes out every round. Waits on messages with deadlines.
#include <algorithm>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <map>
#include <mutex>

#include <zmq.hpp>

#include "bus/subscriber.hpp"
#include "messages/rm_schedule_changes.hpp"
#include "messages/schedule_follower.hpp"
#include "messages/topics.hpp"
#include "tests/e2e/rm_fixture.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::job;
using rmbus::e2e::layout;
using rmbus::e2e::rm_fixture;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;

namespace {

constexpr auto deadline = 60s;
const std::string every_5 = "[bus]\nschedule_changes_full_every = 5\n";

std::vector<msg::job_schedule> sorted(std::vector<msg::job_schedule> jobs) {
  std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return jobs;
}

// A monitor joining late: reads both topics, follows the changes, and compares each followed schedule with
// the rm.state of the same round.
struct late_subscriber {
  std::mutex mu;
  std::condition_variable cv;
  msg::schedule_follower follower;
  std::map<std::uint64_t, msg::rm_state> full_by_cycle;         // rm.state, by cycle
  std::map<std::uint64_t, msg::rm_state> followed_by_cycle;     // the follower's picture after each message
  std::uint64_t waited = 0, applied = 0, changes_messages = 0, full_messages = 0, undecoded = 0;
  std::size_t largest_changes = 0;  // jobs listed by the largest changes (not full) message
  std::unique_ptr<rmbus::bus::subscriber> sub;

  late_subscriber(zmq::context_t& ctx, const std::string& endpoint) {
    rmbus::bus::subscriber_options so;
    so.name = "late-monitor";
    so.endpoint = endpoint;
    so.topics = {std::string{msg::topics::rm_state}, std::string{msg::topics::rm_schedule_changes}};
    rmbus::bus::subscriber_handlers h;
    h.on_message = [this](rmbus::bus::bus_message&& m) {
      std::lock_guard lock{mu};
      if (m.topic == msg::topics::rm_state) {
        auto s = msg::decode_rm_state(m.topic, m.body);
        if (!s) {
          ++undecoded;
          return;
        }
        full_by_cycle[s.value().cycle] = std::move(s.value());
      } else if (m.topic == msg::topics::rm_schedule_changes) {
        msg::envelope env;
        auto c = msg::decode_rm_schedule_changes(m.topic, m.body, {}, &env);
        if (!c) {
          ++undecoded;
          return;
        }
        ++(c.value().full ? full_messages : changes_messages);
        if (!c.value().full) largest_changes = std::max(largest_changes, c.value().jobs.size());
        if (follower.take(c.value(), env.epoch) == msg::schedule_follower::outcome::applied) {
          ++applied;
          followed_by_cycle[c.value().cycle] = follower.schedule();
        } else {
          ++waited;
        }
      }
      cv.notify_all();
    };
    sub = std::make_unique<rmbus::bus::subscriber>(ctx, so, h);
    sub->start();
  }
  ~late_subscriber() { sub->stop(); }

  // Rounds for which both pictures arrived.
  std::size_t compared() {
    std::size_t n = 0;
    for (const auto& [cycle, s] : followed_by_cycle) n += full_by_cycle.count(cycle);
    return n;
  }
  bool wait(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    std::unique_lock lock{mu};
    return cv.wait_for(lock, timeout, done);
  }
};

}  // namespace

TEST_CASE("a late subscriber of the changes has every round the picture rm.state gives") {
  rm_fixture f{layout::single, {}, every_5};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 1024));
  c.submit(job("carol-1", "carol", "beta-normal", 2048, 3));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 32; }, deadline));
  // Joins now, mid-stream; then the schedule keeps changing (bob arrives, alice shrinks, dave comes and goes).
  zmq::context_t ctx;
  late_subscriber late{ctx, f.bus_sub()};
  c.submit(job("bob-1", "bob", "normal", 1024));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "bob-1") == 16; }, deadline));
  c.submit(job("dave-1", "dave", "beta-normal", 1024, 2));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "dave-1") == 2; }, deadline));
  c.complete("dave-1");
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::find_job(s, "dave-1") == nullptr; }, deadline));
  REQUIRE(late.wait([&] { return late.compared() >= 12; }, deadline));

  std::lock_guard lock{late.mu};
  std::size_t checked = 0;
  for (const auto& [cycle, followed] : late.followed_by_cycle) {
    auto full = late.full_by_cycle.find(cycle);
    if (full == late.full_by_cycle.end()) continue;
    INFO("cycle " << cycle);
    CHECK(sorted({followed.jobs.begin(), followed.jobs.end()}) ==
          sorted({full->second.jobs.begin(), full->second.jobs.end()}));
    CHECK(followed.workmap_seq == full->second.workmap_seq);
    ++checked;
  }
  CHECK(checked >= 12);
  CHECK(late.undecoded == 0);
  CHECK(late.changes_messages > late.full_messages);  // a full schedule every 5 rounds
  CHECK(late.largest_changes < 4);                    // a changes message lists only the jobs that changed
}

TEST_CASE("an orchestrator that reads only the changes schedules as one that reads rm.state") {
  rm_fixture f{layout::split, {}, every_5};
  f.remake_cluster([](ts::cluster_options& co) { co.schedule_changes = true; });
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 1024));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 32; }, deadline));
  c.submit(job("bob-1", "bob", "normal", 1024));
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) {
        const auto* a = ts::find_job(s, "alice-1");
        return a != nullptr && a->shares.size() == 16 && ts::active_shares(s, "alice-1") == 16 &&
               ts::active_shares(s, "bob-1") == 16;
      },
      deadline));
  CHECK(ts::double_bookings(*c.last_state(), rmbus::e2e::node_quanta()).empty());
  CHECK(c.schedule_changes_applied() > 5);
}
