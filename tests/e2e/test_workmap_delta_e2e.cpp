// Delta work maps end to end (docs/protocol.md 4.2.1): the real rmbus, a fake orchestrator that publishes a
// full map and then only deltas. The schedule built from deltas is the one the equivalent full map gives; a
// lost delta is detected, reported and recovered from with a full map; bad deltas are refused whole with an
// event and a counter and change nothing. Waits are on published messages with generous deadlines.
#include <algorithm>
#include <catch2/catch.hpp>
#include <httplib.h>
#include <map>
#include <mutex>

#include "messages/topics.hpp"
#include "messages/value.hpp"
#include "messages/workmap_delta.hpp"
#include "tests/e2e/rm_fixture.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::job;
using rmbus::e2e::layout;
using rmbus::e2e::rm_fixture;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;

namespace {

constexpr auto deadline = 60s;

// Every share of every job running: nothing new, preempted or evicted in flight.
bool settled(const msg::rm_state& s) {
  return std::all_of(s.jobs.begin(), s.jobs.end(), [](const msg::job_schedule& j) {
    return std::all_of(j.shares.begin(), j.shares.end(),
                       [](const msg::share_schedule& sh) { return sh.status == msg::share_status::running; });
  });
}

bool from_cluster(const msg::rm_event& e, const std::string& kind) {
  auto src = e.detail.find("src");
  return e.kind == kind && src != e.detail.end() && src->second == "e2e-cluster";
}

std::size_t events_so_far(ts::fake_cluster& c, const std::string& kind) {
  const auto seen = c.events();
  return static_cast<std::size_t>(std::count_if(seen.begin(), seen.end(), [&](const auto& e) { return from_cluster(e, kind); }));
}

// The next event of `kind` naming the cluster after the `before` already seen (wait_event offers every event
// once, in order).
std::optional<msg::rm_event> next_event(ts::fake_cluster& c, const std::string& kind, std::size_t before) {
  std::size_t matched = 0;
  return c.wait_event([&](const msg::rm_event& e) { return from_cluster(e, kind) && ++matched > before; }, deadline);
}

// The value of one series of the RM's metrics (0 when absent).
double metric(int port, const std::string& series) {
  httplib::Client c{"127.0.0.1", port};
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(5, 0);
  auto res = c.Get("/metrics");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  const auto at = res->body.find("\n" + series + " ");
  if (at == std::string::npos) return 0;
  return std::stod(res->body.substr(at + series.size() + 2));
}

// The series once it reaches `at_least` (the metrics actor counts an event as it is published; the cluster may
// see the event first), or its value at the deadline.
double wait_metric(ts::fake_cluster& c, int port, const std::string& series, double at_least) {
  double v = metric(port, series);
  for (int i = 0; i < 50 && v < at_least; ++i) {
    c.wait_state([](const msg::rm_state&) { return false; }, 200ms);  // a pause that ends with a round or 200 ms
    v = metric(port, series);
  }
  return v;
}

// Waits until the cluster has published `n` full maps; its last one's seq.
std::uint64_t wait_full_maps(ts::fake_cluster& c, std::uint64_t n) {
  for (int i = 0; i < 300 && c.maps_sent().full < n; ++i) c.wait_state([](const msg::rm_state&) { return true; }, 1s);
  REQUIRE(c.maps_sent().full >= n);
  return c.maps_sent().last_full_seq;
}

// Under `policy` (empty: DUCC's), the schedule built from deltas is the one the equivalent full map gives.
void deltas_give_the_full_maps_schedule(layout how, const rmbus::e2e::config_lines& policy) {
  rm_fixture f{how, {}, {}, policy};
  f.use_delta_maps(100000);  // one full map at the start, then only deltas
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 1024));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 32 && settled(s); }, deadline));
  // Changes that arrive only as deltas: a new user (alice shrinks by preemption), a job in the other pool,
  // one that comes and goes.
  c.submit(job("bob-1", "bob", "normal", 1024));
  c.submit(job("carol-1", "carol", "beta-normal", 2048, 3));
  c.submit(job("dave-1", "dave", "normal", 1024, 2));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "dave-1") == 2; }, deadline));
  c.complete("dave-1");
  std::optional<msg::rm_state> from_deltas;
  REQUIRE(c.wait_state(
      [&](const msg::rm_state& s) {
        const bool done = ts::find_job(s, "dave-1") == nullptr && ts::active_shares(s, "alice-1") == 16 &&
                          ts::active_shares(s, "bob-1") == 16 && ts::active_shares(s, "carol-1") == 3 && settled(s);
        if (done) from_deltas = s;
        return done;
      },
      deadline));
  const auto sent = c.maps_sent();
  // One full map at the start (two if the RM's subscription missed the first: slow joiner; it asks).
  CHECK(sent.full == 1 + sent.resyncs);
  CHECK(sent.resyncs <= 1);
  CHECK(sent.deltas > 5);
  CHECK(from_deltas->workmap_seq > sent.last_full_seq);  // answers a delta
  CHECK(ts::double_bookings(*from_deltas, rmbus::e2e::node_quanta()).empty());

  // The equivalent full map: its round must leave every job exactly as the deltas had it. Every schedule
  // is kept by the map it answers, so the one answering the full map is not missed while we learn its seq.
  std::mutex mu;
  std::map<std::uint64_t, msg::rm_state> by_map;
  c.set_state_observer([&](const msg::rm_state& s) {
    std::lock_guard lock{mu};
    if (s.workmap_seq && by_map.size() < 1000) by_map.emplace(*s.workmap_seq, s);
  });
  c.send_full_map_next();
  const auto full_seq = wait_full_maps(c, 2);
  std::optional<msg::rm_state> from_full;
  for (int i = 0; i < 60 && !from_full; ++i) {
    {
      std::lock_guard lock{mu};
      // The round answering the full map, or (rounds merge maps that arrive while one runs) the first after
      // it: the deltas after it are empty, the cluster being settled.
      if (auto it = by_map.lower_bound(full_seq); it != by_map.end()) from_full = it->second;
    }
    if (!from_full) c.wait_state([](const msg::rm_state&) { return true; }, 1s);
  }
  c.set_state_observer({});
  REQUIRE(from_full);
  CHECK(from_full->jobs == from_deltas->jobs);
  CHECK(events_so_far(c, "workmap_delta_refused") == 0);
}

}  // namespace

TEST_CASE("a schedule built from deltas is the one the equivalent full map gives") {
  for (auto how : {layout::single, layout::split}) {
    DYNAMIC_SECTION("layout " << static_cast<int>(how)) { deltas_give_the_full_maps_schedule(how, {}); }
  }
}

TEST_CASE("sparing policy: a schedule built from deltas is the one the equivalent full map gives") {
  deltas_give_the_full_maps_schedule(layout::single, rmbus::e2e::sparing_policy());
}

TEST_CASE("a lost delta is detected and reported and recovered from with a full map") {
  rm_fixture f{layout::single};
  f.use_delta_maps(100000);
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 1024));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 32 && settled(s); }, deadline));
  const auto fulls = c.maps_sent().full;
  const auto resyncs = events_so_far(c, "workmap_resync");
  // The delta carrying bob's arrival (or the one before it) never reaches the RM.
  c.lose_next_delta();
  c.submit(job("bob-1", "bob", "normal", 1024));
  const auto resync = next_event(c, "workmap_resync", resyncs);
  REQUIRE(resync);
  CHECK(resync->detail.at("reason").find("not the last map applied") != std::string::npos);
  // The orchestrator answers with a full map at once, and bob is scheduled from it.
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) { return ts::active_shares(s, "bob-1") == 16 && ts::active_shares(s, "alice-1") == 16; },
      deadline));
  const auto sent = c.maps_sent();
  CHECK(sent.lost == 1);
  CHECK(sent.resyncs >= 1);
  CHECK(sent.full > fulls);
  CHECK(wait_metric(c, f.metrics_port(), "rmbus_events_total{kind=\"workmap_resync\"}", 1) >= 1);
  CHECK(ts::double_bookings(*c.last_state(), rmbus::e2e::node_quanta()).empty());
}

TEST_CASE("bad deltas are refused whole with an event and a counter and change nothing") {
  rm_fixture f{layout::single};
  f.use_delta_maps(100000);
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 1024));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 32 && settled(s); }, deadline));
  // From here on every schedule must keep alice's 32 shares: each bad delta below would remove her job.
  std::mutex mu;
  std::size_t fewest = 32;
  c.set_state_observer([&](const msg::rm_state& s) {
    std::lock_guard lock{mu};
    fewest = std::min(fewest, ts::active_shares(s, "alice-1"));
  });
  msg::work_item stranger;
  stranger.id = "nobody";
  stranger.user = "zed";
  stranger.memory_mb = 1024;
  stranger.threads = 1;
  struct bad_delta {
    const char* name;
    std::function<std::string(const msg::envelope&, std::uint64_t)> body;
    const char* says;
  };
  const std::vector<bad_delta> cases{
      {"an unknown id",
       [&](const msg::envelope& env, std::uint64_t base) {
         return msg::encode(env, msg::workmap_delta{base, {}, {stranger}, {"alice-1"}, {}, {}});
       },
       "changed[0]: unknown id 'nobody'"},
      {"malformed: one id twice",
       [&](const msg::envelope& env, std::uint64_t base) {
         auto again = stranger;
         again.id = "alice-1";
         return msg::encode(env, msg::workmap_delta{base, {}, {again}, {"alice-1"}, {}, {}});
       },
       "named twice in one delta"},
      {"beyond the bound on entries",
       [&](const msg::envelope& env, std::uint64_t base) {
         msg::workmap_delta d{base, {}, {}, {"alice-1"}, {}, {}};
         for (std::size_t i = 0; i < msg::workmap_delta_max_entries; ++i) d.removed.push_back("x" + std::to_string(i));
         return msg::encode(env, d);
       },
       "send a full map instead"},
      {"a base the RM never had",
       [&](const msg::envelope& env, std::uint64_t base) {
         return msg::encode(env, msg::workmap_delta{base + 1000, {}, {}, {"alice-1"}, {}, {}});
       },
       ""},
  };
  double refused_before = metric(f.metrics_port(), "rmbus_events_total{kind=\"workmap_delta_refused\"}");
  for (const auto& bad : cases) {
    INFO(bad.name);
    const auto fulls = c.maps_sent().full;
    const bool gap = std::string{bad.says}.empty();
    const std::string kind = gap ? "workmap_resync" : "workmap_delta_refused";
    const auto before = events_so_far(c, kind);
    c.inject_workmap(bad.body);
    auto ev = next_event(c, kind, before);
    REQUIRE(ev);
    if (!gap) CHECK(ev->detail.at("error").find(bad.says) != std::string::npos);
    // The orchestrator's full map puts the chain back; a delta then applies again (carol arrives by delta).
    wait_full_maps(c, fulls + 1);
    const std::string next = std::string{"carol-"} + std::to_string(&bad - cases.data());
    c.submit(job(next, "carol", "beta-normal", 1024, 1));
    REQUIRE(c.wait_state([&](const msg::rm_state& s) { return ts::active_shares(s, next) == 1; }, deadline));
    if (!gap) {
      const double refused =
          wait_metric(c, f.metrics_port(), "rmbus_events_total{kind=\"workmap_delta_refused\"}", refused_before + 1);
      CHECK(refused == refused_before + 1);
      refused_before = refused;
    }
  }
  std::lock_guard lock{mu};
  CHECK(fewest == 32);
  CHECK(ts::active_shares(*c.last_state(), "alice-1") == 32);
}

TEST_CASE("HA: deltas carry the orchestrator's rm_epoch and the RM heeds it as it heeds a full map's") {
  rm_fixture f{layout::single, {}, "[ha]\nenabled = true\n"};
  f.use_delta_maps(100000);
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 1024));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 32 && settled(s); }, deadline));
  const auto accepted = c.accepted_epoch();
  REQUIRE(accepted);  // the active's schedules carry its epoch; the cluster echoes it in every delta
  CHECK(c.maps_sent().deltas > 0);
  // A delta echoing an epoch above the active's own (the orchestrator accepted a newer active's schedule):
  // the RM must step down on it, exactly as on a full map's echo, and take over again above it.
  const auto echoed = *accepted + 5;
  std::size_t seen = 0;
  const auto before = [&] {
    const auto evs = c.events();
    return static_cast<std::size_t>(
        std::count_if(evs.begin(), evs.end(), [](const msg::rm_event& e) { return e.kind == "ha_demoted"; }));
  }();
  // Its own maps paused, so that this echo is the last the RM hears (it heeds the last map's, full or delta).
  c.pause_maps(true);
  c.inject_workmap([&](const msg::envelope& env, std::uint64_t base) {
    msg::workmap_delta d{base, {}, {}, {}, echoed, {}};
    return msg::encode(env, d);
  });
  auto demoted = c.wait_event([&](const msg::rm_event& e) { return e.kind == "ha_demoted" && ++seen > before; }, deadline);
  REQUIRE(demoted);
  CHECK(demoted->detail.at("by") == "orchestrator");
  CHECK(demoted->detail.at("heard_epoch") == std::to_string(echoed));
  c.pause_maps(false);
  // It takes over again above the echoed epoch, and the cluster acts on its schedules (alice keeps her shares).
  for (int i = 0; i < 60 && c.accepted_epoch().value_or(0) <= echoed; ++i)
    c.wait_state([](const msg::rm_state&) { return true; }, 1s);
  CHECK(c.accepted_epoch().value_or(0) > echoed);
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 32; }, deadline));
}

// Full maps are taken item by item (actors/workmap_bytes.hpp): only items whose bytes changed are decoded.
// What that cannot settle falls back to the whole decode, with the same outcome as before: a damaged item
// keeps its last good state and is reported with its id; `work` that is not MessagePack at all (which the bus
// no longer reads, leaving it to differencing) is refused whole; and scheduling goes on from the last map.
TEST_CASE("full maps taken item by item: a damaged item keeps its last good state and junk work is refused whole") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "normal", 1024, 2));
  c.submit(job("bob-1", "bob", "normal", 1024, 2));
  const auto both = [](const msg::rm_state& s) {
    return ts::active_shares(s, "alice-1") == 2 && ts::active_shares(s, "bob-1") == 2 && settled(s);
  };
  REQUIRE(c.wait_state(both, deadline));
  wait_full_maps(c, c.maps_sent().full + 2);  // the RM holds a map that decoded whole, by its items' bytes

  // The orchestrator's own map with alice-1's state damaged: the one item is refused, alice keeps her shares.
  auto tree = msg::decode_value("t", msg::encode(msg::envelope{1, 1, 1, "e2e-cluster"}, c.workmap()));
  REQUIRE(tree);
  auto& work = *(*tree.value().as_map()).at("work").as_array();
  for (auto& item : work)
    if (*item.as_map()->at("id").as_string() == "alice-1") (*item.as_map())["state"] = msg::value{"bogus"};
  c.inject_workmap([damaged = tree.value()](const msg::envelope& env, std::uint64_t) {
    auto body = damaged;
    auto& top = *body.as_map();
    top["seq"] = msg::value{env.seq};
    top["ts_ms"] = msg::value{env.ts_ms};
    top["src"] = msg::value{env.src};
    return msg::encode_value(body);  // keys in order: `work` stays last
  });
  auto damaged = c.wait_event(
      [&](const msg::rm_event& e) {
        return e.kind == "bad_message" && e.detail.count("job") > 0 && e.detail.at("job") == "alice-1";
      },
      deadline);
  REQUIRE(damaged);
  CHECK(damaged->detail.at("field").find(".state") != std::string::npos);

  // A map whose `work` is not MessagePack: refused whole by differencing, naming the topic.
  c.inject_workmap([](const msg::envelope& env, std::uint64_t) {
    msg::workmap empty;
    auto body = msg::encode(env, empty);
    body.pop_back();                  // the empty array ...
    return body + "\x92\xc1\xc1";  // ... becomes two bytes that are never valid
  });
  auto junk = c.wait_event(
      [](const msg::rm_event& e) {
        return e.kind == "bad_message" && e.detail.at("topic") == msg::topics::workmap && e.detail.count("job") == 0;
      },
      deadline);
  REQUIRE(junk);
  CHECK(junk->detail.at("error").find("MessagePack") != std::string::npos);

  // Nothing was lost, and the next maps are taken as before: a new job gets its shares.
  c.submit(job("carol-1", "carol", "normal", 1024, 2));
  CHECK(c.wait_state(
      [&](const msg::rm_state& s) { return both(s) && ts::active_shares(s, "carol-1") == 2; }, deadline));
}
