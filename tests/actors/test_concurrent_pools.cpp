// The actors wired in one process through the router, without sockets: heartbeats and work maps go in as
// encoded bus bodies (as the bus bridge hands them over), rm.state comes out (typed; the test encodes it). Checks the cross-pool allotment under concurrent pools and that a
// malformed work-map item keeps its last good state.
#include <map>
#include <optional>
#include <set>

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include "actors/detail/spawn.hpp"
#include "bus/bus_message.hpp"
#include "config/loader.hpp"
#include "messages/heartbeat.hpp"
#include "messages/internal/topics.hpp"
#include "messages/rm_event.hpp"
#include "messages/rm_state.hpp"
#include "messages/topics.hpp"
#include "messages/workmap.hpp"

namespace msg = rmbus::messages;
using namespace rmbus::actors;

namespace {

const char* config_text = R"toml(
[scheduling]
quantum = "1G"
global_allotment = "6G"

[timing]
heartbeat_interval_ms = 100
init_stability = 1
node_stability = 50
round_timeout_ms = 5000

[[nodepool]]
name = "alpha"
nodes = ["a1", "a2"]

[[nodepool]]
name = "beta"
nodes = ["b1", "b2"]

[[class]]
name = "fixed-a"
policy = "FIXED_SHARE"
nodepool = "alpha"
priority = 5
default = true

[[class]]
name = "fixed-b"
policy = "FIXED_SHARE"
nodepool = "beta"
priority = 5

[[class]]
name = "normal"
policy = "FAIR_SHARE"
nodepool = "alpha"
priority = 10
default = true
)toml";

// What system_under_test starts with. Left out, a test plays the part itself, or starts it later.
struct system_parts {
  bool publication = true;         // start_publication() later, e.g. to make it late
  bool intake = true;              // the test answers the schedulers' requests for machines itself
  bool alpha_replacement = false;  // alpha's scheduler replaces one that failed (restarted): it knows no machine
  bool global_allotment = true;    // config_text as it is; false: without its global_allotment line
};

std::string config_of(const system_parts& with) {
  std::string text = config_text;
  if (!with.global_allotment) {
    const std::string line = "global_allotment = \"6G\"\n";
    const auto at = text.find(line);
    REQUIRE(at != std::string::npos);
    text.erase(at, line.size());
  }
  return text;
}

struct system_under_test {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::actor router;
  std::vector<caf::actor> actors;
  actor_env env;
  envelope_stamper agents{"test-agents"};
  envelope_stamper orchestrator{"test-orchestrator"};

  static caf::actor_system_config& threads(caf::actor_system_config& c) {
    c.set("scheduler.max-threads", 2);
    return c;
  }
  explicit system_under_test(system_parts with = {}) : sys(threads(cfg)) {
    auto rm =
        std::make_shared<const rmbus::config::rm_config>(rmbus::config::parse_native(config_of(with), "test.toml"));
    router = spawn_router(sys, caf::actor{}, "rmbus.test", false);
    env = actor_env{router, "rmbus.test", rm, {}};
    if (with.intake) actors.push_back(spawn_heartbeat_intake(sys, env));
    actors.push_back(spawn_workmap_diff(sys, env));
    if (with.publication) start_publication();
    actors.push_back(spawn_pool_scheduler(sys, env, "alpha", 2, {}, with.alpha_replacement));
    actors.push_back(spawn_pool_scheduler(sys, env, "beta", 1));
  }
  void start_publication() { actors.push_back(spawn_publication(sys, env)); }
  ~system_under_test() {
    for (auto& a : actors) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(router, caf::exit_reason::user_shutdown);
  }
  void heartbeat(const std::string& node, std::uint64_t mb) {
    msg::heartbeat hb;
    hb.node = node;
    hb.ip = "127.0.0.1";
    hb.memory_mb = mb;
    const auto env = agents.next(msg::topics::heartbeat);
    caf::anon_send(router, rmbus::bus::bus_message{std::string{msg::topics::heartbeat}, msg::encode(env, hb), env});
  }
  // As the bus bridge hands it over.
  void workmap(const std::string& body) {
    auto env = msg::decode_envelope(msg::topics::workmap, body);
    REQUIRE(env.ok());
    caf::anon_send(router, rmbus::bus::bus_message{std::string{msg::topics::workmap}, body, env.value()});
  }
  std::string encode(const msg::workmap& wm) { return msg::encode(orchestrator.next(msg::topics::workmap), wm); }
};

// The orchestrator's part: start a process for every new share, drop preempted or evicted ones.
void follow(std::map<std::string, msg::work_item>& work, const msg::rm_state& s) {
  for (const auto& j : s.jobs) {
    auto it = work.find(j.id);
    if (it == work.end()) continue;
    auto& procs = it->second.processes;
    for (const auto& sh : j.shares) {
      auto p = std::find_if(procs.begin(), procs.end(), [&](const auto& x) { return x.id == sh.id; });
      if (sh.status == msg::share_status::new_ && p == procs.end())
        procs.push_back({sh.id, sh.node, msg::process_state::running, 10, 10, std::nullopt});
      else if ((sh.status == msg::share_status::preempt || sh.status == msg::share_status::evict) && p != procs.end())
        procs.erase(p);
    }
    if (!procs.empty()) it->second.state = msg::work_state::running;
  }
}

msg::work_item fixed_job(const std::string& id, const std::string& cls, std::uint64_t submitted) {
  msg::work_item w;
  w.id = id;
  w.kind = msg::work_kind::job;  // a FIXED_SHARE job: its count follows its cap (a service asks one process)
  w.user = "alice";
  w.class_name = cls;
  w.memory_mb = 1024;
  w.submitted_ms = submitted;
  w.max_processes = 6;
  w.items_total = 100;
  w.threads = 1;
  return w;
}

// A fair-share job of two 1 GB processes in pool alpha.
msg::work_item bobs_job() {
  msg::work_item w;
  w.id = "job-1";
  w.user = "bob";
  w.class_name = "normal";
  w.memory_mb = 1024;
  w.max_processes = 2;
  w.items_total = 10;
  w.threads = 1;
  return w;
}

// Sends `work` as a map and hands each of pool alpha's plans to `on_alpha_plan` until the round's rm.state,
// which the orchestrator's part then follows. Nothing when no rm.state came (20 s at most for each message).
template <class OnPlan>
std::optional<msg::rm_state> round_with_plans(system_under_test& t, caf::scoped_actor& self,
                                              std::map<std::string, msg::work_item>& work,
                                              OnPlan on_alpha_plan) {
  msg::workmap wm;
  for (const auto& [id, w] : work) wm.work.push_back(w);
  t.workmap(t.encode(wm));
  std::optional<msg::rm_state> state;
  for (int i = 0; i < 50 && !state; ++i)
    self->receive(
        [&](atoms::deliver, const msg::routed_message& m) {
          if (const auto* p = m.as<msg::pool_plan>(); p != nullptr && p->pool == "alpha") on_alpha_plan(*p);
          if (const auto* s = m.as<msg::rm_state>(); s != nullptr && m.topic == msg::topics::rm_state) {
            follow(work, *s);
            state = *s;
          }
        },
        caf::after(std::chrono::seconds(20)) >> [&] { i = 50; });
  return state;
}

void subscribe_plans_and_state(system_under_test& t, caf::scoped_actor& self) {
  for (auto topic : {std::string{msg::topics::rm_state}, std::string{rmbus::messages::internal_topics::plan}})
    caf::anon_send(t.router, atoms::subscribe::value, topic, caf::actor{self});
}

std::uint64_t held_mb(const msg::rm_state& s) {
  std::uint64_t mb = 0;
  for (const auto& j : s.jobs)
    for (const auto& sh : j.shares)
      if (sh.status == msg::share_status::running || sh.status == msg::share_status::new_) mb += j.memory_mb;
  return mb;
}

}  // namespace

TEST_CASE("concurrent pools never exceed a user's global allotment together") {
  system_under_test t;
  caf::scoped_actor self{t.sys};
  caf::anon_send(t.router, atoms::subscribe::value, std::string{msg::topics::rm_state}, caf::actor{self});
  for (const char* n : {"a1", "a2", "b1", "b2"}) t.heartbeat(n, 8192);

  // alice asks 6 x 1 GB in each of two pools (FIXED_SHARE jobs, non-preemptable) with a global allotment of 6 GB:
  // whatever the timing of the two pools' rounds, together she may hold at most 6144 / 1024 = 6 processes.
  std::map<std::string, msg::work_item> work{{"svc-a", fixed_job("svc-a", "fixed-a", 1)},
                                             {"svc-b", fixed_job("svc-b", "fixed-b", 2)}};
  std::uint64_t most = 0, last = 0;
  int rounds = 0;
  for (int i = 0; i < 12; ++i) {
    msg::workmap wm;
    for (const auto& [id, w] : work) wm.work.push_back(w);
    t.workmap(t.encode(wm));
    bool got = false;
    self->receive(
        [&](atoms::deliver, const msg::routed_message& m) {
          // Through the codec, as between processes.
          const auto& topic = m.topic;
          const auto body = msg::encode_payload(m.env, *m.body);
          auto s = msg::decode_rm_state(topic, body);
          REQUIRE(s.ok());
          follow(work, s.value());
          last = held_mb(s.value());
          most = std::max(most, last);
          got = true;
        },
        caf::after(std::chrono::seconds(20)) >> [] {});
    if (!got) break;
    ++rounds;
  }
  REQUIRE(rounds >= 6);
  CHECK(most <= 6144);
  // And the allotment is used, not left idle: 6 processes in all.
  CHECK(last == 6144);
}

TEST_CASE("a plan names each user's non-preemptable memory only when an allotment is configured") {
  // Differencing's allotment partition is their only reader, and it runs only with an allotment configured.
  for (const bool with_allotment : {true, false}) {
    INFO("global allotment: " << with_allotment);
    system_parts parts;
    parts.global_allotment = with_allotment;
    system_under_test t{parts};
    REQUIRE(t.env.cfg->scheduling.settings.global_allotment_mb.has_value() == with_allotment);
    caf::scoped_actor self{t.sys};
    subscribe_plans_and_state(t, self);
    for (const char* n : {"a1", "a2", "b1", "b2"}) t.heartbeat(n, 8192);
    std::map<std::string, msg::work_item> work{{"svc-a", fixed_job("svc-a", "fixed-a", 1)}};
    std::uint64_t alice_mb = 0;  // the most any of alpha's plans named for alice
    int plans = 0;
    for (int round = 0; round < 4; ++round)
      REQUIRE(round_with_plans(t, self, work, [&](const msg::pool_plan& p) {
        ++plans;
        if (auto it = p.np_mb.find("alice"); it != p.np_mb.end()) alice_mb = std::max(alice_mb, it->second);
        if (!with_allotment) CHECK(p.np_mb.empty());
      }));
    CHECK(plans >= 4);
    // alice's FIXED_SHARE job in alpha grows by 1 GB processes up to her 6 GB allotment.
    if (with_allotment) {
      CHECK(alice_mb >= 1024);
      CHECK(alice_mb <= 6144);
    } else {
      CHECK(alice_mb == 0);
    }
  }
}

TEST_CASE("a malformed work-map item keeps its last good state and is reported") {
  system_under_test t;
  caf::scoped_actor self{t.sys};
  caf::anon_send(t.router, atoms::subscribe::value, std::string{msg::topics::rm_state}, caf::actor{self});
  caf::anon_send(t.router, atoms::subscribe::value, std::string{msg::topics::rm_events}, caf::actor{self});
  for (const char* n : {"a1", "a2"}) t.heartbeat(n, 8192);

  std::map<std::string, msg::work_item> work{{"job-1", bobs_job()}};
  auto next_state = [&]() -> std::optional<msg::rm_state> {
    std::optional<msg::rm_state> out;
    for (int i = 0; i < 50 && !out; ++i)
      self->receive(
          [&](atoms::deliver, const msg::routed_message& m) {
          // Through the codec, as between processes.
          const auto& topic = m.topic;
          const auto body = msg::encode_payload(m.env, *m.body);
            if (topic == msg::topics::rm_state) out = msg::decode_rm_state(topic, body).value();
          },
          caf::after(std::chrono::seconds(20)) >> [&] { i = 50; });
    return out;
  };
  for (int i = 0; i < 6; ++i) {
    msg::workmap wm;
    wm.work.push_back(work["job-1"]);
    t.workmap(t.encode(wm));
    auto s = next_state();
    REQUIRE(s);
    follow(work, *s);
  }
  REQUIRE(work["job-1"].processes.size() == 2);

  // The same map with job-1's memory_mb turned into a string: the item is malformed.
  msg::workmap wm;
  wm.work.push_back(work["job-1"]);
  auto body = t.encode(wm);
  const std::string key = "\xa9memory_mb";  // fixstr "memory_mb" followed by its value (uint 1024 = cd 04 00)
  auto at = body.find(key);
  REQUIRE(at != std::string::npos);
  body.replace(at + key.size(), 3, "\xa3" "bad");
  bool reported = false;
  std::optional<msg::rm_state> s;
  t.workmap(body);
  for (int i = 0; i < 50 && !s; ++i)
    self->receive(
        [&](atoms::deliver, const msg::routed_message& m) {
          // Through the codec, as between processes.
          const auto& topic = m.topic;
          const auto b = msg::encode_payload(m.env, *m.body);
          if (topic == msg::topics::rm_events) {
            auto e = msg::decode_rm_event(topic, b);
            if (e && e.value().kind == "bad_message" && e.value().detail["job"] == "job-1") reported = true;
          } else if (topic == msg::topics::rm_state) {
            s = msg::decode_rm_state(topic, b).value();
          }
        },
        caf::after(std::chrono::seconds(20)) >> [&] { i = 50; });
  REQUIRE(s);
  CHECK(reported);
  // Not taken as finished: job-1 still holds both of its shares, running.
  const msg::job_schedule* j = nullptr;
  for (const auto& x : s->jobs)
    if (x.id == "job-1") j = &x;
  REQUIRE(j != nullptr);
  CHECK(j->shares.size() == 2);
  for (const auto& sh : j->shares) CHECK(sh.status == msg::share_status::running);
}

TEST_CASE("work maps arriving before a round can run are coalesced: one round, the newest map wins") {
  system_under_test t;
  caf::scoped_actor self{t.sys};
  caf::anon_send(t.router, atoms::subscribe::value, std::string{msg::topics::rm_state}, caf::actor{self});
  for (const char* n : {"a1", "a2"}) t.heartbeat(n, 8192);
  // Three maps before readiness (init stability: one 100 ms tick); each adds a job. Scheduling starts once,
  // with the newest map: cycle 1 holds all three jobs, and no other round follows without a new map.
  msg::workmap wm;
  for (const char* id : {"j1", "j2", "j3"}) {
    msg::work_item w;
    w.id = id;
    w.user = "bob";
    w.class_name = "normal";
    w.memory_mb = 1024;
    w.max_processes = 1;
    w.items_total = 1;
    w.threads = 1;
    wm.work.push_back(w);
    t.workmap(t.encode(wm));
  }
  std::vector<msg::rm_state> states;
  for (int i = 0; i < 2; ++i)
    self->receive(
        [&](atoms::deliver, const msg::routed_message& m) {
          // Through the codec, as between processes.
          const auto& topic = m.topic;
          const auto body = msg::encode_payload(m.env, *m.body);
          states.push_back(msg::decode_rm_state(topic, body).value());
        },
        caf::after(std::chrono::milliseconds(i == 0 ? 20000 : 1500)) >> [] {});
  REQUIRE(states.size() == 1);
  CHECK(states[0].cycle == 1);
  REQUIRE(states[0].jobs.size() == 3);
  CHECK(states[0].jobs[2].id == "j3");
}

TEST_CASE("rm.state tells monitors each job's user, class and numbers, also for work refused before a pool") {
  system_under_test t;
  caf::scoped_actor self{t.sys};
  caf::anon_send(t.router, atoms::subscribe::value, std::string{msg::topics::rm_state}, caf::actor{self});
  for (const char* n : {"a1", "a2"}) t.heartbeat(n, 8192);
  msg::work_item job = fixed_job("fair-1", "normal", 1);
  job.items_total = 40;
  job.threads = 4;  // 40 items / 4 threads: 10 processes of work
  job.max_processes = 0;
  msg::work_item lost = fixed_job("lost-1", "no-such-class", 2);
  lost.user = "bob";
  msg::workmap wm;
  wm.work = {job, lost};
  t.workmap(t.encode(wm));
  std::optional<msg::rm_state> state;
  self->receive(
      [&](atoms::deliver, const msg::routed_message& m) {
          // Through the codec, as between processes.
          const auto& topic = m.topic;
          const auto body = msg::encode_payload(m.env, *m.body);
        auto s = msg::decode_rm_state(topic, body);
        REQUIRE(s.ok());
        state = s.value();
      },
      caf::after(std::chrono::seconds(20)) >> [] {});
  REQUIRE(state);
  const msg::job_schedule* fair = nullptr;
  const msg::job_schedule* refused = nullptr;
  for (const auto& j : state->jobs) (j.id == "fair-1" ? fair : refused) = &j;
  REQUIRE(fair != nullptr);
  REQUIRE(refused != nullptr);
  CHECK(fair->user == "alice");
  CHECK(fair->class_name == "normal");
  CHECK(fair->demand == 10);
  // Alone in its pool's 2 x 8 = 16 order-1 quanta, it is entitled to all of them (the fair share is an
  // entitlement, not capped by what it asks); the initialization cap (1, the shipped default) is what How
  // Much gives it in its first round.
  CHECK(fair->fair_share == 16);
  CHECK(fair->given == 1);
  CHECK(refused->id == "lost-1");
  CHECK(refused->status == msg::job_status::refused);
  CHECK(refused->user == "bob");
  CHECK(refused->class_name.empty());
}

TEST_CASE("a fresh scheduler grants nothing before publication tells it the last schedule, however late it answers") {
  // Publication starved or not yet started: what the previous scheduler granted a moment ago is known only to
  // it. The schedulers hold their first work slice and ask again (every round_timeout_ms / 4, at most 1,000 ms)
  // rather than start from the work map alone.
  namespace internal = rmbus::messages::internal_topics;
  system_under_test t{{.publication = false}};
  caf::scoped_actor self{t.sys};
  for (auto topic : {internal::plan, internal::seed_request})
    caf::anon_send(t.router, atoms::subscribe::value, std::string{topic}, caf::actor{self});
  for (const char* n : {"a1", "a2"}) t.heartbeat(n, 8192);
  msg::workmap wm;
  wm.work.push_back(bobs_job());
  t.workmap(t.encode(wm));

  int asked = 0, plans = 0;
  auto take = [&](const msg::routed_message& m) {
    if (m.topic == internal::seed_request && m.as<msg::seed_request>()->pool == "alpha") ++asked;
    if (m.topic == internal::plan && m.as<msg::pool_plan>()->pool == "alpha") ++plans;
  };
  for (int i = 0; i < 100 && asked < 3; ++i)
    self->receive([&](atoms::deliver, const msg::routed_message& m) { take(m); },
                  caf::after(std::chrono::seconds(10)) >> [&] { i = 100; });
  REQUIRE(asked >= 3);  // asked three times, a quarter of round_timeout_ms apart...
  CHECK(plans == 0);    // ...and planned nothing meanwhile

  t.start_publication();
  for (int i = 0; i < 100 && plans == 0; ++i)
    self->receive([&](atoms::deliver, const msg::routed_message& m) { take(m); },
                  caf::after(std::chrono::seconds(20)) >> [&] { i = 100; });
  CHECK(plans >= 1);  // answered, it schedules the map it held
}

TEST_CASE("a replaced scheduler grants nothing before the intake has announced its pool's machines again") {
  // With only the machines its adopted shares name, a replaced scheduler would see a pool the size of what
  // runs, and fair share would preempt to make room in it. Here the test plays the intake: it answers late,
  // first with a predecessor's answer, then with this scheduler's.
  namespace internal = rmbus::messages::internal_topics;
  system_under_test t{{.intake = false, .alpha_replacement = true}};
  caf::scoped_actor self{t.sys};
  for (auto topic : {internal::plan, internal::node_sync})
    caf::anon_send(t.router, atoms::subscribe::value, std::string{topic}, caf::actor{self});
  msg::workmap wm;
  wm.work.push_back(bobs_job());
  t.workmap(t.encode(wm));

  std::string asker;
  int asked = 0, plans = 0;
  std::optional<msg::pool_plan> plan;
  auto take = [&](const msg::routed_message& m) {
    if (const auto* r = m.as<msg::node_sync_request>(); r != nullptr && r->pool == "alpha") {
      asker = r->reader;
      ++asked;
    }
    if (const auto* p = m.as<msg::pool_plan>(); p != nullptr && p->pool == "alpha") {
      ++plans;
      plan = *p;
    }
  };
  auto receive_until = [&](const std::function<bool()>& done, std::chrono::seconds limit) {
    for (int i = 0; i < 200 && !done(); ++i)
      self->receive([&](atoms::deliver, const msg::routed_message& m) { take(m); },
                    caf::after(limit) >> [&] { i = 200; });
  };
  receive_until([&] { return asked >= 2; }, std::chrono::seconds(10));
  REQUIRE(asked >= 2);  // unanswered, it asks again (every round_timeout_ms / 4)...
  CHECK(plans == 0);    // ...and plans nothing meanwhile
  REQUIRE(asker.size() > 2);
  CHECK(asker.ends_with("/2"));  // its generation: answers to a predecessor are not its own

  auto announce = [&](msg::node_ops ops) {
    const std::string topic = internal::node_topic("alpha");
    caf::anon_send(t.router, atoms::route::value,
                   msg::routed_message{topic, t.agents.next(topic), std::make_shared<const msg::payload>(std::move(ops))});
  };
  msg::node_ops machines;
  for (const char* n : {"a1", "a2"}) machines.ops.push_back({msg::node_op_kind::update, n, "10.0.0.1", 8192, false, "alpha"});
  announce(machines);
  announce(msg::node_ops{{}, asker.substr(0, asker.rfind('/')) + "/1"});  // a predecessor's request answered
  const int asked_before = asked;
  receive_until([&] { return asked >= asked_before + 2; }, std::chrono::seconds(10));
  CHECK(plans == 0);  // still holding: its own request is unanswered

  announce(msg::node_ops{{}, asker});
  receive_until([&] { return plans > 0; }, std::chrono::seconds(20));
  REQUIRE(plan);
  // It schedules the map it held, on the announced machines (a new job starts with one process: the
  // initialization cap).
  std::size_t granted = 0, elsewhere = 0;
  for (const auto& j : plan->jobs)
    if (j.id == "job-1")
      for (const auto& sh : j.shares) {
        granted += sh.status == msg::share_status::new_;
        elsewhere += sh.node != "a1" && sh.node != "a2";
      }
  CHECK(granted >= 1);
  CHECK(elsewhere == 0);
}

TEST_CASE("a scheduler's first plan is full, its next ones carry only the changes, and a replacement starts full") {
  system_under_test t;
  caf::scoped_actor self{t.sys};
  subscribe_plans_and_state(t, self);
  for (const char* n : {"a1", "a2", "b1", "b2"}) t.heartbeat(n, 8192);

  std::map<std::string, msg::work_item> work;
  std::vector<msg::pool_plan> alpha;  // alpha's plans, in order
  std::optional<msg::rm_state> state;
  // Sends the map and collects plans until the round's rm.state.
  auto one_round = [&] {
    state = round_with_plans(t, self, work, [&](const msg::pool_plan& p) { alpha.push_back(p); });
    return state.has_value();
  };
  auto listed = [&](const msg::rm_state& s) {
    std::set<std::string> ids;
    for (const auto& j : s.jobs) ids.insert(j.id);
    return ids;
  };
  // Work arrives in alpha, then only in beta: alpha's rounds then change nothing of alpha's once its
  // processes run.
  for (int i = 0; i < 8; ++i) {
    auto w = i < 3 ? bobs_job() : fixed_job("svc-" + std::to_string(i), "fixed-b", 10);
    if (i < 3) w.id = "job-" + std::to_string(i);
    w.submitted_ms = static_cast<std::uint64_t>(i + 1);
    w.max_processes = 1;
    work[w.id] = w;
    REQUIRE(one_round());
    CHECK(listed(*state).size() == work.size());  // rm.state stays the complete schedule
  }
  REQUIRE(alpha.size() >= 8);
  CHECK(alpha.front().generation == 2);
  CHECK(alpha.front().plan_seq == 1);
  CHECK(alpha.front().full());
  bool partial = false;
  for (std::size_t k = 1; k < alpha.size(); ++k) {
    INFO("plan " << k);
    CHECK(alpha[k].base_plan_seq == alpha[k - 1].plan_seq);
    CHECK(alpha[k].plan_seq == alpha[k - 1].plan_seq + 1);
    partial = partial || alpha[k].jobs.size() < alpha[k].jobs_count;
  }
  CHECK(partial);  // some round sent fewer jobs than the pool holds

  // A replacement of alpha's scheduler (generation 3, restarted): its first plan is full.
  t.actors.push_back(spawn_pool_scheduler(t.sys, t.env, "alpha", 3, {}, true));
  alpha.clear();
  auto w = bobs_job();
  w.id = "job-6";
  work[w.id] = w;
  bool replaced = false;
  for (int i = 0; i < 10 && !replaced; ++i) {
    REQUIRE(one_round());
    replaced = std::any_of(alpha.begin(), alpha.end(), [](const auto& p) { return p.generation == 3; });
  }
  REQUIRE(replaced);
  const auto first = std::find_if(alpha.begin(), alpha.end(), [](const auto& p) { return p.generation == 3; });
  CHECK(first->plan_seq == 1);
  CHECK(first->full());
  CHECK(first->jobs.size() == first->jobs_count);
  REQUIRE(one_round());
  CHECK(listed(*state).size() == work.size());
}
