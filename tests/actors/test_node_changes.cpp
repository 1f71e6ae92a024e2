// The heartbeat intake's node table travels as numbered changes, not snapshots: a node's first heartbeat
// sends one change (not the table), a heartbeat that changes nothing sends none, a late reader gets a
// snapshot and then changes, and rm.nodes carries a node's quanta from its first heartbeat. Actors wired
// through the router in one process, as rmbus runs them; heartbeats go in as the bus bridge hands them over.
#include <algorithm>
#include <map>
#include <set>

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include "actors/detail/spawn.hpp"
#include "actors/node_replica.hpp"
#include "bus/bus_message.hpp"
#include "config/loader.hpp"
#include "messages/heartbeat.hpp"
#include "messages/topics.hpp"

namespace msg = rmbus::messages;
using namespace rmbus::actors;

namespace {

// A long heartbeat interval: no watchdog tick interferes; changes leave with the intake's short batch window.
// Pool "big" has a quantum of its own (2 GB) and 1 GB is reserved on every node.
std::string config_text(int heartbeat_interval_ms) {
  return R"toml(
[scheduling]
quantum = "1G"
reserved_dram = "1G"

[timing]
heartbeat_interval_ms = )toml" + std::to_string(heartbeat_interval_ms) + R"toml(
init_stability = 1
node_stability = 6

[[nodepool]]
name = "default"

[[nodepool]]
name = "big"
quantum = "2G"
nodes = ["b1"]

[[class]]
name = "normal"
policy = "FAIR_SHARE"
nodepool = "default"
default = true
)toml";
}

struct wired_intake {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::actor router;
  std::vector<caf::actor> actors;
  envelope_stamper agents{"test-agents"};
  envelope_stamper reader{"test-reader"};

  static caf::actor_system_config& threads(caf::actor_system_config& c) {
    c.set("scheduler.max-threads", 2);
    return c;
  }
  explicit wired_intake(bool with_publication = false, int heartbeat_interval_ms = 60000,
                        const std::string& extra_config = {})
      : sys(threads(cfg)) {
    auto rm = std::make_shared<const rmbus::config::rm_config>(
        rmbus::config::parse_native(config_text(heartbeat_interval_ms) + extra_config, "test.toml"));
    router = spawn_router(sys, caf::actor{}, "rmbus.test", false);
    actor_env env{router, "rmbus.test", rm, {}};
    actors.push_back(spawn_heartbeat_intake(sys, env));
    if (with_publication) actors.push_back(spawn_publication(sys, env));
  }
  ~wired_intake() {
    for (auto& a : actors) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(router, caf::exit_reason::user_shutdown);
  }
  void heartbeat(const std::string& node, std::uint64_t mb) {
    msg::heartbeat hb;
    hb.node = node;
    hb.ip = "10.0.0.1";
    hb.memory_mb = mb;
    const auto env = agents.next(msg::topics::heartbeat);
    caf::anon_send(router, rmbus::bus::bus_message{std::string{msg::topics::heartbeat}, msg::encode(env, hb), env});
  }
  void subscribe(caf::scoped_actor& self, std::string_view topic) {
    caf::anon_send(router, atoms::subscribe::value, std::string{topic}, caf::actor{self});
  }
  void ask_snapshot() {
    const std::string topic{msg::internal_topics::node_sync};
    caf::anon_send(router, atoms::route::value,
                   msg::routed_message{topic, reader.next(topic),
                                       std::make_shared<const msg::payload>(msg::node_sync_request{"test-reader", {}})});
  }
};

// What one wait saw: every node_changes batch, node_ops and snapshot, in arrival order.
struct seen {
  std::vector<msg::node_changes> batches;
  std::vector<msg::node_op> ops;
  std::vector<msg::node_snapshot> snapshots;
  std::vector<msg::rm_nodes> rm_nodes;
  std::vector<msg::rm_event> events;
  std::vector<std::string> batch_src;
};

// Receives until `done(s)` holds or `patience` passes; then drains what follows within `quiet` (to see that
// nothing more comes).
template <class Done>
seen receive_until(caf::scoped_actor& self, Done done, std::chrono::milliseconds patience = std::chrono::seconds(5),
                   std::chrono::milliseconds quiet = std::chrono::milliseconds(200)) {
  seen s;
  auto take = [&](const msg::routed_message& m) {
    if (const auto* b = m.as<msg::node_changes>()) {
      s.batches.push_back(*b);
      s.batch_src.push_back(m.env.src);
    } else if (const auto* o = m.as<msg::node_ops>()) {
      s.ops.insert(s.ops.end(), o->ops.begin(), o->ops.end());
    } else if (const auto* n = m.as<msg::node_snapshot>()) {
      s.snapshots.push_back(*n);
    } else if (const auto* r = m.as<msg::rm_nodes>()) {
      s.rm_nodes.push_back(*r);
    } else if (const auto* e = m.as<msg::rm_event>()) {
      s.events.push_back(*e);
    }
  };
  const auto deadline = std::chrono::steady_clock::now() + patience;
  bool timed_out = false;
  while (!done(s) && !timed_out && std::chrono::steady_clock::now() < deadline)
    self->receive([&](atoms::deliver, const msg::routed_message& m) { take(m); },
                  caf::after(patience) >> [&] { timed_out = true; });
  for (bool more = true; more;)
    self->receive([&](atoms::deliver, const msg::routed_message& m) { take(m); },
                  caf::after(quiet) >> [&] { more = false; });
  return s;
}

std::size_t entries(const seen& s) {
  std::size_t n = 0;
  for (const auto& b : s.batches) n += b.changed.size();
  return n;
}

}  // namespace

TEST_CASE("a node's first heartbeat sends one change and not the table, and a heartbeat that changes nothing sends none") {
  wired_intake t;
  caf::scoped_actor self{t.sys};
  t.subscribe(self, msg::internal_topics::node_changes);
  t.subscribe(self, msg::internal_topics::node_prefix);
  for (const char* n : {"n1", "n2", "n3"}) t.heartbeat(n, 17408);
  auto first = receive_until(self, [](const seen& s) { return entries(s) >= 3; });
  CHECK(entries(first) == 3);
  CHECK(first.ops.size() == 3);  // one `update` per new node for its scheduler
  for (const auto& b : first.batches)
    for (const auto& e : b.changed) {
      CHECK(e.state == msg::node_liveness::up);
      // (17408 - 1024 reserved) / 1024 = 16 quanta in pool default
      CHECK(e.quanta == 16);
      CHECK(e.pool == "default");
    }

  // n1 again, unchanged, and a new node n4: the next batch names n4 alone (a table would name four).
  t.heartbeat("n1", 17408);
  t.heartbeat("n4", 17408);
  auto second = receive_until(self, [](const seen& s) { return entries(s) >= 1; });
  REQUIRE(second.batches.size() == 1);
  REQUIRE(second.batches[0].changed.size() == 1);
  CHECK(second.batches[0].changed[0].node == "n4");
  CHECK(second.batches[0].heartbeats == 2);  // both heartbeats are counted for metrics
  CHECK(second.batches[0].seq == first.batches.back().seq + 1);
  REQUIRE(second.ops.size() == 1);
  CHECK(second.ops[0].node == "n4");

  // Only unchanged heartbeats: no node change, no scheduler operation (they are counted in the next batch,
  // at the latest with the watchdog's tick).
  for (const char* n : {"n1", "n2", "n3", "n4"}) t.heartbeat(n, 17408);
  auto quiet = receive_until(self, [](const seen&) { return false; }, std::chrono::milliseconds(300));
  CHECK(entries(quiet) == 0);
  CHECK(quiet.ops.empty());

  // Less memory on n2: one change with its new quanta, one update for its scheduler.
  t.heartbeat("n2", 9216);
  auto shrunk = receive_until(self, [](const seen& s) { return entries(s) >= 1; });
  REQUIRE(entries(shrunk) == 1);
  CHECK(shrunk.batches[0].changed[0].node == "n2");
  CHECK(shrunk.batches[0].changed[0].quanta == 8);  // (9216 - 1024) / 1024
  REQUIRE(shrunk.ops.size() == 1);
  CHECK(shrunk.ops[0].memory_mb == 9216);
}

TEST_CASE("a late reader gets a snapshot and then the changes numbered after it") {
  wired_intake t;
  caf::scoped_actor self{t.sys};
  t.subscribe(self, msg::internal_topics::node_changes);
  for (const char* n : {"n1", "n2", "b1"}) t.heartbeat(n, 9216);
  auto before = receive_until(self, [](const seen& s) { return entries(s) >= 3; });
  REQUIRE(entries(before) == 3);

  // A reader that joins now: it saw nothing of the above.
  node_replica late;
  t.subscribe(self, msg::internal_topics::node_snapshot);
  t.ask_snapshot();
  auto snap = receive_until(self, [](const seen& s) { return !s.snapshots.empty(); });
  REQUIRE(snap.snapshots.size() == 1);
  const auto& table = snap.snapshots[0];
  CHECK(table.seq == before.batches.back().seq);  // it covers every batch sent so far
  REQUIRE(table.nodes.size() == 3);
  CHECK(table.nodes[0].node == "b1");  // by name
  CHECK(table.nodes[0].pool == "big");
  CHECK(table.nodes[0].quanta == 4);  // (9216 - 1024) / 2048 in pool big
  std::vector<liveness_change> changes;
  CHECK(late.apply(before.batch_src.back(), table, changes) == node_replica::outcome::applied);

  t.heartbeat("n3", 9216);
  auto after = receive_until(self, [](const seen& s) { return entries(s) >= 1; });
  REQUIRE(after.batches.size() == 1);
  CHECK(after.batches[0].seq == table.seq + 1);
  CHECK(late.apply(after.batch_src[0], after.batches[0], changes) == node_replica::outcome::applied);
  CHECK(late.nodes().size() == 4);
}

TEST_CASE("rm.nodes carries a node's quanta from its first heartbeat, before any round") {
  wired_intake t{true};
  caf::scoped_actor self{t.sys};
  t.subscribe(self, msg::topics::rm_nodes);
  t.heartbeat("b1", 17408);
  // An idle RM also republishes its (still empty) node table: wait for the one the heartbeat changed.
  auto s = receive_until(self, [](const seen& x) { return !x.rm_nodes.empty() && !x.rm_nodes.back().nodes.empty(); });
  REQUIRE_FALSE(s.rm_nodes.empty());
  const auto& nodes = s.rm_nodes.back().nodes;
  REQUIRE(nodes.size() == 1);
  CHECK(nodes[0].node == "b1");
  CHECK(nodes[0].pool == "big");
  CHECK(nodes[0].state == msg::node_state::up);
  CHECK(nodes[0].memory_mb == 17408);
  CHECK(nodes[0].quanta == 8);  // (17408 - 1024) / 2048
}

TEST_CASE("a storm of new node names beyond max_nodes is refused, reported once per tick, and nothing is kept") {
  // A 300 ms watchdog tick: the limit event comes with the tick.
  wired_intake t{false, 300, "\n[limits]\nmax_nodes = 3\n"};
  caf::scoped_actor self{t.sys};
  t.subscribe(self, msg::internal_topics::node_changes);
  t.subscribe(self, msg::topics::rm_events);
  for (int i = 0; i < 10; ++i) t.heartbeat("storm-" + std::to_string(i), 9216);
  auto s = receive_until(self, [](const seen& x) {
    return std::any_of(x.events.begin(), x.events.end(), [](const auto& e) { return e.kind == "limit"; });
  });
  std::set<std::string> named;
  for (const auto& b : s.batches)
    for (const auto& e : b.changed) named.insert(e.node);
  // The first three names are kept; the other seven never enter the table.
  CHECK(named == std::set<std::string>{"storm-0", "storm-1", "storm-2"});
  const auto limit = std::find_if(s.events.begin(), s.events.end(), [](const auto& e) { return e.kind == "limit"; });
  REQUIRE(limit != s.events.end());
  CHECK(limit->detail.at("what") == "max_nodes");
  CHECK(limit->detail.at("limit") == "3");
  CHECK(limit->detail.at("refused") == "7");
  CHECK(std::count_if(s.events.begin(), s.events.end(), [](const auto& e) { return e.kind == "limit"; }) == 1);
}

TEST_CASE("nodes down longer than forget_down_ms are offered to their schedulers, forgotten only when a scheduler forgets them, and come back as new nodes in their configured pool") {
  // Ticks every 100 ms: down after 6 silent ticks (~0.6 s), offered 300 ms later. The table holds 3 nodes.
  wired_intake t{false, 100, "\n[limits]\nmax_nodes = 3\nforget_down_ms = 300\n"};
  caf::scoped_actor self{t.sys};
  t.subscribe(self, msg::internal_topics::node_changes);
  t.subscribe(self, msg::internal_topics::node_prefix);
  t.subscribe(self, msg::topics::rm_events);
  // b1 is named in pool big's node list; s1 and s2 are invented and land in the first pool, default.
  for (const char* n : {"b1", "s1", "s2"}) t.heartbeat(n, 9216);
  const auto named = [](const seen& s) {
    std::set<std::string> names;
    for (const auto& b : s.batches)
      for (const auto& e : b.changed) names.insert(e.node);
    return names;
  };
  auto first = receive_until(self, [&](const seen& s) { return named(s).size() >= 3; }, std::chrono::seconds(5),
                             std::chrono::milliseconds(0));
  REQUIRE(named(first) == std::set<std::string>{"b1", "s1", "s2"});
  t.heartbeat("real", 9216);  // the table is full: refused
  const auto offered = [](const seen& s, const std::string& node) {
    return std::count_if(s.ops.begin(), s.ops.end(), [&](const msg::node_op& o) {
      return o.op == msg::node_op_kind::forget && o.node == node;
    });
  };
  auto offers = receive_until(
      self, [&](const seen& s) { return offered(s, "b1") > 0 && offered(s, "s1") > 0 && offered(s, "s2") > 0; },
      std::chrono::seconds(10), std::chrono::milliseconds(0));
  REQUIRE(offered(offers, "b1") == 1);
  REQUIRE(offered(offers, "s2") == 1);
  // Nothing is forgotten before the schedulers answer: no batch names a forgotten node.
  for (const auto& b : offers.batches) CHECK(b.forgotten.empty());
  // The schedulers answer: pool default forgot s1 and kept s2 (say it still holds an unmanaged reservation);
  // pool big forgot b1.
  const auto answer = [&](msg::machines_forgotten a) {
    const std::string topic{msg::internal_topics::forgotten};
    caf::anon_send(t.router, atoms::route::value,
                   msg::routed_message{topic, t.reader.next(topic), std::make_shared<const msg::payload>(std::move(a))});
  };
  answer(msg::machines_forgotten{"default", {"s1"}, {"s2"}});
  answer(msg::machines_forgotten{"big", {"b1"}, {}});
  auto gone = receive_until(self, [](const seen& s) {
    return std::any_of(s.events.begin(), s.events.end(), [](const auto& e) { return e.kind == "node_forgotten"; });
  });
  std::set<std::string> forgotten;
  for (const auto& b : gone.batches) forgotten.insert(b.forgotten.begin(), b.forgotten.end());
  CHECK(forgotten == std::set<std::string>{"b1", "s1"});
  // One event for both (they were forgotten within one tick), naming the count and the time.
  const auto ev = std::find_if(gone.events.begin(), gone.events.end(), [](const auto& e) { return e.kind == "node_forgotten"; });
  REQUIRE(ev != gone.events.end());
  CHECK(ev->detail.at("count") == "2");
  CHECK(ev->detail.at("forget_down_ms") == "300");

  // Two places free in the table (3 - s2): a real new node is admitted, and b1 heartbeating again is new,
  // placed in its configured pool big (its update goes to big's scheduler with nodepool big).
  t.heartbeat("real", 9216);
  t.heartbeat("b1", 9216);
  auto back = receive_until(self, [&](const seen& s) { return named(s).count("real") && named(s).count("b1"); });
  std::map<std::string, msg::node_entry> entry_of;
  for (const auto& b : back.batches)
    for (const auto& e : b.changed) entry_of.emplace(e.node, e);  // its first entry since it came back
  REQUIRE(entry_of.count("real") == 1);
  REQUIRE(entry_of.count("b1") == 1);
  CHECK(entry_of["b1"].pool == "big");
  CHECK(entry_of["b1"].state == msg::node_liveness::up);
  CHECK(entry_of["real"].pool == "default");
  const auto b1_update = std::find_if(back.ops.begin(), back.ops.end(), [](const msg::node_op& o) {
    return o.op == msg::node_op_kind::update && o.node == "b1";
  });
  REQUIRE(b1_update != back.ops.end());
  CHECK(b1_update->nodepool == "big");
  const auto b1_up = std::find_if(back.events.begin(), back.events.end(), [](const auto& e) {
    return e.kind == "node_up" && e.detail.at("node") == "b1";
  });
  CHECK(b1_up != back.events.end());

  // s2 was kept: offered again once another forget_down_ms (300 ms) has passed since the first offer.
  auto again = receive_until(self, [&](const seen& s) { return offered(s, "s2") > 0; }, std::chrono::seconds(5),
                             std::chrono::milliseconds(0));
  CHECK(offered(again, "s2") == 1);
}

TEST_CASE("each tick reports a silent node's missed count until it is down, and never a node that keeps heartbeating") {
  // Ticks every 200 ms, down at the 6th silent tick. "quiet" is heard once; "busy" heartbeats again whenever
  // anything reaches the reader (a batch leaves at least every 50 ms while it heartbeats, so it is never a
  // whole interval silent). The intake looks only at the nodes a tick counted past the forgiven first miss:
  // quiet's entry must still move at every tick, busy's never after its first.
  wired_intake t{false, 200};
  caf::scoped_actor self{t.sys};
  t.subscribe(self, msg::internal_topics::node_changes);
  t.heartbeat("quiet", 9216);
  t.heartbeat("busy", 9216);
  std::vector<msg::node_entry> quiet, busy;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool down = false;
  while (!down && std::chrono::steady_clock::now() < deadline)
    self->receive(
        [&](atoms::deliver, const msg::routed_message& m) {
          if (const auto* b = m.as<msg::node_changes>())
            for (const auto& e : b->changed) {
              (e.node == "quiet" ? quiet : busy).push_back(e);
              if (e.node == "quiet" && e.state == msg::node_liveness::down) down = true;
            }
          t.heartbeat("busy", 9216);
        },
        caf::after(std::chrono::seconds(5)) >> [] {});
  REQUIRE(down);
  // quiet: up when first heard, then missing with 1, 2, 3, 4 missed, then down with 5: one entry per tick.
  std::vector<std::pair<msg::node_liveness, std::uint64_t>> seen_quiet;
  for (const auto& e : quiet) seen_quiet.emplace_back(e.state, e.missed);
  using L = msg::node_liveness;
  CHECK(seen_quiet == std::vector<std::pair<L, std::uint64_t>>{
                          {L::up, 0}, {L::missing, 1}, {L::missing, 2}, {L::missing, 3}, {L::missing, 4}, {L::down, 5}});
  // busy: its first heartbeat only.
  REQUIRE(busy.size() == 1);
  CHECK(busy[0].state == L::up);
  CHECK(busy[0].missed == 0);
  // Down: no longer counted, so no more entries for it over the next two ticks.
  auto after = receive_until(self, [](const seen&) { return false; }, std::chrono::milliseconds(500));
  for (const auto& b : after.batches)
    for (const auto& e : b.changed) CHECK(e.node != "quiet");
}

TEST_CASE("a public input reaches every local subscriber of its topic whole, the last one included") {
  // The router copies the bytes for every consumer but the last, which gets them moved: each must still
  // see the body exactly as it came off the bus (here the intake and two more subscribers of heartbeats).
  wired_intake t;
  caf::scoped_actor first{t.sys}, second{t.sys};
  t.subscribe(first, msg::topics::heartbeat);
  t.subscribe(second, msg::topics::heartbeat);
  msg::heartbeat hb;
  hb.node = "a-node-name-longer-than-the-small-string-buffer";
  hb.ip = "10.0.0.1";
  hb.memory_mb = 9216;
  const auto env = t.agents.next(msg::topics::heartbeat);
  const auto body = msg::encode(env, hb);
  caf::anon_send(t.router, rmbus::bus::bus_message{std::string{msg::topics::heartbeat}, body, env});
  for (auto* who : {&first, &second}) {
    bool got = false;
    (*who)->receive(
        [&](atoms::deliver, const std::string& topic, const std::string& bytes) {
          got = true;
          CHECK(topic == msg::topics::heartbeat);
          CHECK(bytes == body);
        },
        caf::after(std::chrono::seconds(5)) >> [] {});
    CHECK(got);
  }
}
