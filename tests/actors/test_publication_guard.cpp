// Publication fed plans directly through the router (no scheduler, no sockets): a plan that would put a node
// above its order is not published; the pool's last good plan goes out instead, with an
// invariant_violation event naming the node and the shares, and the pool's next plan must be full. A plan of
// a replaced scheduler (an older generation) is never taken once its successor asked for its start. A change
// plan that does not follow the last plan taken is not taken: publication asks for a full plan
// (rm.internal.plansync) and publishes that.
#include <caf/all.hpp>
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "actors/detail/spawn.hpp"
#include "config/loader.hpp"
#include "messages/admin.hpp"
#include "messages/rm_event.hpp"
#include "messages/topics.hpp"

namespace msg = rmbus::messages;
namespace topics = rmbus::messages::internal_topics;
using namespace rmbus::actors;

namespace {

const char* config_text = R"toml(
[scheduling]
quantum = "1G"

[timing]
round_timeout_ms = 5000

[[nodepool]]
name = "p"

[[class]]
name = "normal"
policy = "FAIR_SHARE"
nodepool = "p"
default = true
)toml";

// Two pools, for a round that even the last good plans overbook: the one above and a second one.
const std::string two_pools_text = std::string{config_text} + R"toml(
[[nodepool]]
name = "q"
nodes = ["n02"]

[[class]]
name = "other"
policy = "FAIR_SHARE"
nodepool = "q"
)toml";

struct publication_alone {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::actor router;
  caf::actor publication;
  envelope_stamper stamper{"test-scheduler"};

  std::shared_ptr<const rmbus::config::rm_config> rm;

  explicit publication_alone(const std::string& text = config_text)
      : rm{std::make_shared<const rmbus::config::rm_config>(rmbus::config::parse_native(text, "test.toml"))} {
    router = spawn_router(sys, caf::actor{}, "rmbus.test", false);
    publication = spawn_publication(sys, actor_env{router, "rmbus.test", rm, {}});
  }
  ~publication_alone() {
    caf::anon_send_exit(publication, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(router, caf::exit_reason::user_shutdown);
  }
  template <class T>
  void route(const std::string& topic, T m) {
    auto env = stamper.next(topic);
    caf::anon_send(router, atoms::route::value,
                   msg::routed_message{topic, env, std::make_shared<msg::payload>(std::move(m))});
  }
  void round(std::uint64_t cycle) { route(std::string{topics::round}, msg::round_start{cycle, {"p"}, {}, 0, ""}); }
};

msg::pool_plan plan(std::uint64_t cycle, std::uint64_t generation, const std::vector<std::string>& share_ids) {
  msg::pool_plan p;
  p.cycle = cycle;
  p.pool = "p";
  p.quantum_mb = 1024;
  p.generation = generation;
  msg::job_schedule j;
  j.id = "alice-1";
  j.user = "alice";
  j.status = msg::job_status::scheduled;
  j.memory_mb = 1024;
  for (const auto& id : share_ids) j.shares.push_back({id, "n01", 1, msg::share_status::new_, std::nullopt});
  p.jobs = {j};
  p.jobs_count = 1;
  // n01 has 2 quanta.
  p.machines = {msg::machine_summary{"n01", "p", msg::machine_status::up, false, 2048, 2, 0}};
  p.machines_complete = true;
  return p;
}

std::vector<std::string> ids_in(const msg::rm_state& s) {
  std::vector<std::string> out;
  for (const auto& j : s.jobs)
    for (const auto& sh : j.shares) out.push_back(sh.id);
  return out;
}

// The next rm.state (and any events and requests for full plans before it) within a few seconds.
std::optional<msg::rm_state> next_state(caf::scoped_actor& self, std::vector<msg::rm_event>& events,
                                        std::vector<msg::plan_sync_request>* syncs = nullptr) {
  std::optional<msg::rm_state> out;
  bool waiting = true;
  self->receive_while([&] { return waiting; })(
      [&](atoms::deliver, const msg::routed_message& m) {
        if (const auto* s = m.as<msg::rm_state>(); s != nullptr && m.topic == msg::topics::rm_state) {
          out = *s;
          waiting = false;
        } else if (const auto* e = m.as<msg::rm_event>()) {
          events.push_back(*e);
        } else if (const auto* r = m.as<msg::plan_sync_request>(); r != nullptr && syncs != nullptr) {
          syncs->push_back(*r);
        }
      },
      caf::after(std::chrono::seconds(10)) >> [&] { waiting = false; });
  return out;
}

}  // namespace

TEST_CASE("publication publishes the last good plan instead of one that overbooks a node, and says so") {
  publication_alone t;
  caf::scoped_actor self{t.sys};
  caf::anon_send(t.router, atoms::subscribe::value, std::string{msg::topics::rm_state}, caf::actor{self});
  caf::anon_send(t.router, atoms::subscribe::value, std::string{msg::topics::rm_events}, caf::actor{self});
  std::vector<msg::rm_event> events;

  t.round(1);
  t.route(std::string{topics::plan}, plan(1, 7, {"g7.1", "g7.2"}));  // 2 of n01's 2 quanta
  auto first = next_state(self, events);
  REQUIRE(first);
  CHECK(ids_in(*first) == std::vector<std::string>{"g7.1", "g7.2"});

  // Round 2's plan lists two shares more on n01: 4 quanta on a node of 2.
  t.round(2);
  t.route(std::string{topics::plan}, plan(2, 7, {"g7.1", "g7.2", "g7.3", "g7.4"}));
  auto second = next_state(self, events);
  REQUIRE(second);
  CHECK(second->cycle == 2);
  CHECK(ids_in(*second) == std::vector<std::string>{"g7.1", "g7.2"});
  const auto violation = std::find_if(events.begin(), events.end(),
                                      [](const auto& e) { return e.kind == msg::event_kinds::invariant_violation; });
  REQUIRE(violation != events.end());
  CHECK(violation->detail.at("pool") == "p");
  CHECK(violation->detail.at("cycle") == "2");
  CHECK(violation->detail.at("nodes") == "n01");
  CHECK(violation->detail.at("shares") == "g7.1,g7.2,g7.3,g7.4");

  // A sound plan afterwards is published as usual.
  t.round(3);
  t.route(std::string{topics::plan}, plan(3, 7, {"g7.1"}));
  auto third = next_state(self, events);
  REQUIRE(third);
  CHECK(ids_in(*third) == std::vector<std::string>{"g7.1"});
}

TEST_CASE("a first plan that overbooks a node is not published as an empty schedule: nothing goes out that round") {
  // A fresh HA active's first round, seeded from its predecessor, has no good plan of its own to fall back on:
  // an rm.state of an empty table would list none of the running work.
  publication_alone t;
  caf::scoped_actor self{t.sys};
  caf::anon_send(t.router, atoms::subscribe::value, std::string{msg::topics::rm_state}, caf::actor{self});
  std::vector<msg::rm_event> events;
  t.round(1);
  t.route(std::string{topics::plan}, plan(1, 7, {"g7.1", "g7.2", "g7.3"}));  // 3 quanta on a node of 2
  t.round(2);
  t.route(std::string{topics::plan}, plan(2, 7, {"g7.1", "g7.2"}));  // full: the guard asked for one
  const auto first = next_state(self, events);
  REQUIRE(first);
  CHECK(first->cycle == 2);
  CHECK(ids_in(*first) == std::vector<std::string>{"g7.1", "g7.2"});
}

TEST_CASE("status counts the plans the guard refused, so that an operator sees the last line had to act") {
  publication_alone t;
  auto admin = spawn_admin(t.sys, actor_env{t.router, "rmbus.test", t.rm, {}}, [] { return rmbus::config::rm_config{}; });
  caf::scoped_actor self{t.sys};
  caf::anon_send(t.router, atoms::subscribe::value, std::string{msg::topics::rm_state}, caf::actor{self});
  std::vector<msg::rm_event> events;
  auto guard_refusals = [&] {
    // No pool or eviction answers here: status answers at its deadline, naming them, with its own counts.
    const auto body = msg::encode(msg::envelope{}, msg::admin_request{"status", {}});
    std::optional<std::uint64_t> out;
    self->request(admin, std::chrono::seconds(10), atoms::admin::value, body, std::string{"test"}, std::string{},
                  std::string{})
        .receive(
            [&](const std::string& reply) {
              auto r = msg::decode_admin_reply(msg::topics::admin, reply);
              REQUIRE(r);
              const auto* safety = r.value().results.at("safety").as_map();
              REQUIRE(safety != nullptr);
              const auto* n = safety->at("guard_refusals").as_uint();
              REQUIRE(n != nullptr);
              out = *n;
            },
            [&](const caf::error& e) { FAIL("status: " << caf::to_string(e)); });
    return out;
  };
  CHECK(guard_refusals() == std::optional<std::uint64_t>{0});
  t.round(1);
  t.route(std::string{topics::plan}, plan(1, 7, {"g7.1", "g7.2"}));
  REQUIRE(next_state(self, events));
  t.round(2);
  t.route(std::string{topics::plan}, plan(2, 7, {"g7.1", "g7.2", "g7.3"}));  // 3 quanta on a node of 2
  REQUIRE(next_state(self, events));
  CHECK(guard_refusals() == std::optional<std::uint64_t>{1});
  caf::anon_send_exit(admin, caf::exit_reason::user_shutdown);
}

TEST_CASE("once a fresh scheduler asks for its start, publication answers with the last schedule and ignores older plans") {
  publication_alone t;
  caf::scoped_actor self{t.sys};
  caf::anon_send(t.router, atoms::subscribe::value, std::string{msg::topics::rm_state}, caf::actor{self});
  caf::anon_send(t.router, atoms::subscribe::value, topics::seed_topic("p"), caf::actor{self});
  std::vector<msg::rm_event> events;

  t.round(1);
  t.route(std::string{topics::plan}, plan(1, 7, {"g7.1"}));
  REQUIRE(next_state(self, events));

  // Generation 8 replaces 7 and asks for its start: it gets round 1's schedule.
  t.route(std::string{topics::seed_request}, msg::seed_request{"p", 8});
  std::optional<msg::rm_state> seed;
  self->receive([&](atoms::deliver, const msg::routed_message& m) {
                  REQUIRE(m.topic == topics::seed_topic("p"));
                  seed = *m.as<msg::rm_state>();
                },
                caf::after(std::chrono::seconds(10)) >> [] {});
  REQUIRE(seed);
  CHECK(seed->cycle == 1);
  CHECK(ids_in(*seed) == std::vector<std::string>{"g7.1"});

  // Round 2: generation 7 answers after all (it was slow), then generation 8. Only 8's plan is published.
  t.round(2);
  t.route(std::string{topics::plan}, plan(2, 7, {"g7.1", "g7.2"}));
  t.route(std::string{topics::plan}, plan(2, 8, {"g7.1", "g8.1"}));
  auto second = next_state(self, events);
  REQUIRE(second);
  CHECK(ids_in(*second) == std::vector<std::string>{"g7.1", "g8.1"});
}

namespace {

// The next plan_sync_request for pool p within a few seconds, keeping any rm.state or event meanwhile.
std::optional<msg::plan_sync_request> next_plan_sync(caf::scoped_actor& self) {
  std::optional<msg::plan_sync_request> out;
  bool waiting = true;
  self->receive_while([&] { return waiting; })(
      [&](atoms::deliver, const msg::routed_message& m) {
        if (const auto* r = m.as<msg::plan_sync_request>()) {
          out = *r;
          waiting = false;
        }
      },
      caf::after(std::chrono::seconds(10)) >> [&] { waiting = false; });
  return out;
}

msg::pool_plan numbered(msg::pool_plan p, std::uint64_t seq, std::uint64_t base) {
  p.plan_seq = seq;
  p.base_plan_seq = base;
  p.machines_complete = base == 0;
  if (base > 0) p.machines.clear();  // nothing changed on the machines
  return p;
}

}  // namespace

TEST_CASE("a change plan that does not follow is not taken: publication asks for a full plan and publishes it") {
  publication_alone t;
  caf::scoped_actor self{t.sys};
  for (auto topic : {std::string{msg::topics::rm_state}, std::string{topics::plan_sync}})
    caf::anon_send(t.router, atoms::subscribe::value, topic, caf::actor{self});
  std::vector<msg::rm_event> events;

  t.round(1);
  t.route(std::string{topics::plan}, numbered(plan(1, 7, {"g7.1"}), 1, 0));
  auto first = next_state(self, events);
  REQUIRE(first);
  CHECK(ids_in(*first) == std::vector<std::string>{"g7.1"});

  // Round 2's plan builds on plan 2, which never came (lost between processes): not taken, a full plan asked.
  t.round(2);
  t.route(std::string{topics::plan}, numbered(plan(2, 7, {"g7.1", "g7.2"}), 3, 2));
  auto ask = next_plan_sync(self);
  REQUIRE(ask);
  CHECK(ask->pool == "p");
  CHECK(ask->generation == 7);
  // The scheduler answers at once with a full plan of the round: that one is published.
  t.route(std::string{topics::plan}, numbered(plan(2, 7, {"g7.1"}), 4, 0));
  auto second = next_state(self, events);
  REQUIRE(second);
  CHECK(second->cycle == 2);
  CHECK(ids_in(*second) == std::vector<std::string>{"g7.1"});

  // And the chain goes on from it: a change plan on plan 4 is applied to the table (alice-1 unchanged, bob-1
  // added, nothing else sent).
  t.round(3);
  auto change = numbered(plan(3, 7, {"g7.3"}), 5, 4);
  change.jobs.front().id = "bob-1";
  t.route(std::string{topics::plan}, change);
  auto third = next_state(self, events);
  REQUIRE(third);
  CHECK(ids_in(*third) == std::vector<std::string>{"g7.1", "g7.3"});
  // A change plan that names alice-1 gone removes it.
  t.round(4);
  auto gone = numbered(plan(4, 7, {}), 6, 5);
  gone.jobs.clear();
  gone.removed_jobs = {"alice-1"};
  t.route(std::string{topics::plan}, gone);
  auto fourth = next_state(self, events);
  REQUIRE(fourth);
  REQUIRE(fourth->jobs.size() == 1);
  CHECK(fourth->jobs.front().id == "bob-1");
}

TEST_CASE("after refusing a pool's plan, publication takes no change plan of it until a full plan comes") {
  publication_alone t;
  caf::scoped_actor self{t.sys};
  for (auto topic : {std::string{msg::topics::rm_state}, std::string{topics::plan_sync},
                     std::string{msg::topics::rm_events}})
    caf::anon_send(t.router, atoms::subscribe::value, topic, caf::actor{self});
  std::vector<msg::rm_event> events;

  t.round(1);
  t.route(std::string{topics::plan}, numbered(plan(1, 7, {"g7.1", "g7.2"}), 1, 0));
  REQUIRE(next_state(self, events));

  // Round 2 would put 4 quanta on n01 (of 2): refused, the last good plan published, a full plan asked for.
  t.round(2);
  t.route(std::string{topics::plan}, numbered(plan(2, 7, {"g7.1", "g7.2", "g7.3", "g7.4"}), 2, 1));
  std::vector<msg::plan_sync_request> syncs;
  auto second = next_state(self, events, &syncs);
  REQUIRE(second);
  CHECK(ids_in(*second) == std::vector<std::string>{"g7.1", "g7.2"});
  CHECK(std::count_if(events.begin(), events.end(),
                      [](const auto& e) { return e.kind == msg::event_kinds::invariant_violation; }) == 1);
  REQUIRE(syncs.size() == 1);  // asked before the round went out
  CHECK(syncs.front().pool == "p");
  CHECK(syncs.front().generation == 7);

  // The scheduler's next change builds on the refused plan 2: not taken (round 3 waits for the full plan).
  t.round(3);
  t.route(std::string{topics::plan}, numbered(plan(3, 7, {"g7.1"}), 3, 2));
  REQUIRE(next_plan_sync(self));
  // The full plan comes: round 3 is published from it.
  t.route(std::string{topics::plan}, numbered(plan(3, 7, {"g7.1", "g7.5"}), 4, 0));
  auto third = next_state(self, events);
  REQUIRE(third);
  CHECK(third->cycle == 3);
  CHECK(ids_in(*third) == std::vector<std::string>{"g7.1", "g7.5"});
}

TEST_CASE(
    "a round that even the last good plans overbook is not published, and every pool applied sends a full "
    "plan") {
  publication_alone t{two_pools_text};
  caf::scoped_actor self{t.sys};
  for (auto topic : {std::string{msg::topics::rm_state}, std::string{topics::plan_sync},
                     std::string{msg::topics::rm_events}, std::string{topics::done}})
    caf::anon_send(t.router, atoms::subscribe::value, topic, caf::actor{self});
  std::vector<msg::rm_event> events;
  const auto round = [&](std::uint64_t cycle) {
    t.route(std::string{topics::round}, msg::round_start{cycle, {"p", "q"}, {}, 0, ""});
  };
  // Pool q's plan: bob-1 with `shares` on n02, a node of 2 quanta of its own.
  const auto q_plan = [](std::uint64_t cycle, const std::vector<std::string>& shares) {
    auto p = plan(cycle, 7, {});
    p.pool = "q";
    auto& j = p.jobs.front();
    j.id = "bob-1";
    j.user = "bob";
    for (const auto& id : shares) j.shares.push_back({id, "n02", 1, msg::share_status::new_, std::nullopt});
    p.machines = {msg::machine_summary{"n02", "q", msg::machine_status::up, false, 2048, 2, 0}};
    return numbered(p, cycle, 0);
  };

  round(1);
  t.route(std::string{topics::plan}, numbered(plan(1, 7, {"g7.1", "g7.2"}), 1, 0));
  t.route(std::string{topics::plan}, q_plan(1, {"q.1"}));
  auto first = next_state(self, events);
  REQUIRE(first);
  CHECK(ids_in(*first) == std::vector<std::string>{"g7.1", "g7.2", "q.1"});

  // n01 shrinks to 1 quantum: p's plan still holds 2 there, and so does its last good plan. q's plan is
  // sound.
  round(2);
  auto shrunk = numbered(plan(2, 7, {"g7.1", "g7.2"}), 2, 0);
  shrunk.machines.front().quanta = 1;
  shrunk.machines.front().memory_mb = 1024;
  t.route(std::string{topics::plan}, shrunk);
  t.route(std::string{topics::plan}, q_plan(2, {"q.1", "q.2"}));
  // Round 2 is done without an rm.state.
  std::vector<msg::plan_sync_request> syncs;
  bool done = false, published = false;
  self->receive_while([&] { return !done; })(
      [&](atoms::deliver, const msg::routed_message& m) {
        if (const auto* d = m.as<msg::round_done>(); d != nullptr && d->cycle == 2)
          done = true;
        else if (m.as<msg::rm_state>() != nullptr)
          published = true;
        else if (const auto* r = m.as<msg::plan_sync_request>())
          syncs.push_back(*r);
      },
      caf::after(std::chrono::seconds(10)) >> [&] { done = true; });
  CHECK_FALSE(published);
  std::set<std::string> asked;
  for (const auto& r : syncs) asked.insert(r.pool);
  // p as the culprit, q because its plan was applied and taken back: it cannot be applied again.
  CHECK(asked == std::set<std::string>{"p", "q"});

  // Both answer with full plans that fit: round 3 is published from them alone.
  round(3);
  t.route(std::string{topics::plan}, [&] {
    auto p = numbered(plan(3, 7, {"g7.1"}), 3, 0);
    p.machines.front().quanta = 1;
    p.machines.front().memory_mb = 1024;
    return p;
  }());
  t.route(std::string{topics::plan}, q_plan(3, {"q.1", "q.2"}));
  auto third = next_state(self, events);
  REQUIRE(third);
  CHECK(third->cycle == 3);
  CHECK(ids_in(*third) == std::vector<std::string>{"g7.1", "q.1", "q.2"});
}
