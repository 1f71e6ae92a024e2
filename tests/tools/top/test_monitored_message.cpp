// What rmbus-top reads off the bus: the four public RM topics decoded and folded, the RM's private traffic
// and look-alike topics ignored, and a body that does not decode shown and counted as a bad message.
#include <algorithm>
#include <catch2/catch.hpp>

#include "messages/rm_schedule_changes.hpp"
#include "messages/topics.hpp"
#include "tests/tools/top/top_fixtures.hpp"
#include "tools/top/monitored_message.hpp"

namespace msg = rmbus::messages;
using namespace rmbus::top;
using namespace rmbus::top::fixtures;

namespace {

msg::envelope env(std::uint64_t seq) { return {msg::schema_version, seq, 1'700'000'000'000, "rmbus.42.7"}; }

}  // namespace

TEST_CASE("the monitor subscribes to the four public RM topics and to nothing of rm.internal.") {
  const auto topics = monitored_topics();
  CHECK(topics == std::vector<std::string>{"rm.state", "rm.nodes", "rm.cycle", "rm.events"});
  for (const auto& t : topics) CHECK(std::string{msg::topics::rm_internal_prefix}.rfind(t, 0) != 0);
}

TEST_CASE("each public topic decodes into its message and folds into the model") {
  monitor_model m;
  fold(m, decode_monitored("rm.state", encode(env(1), schedule())), 100, "rmbus.42.7");
  fold(m, decode_monitored("rm.nodes", encode(env(1), two_pools())), 101, "rmbus.42.7");
  fold(m, decode_monitored("rm.cycle", encode(env(1), cycle("alpha", 42))), 102, "rmbus.42.7");
  fold(m, decode_monitored("rm.events", encode(env(1), preempt_event("j-alice", "j-alice.2"))), 103,
       "rmbus.42.7");
  REQUIRE(m.state());
  CHECK(*m.state() == schedule());
  CHECK(m.state_src() == "rmbus.42.7");
  CHECK(m.state_at_ms() == 100);
  REQUIRE(m.nodes());
  CHECK(*m.nodes() == two_pools());
  CHECK(m.cycles().at("alpha").cycle == cycle("alpha", 42));
  REQUIRE(m.events().size() == 1);
  CHECK(m.events()[0].text == "job=j-alice node=n1 reason=fair share share=j-alice.2");
  CHECK(m.bus().bad_messages == 0);
}

TEST_CASE("private and look-alike topics are ignored, whatever their body") {
  monitor_model m;
  for (const char* topic :
       {"rm.internal.plan", "rm.internal.work.default", "rm.statex", "rm.nodes.v2", "rm."}) {
    const auto d = decode_monitored(topic, encode(env(1), schedule()));
    REQUIRE(std::holds_alternative<ignored_topic>(d));
    CHECK(std::get<ignored_topic>(d).topic == topic);
    fold(m, d, 0, "x");
  }
  CHECK_FALSE(m.state());
  CHECK(m.events().empty());
  CHECK(m.bus().bad_messages == 0);
}

TEST_CASE("a body that does not decode is listed with its error and sender, and counted") {
  monitor_model m;
  // an rm.nodes body sent on rm.state: a well formed envelope, but no `cycle` or `jobs`
  const auto d = decode_monitored("rm.state", encode(env(3), two_pools()));
  REQUIRE(std::holds_alternative<msg::decode_error>(d));
  fold(m, d, 50, "impostor");
  fold(m, decode_monitored("rm.events", std::string("\xc1", 1)), 60, "");
  CHECK(m.bus().bad_messages == 2);
  CHECK_FALSE(m.state());
  REQUIRE(m.events().size() == 2);
  CHECK(m.events()[1].kind == "bad_message");
  CHECK(m.events()[1].text.rfind("received here: rm.state: ", 0) == 0);
  CHECK(m.events()[1].text.find("(from impostor)") != std::string::npos);
  CHECK(m.events()[0].text.rfind("received here: rm.events: ", 0) == 0);
}

TEST_CASE("an rm.state's send time (its envelope ts_ms) places its reclaim deadlines on the monitor's clock") {
  monitor_model m;
  msg::envelope e = env(1);
  e.ts_ms = grouped_sent_at_ms;
  fold(m, decode_monitored("rm.state", encode(e, grouped_schedule())), 500, "rmbus.42.7", e.ts_ms);
  REQUIRE(m.jobs().at(0).id == "j-ann");
  // its soonest deadline is 1.5 s after it was sent; it arrived at 0.5 s here: 2.0 s
  CHECK(m.jobs()[0].reclaim_at_ms == std::optional<millis>{2'000});
  // the group survives the wire
  CHECK(m.classes().at(1).groups.size() == 2);
}

TEST_CASE("with --schedule-changes the monitor follows rm.schedule.changes to the schedule rm.state would give") {
  const auto topics = monitored_topics(true);
  CHECK(topics == std::vector<std::string>{"rm.schedule.changes", "rm.nodes", "rm.cycle", "rm.events"});
  const auto full = schedule();
  REQUIRE(full.jobs.size() >= 2);
  auto next = full;
  next.cycle = full.cycle + 1;
  next.jobs.erase(next.jobs.begin());
  next.jobs.back().given += 1;
  monitor_model m;
  // Joined late: a changes message before any full one is waited through, and shows nothing.
  fold(m, decode_monitored("rm.schedule.changes", encode(env(1), msg::make_schedule_changes(full.cycle - 1, full, full))),
       90, "rmbus.42.7");
  CHECK_FALSE(m.state());
  CHECK(m.changes_waited() == 1);
  fold(m, decode_monitored("rm.schedule.changes", encode(env(2), msg::full_schedule(full))), 100, "rmbus.42.7");
  REQUIRE(m.state());
  CHECK(m.state()->jobs.size() == full.jobs.size());
  fold(m, decode_monitored("rm.schedule.changes", encode(env(3), msg::make_schedule_changes(full.cycle, full, next))),
       110, "rmbus.42.7");
  REQUIRE(m.state());
  CHECK(m.state()->cycle == next.cycle);
  auto by_id = [](const msg::schedule_listing& listed) {
    std::vector<msg::job_schedule> jobs(listed.begin(), listed.end());
    std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    return jobs;
  };
  CHECK(by_id(m.state()->jobs) == by_id(next.jobs));
  CHECK(m.state_at_ms() == 110);
  CHECK(m.bus().bad_messages == 0);
}
