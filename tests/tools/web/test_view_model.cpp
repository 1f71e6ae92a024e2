// rmbus-web's view model over hand-built RM publications: what the page receives, read back from the JSON
// exactly as the page reads it (jobs and nodes as arrays by column, pools as a class/user tree).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "messages/topics.hpp"
#include "messages/value.hpp"
#include "tools/web/view_model.hpp"

namespace msg = rmbus::messages;
using namespace rmbus::web;
using nlohmann::json;

namespace {

using ss = msg::share_status;
using js = msg::job_status;

msg::job_schedule job(std::string id, std::string user, std::string cls, js st,
                      std::vector<std::tuple<std::string, std::uint64_t, ss>> shares, std::uint64_t given,
                      std::uint64_t demand, std::uint64_t fair, std::string reason = {}) {
  msg::job_schedule j;
  j.id = std::move(id);
  j.user = std::move(user);
  j.class_name = std::move(cls);
  j.status = st;
  j.reason = std::move(reason);
  j.memory_mb = 2048;
  int n = 0;
  for (auto& [node, quanta, status] : shares) j.shares.push_back({j.id + "." + std::to_string(++n), node, quanta, status, {}});
  j.given = given;
  j.demand = demand;
  j.fair_share = fair;
  return j;
}

// alpha: a1 up (8 quanta, 2 free), a2 up in the nested alpha-gpu (8, 0 free), a3 missing (8, 8 free).
// beta:  b1 down (16, 16 free), b2 up (16, 8 free).
msg::rm_nodes nodes() {
  using st = msg::node_state;
  msg::rm_nodes n;
  n.nodes = {{"a1", "alpha", "alpha", st::up, 8192, 8, 2, 0},
             {"a2", "alpha", "alpha-gpu", st::up, 8192, 8, 0, 0},
             {"a3", "alpha", "alpha", st::missing, 8192, 8, 8, 1},
             {"b1", "beta", "beta", st::down, 16384, 16, 16, 6},
             {"b2", "beta", "beta", st::up, 16384, 16, 8, 0}};
  return n;
}

// Round 7. Class normal (alpha): ann has a job on a1 and a2 (one share being preempted) and a pending one
// that holds nothing; bob one new share on a1. Class beta-fixed (beta): carol's service on b2. dave's job was
// refused before it reached a class.
msg::rm_state state() {
  msg::rm_state s;
  s.cycle = 7;
  s.jobs = {job("j-ann", "ann", "normal", js::scheduled, {{"a1", 4, ss::running}, {"a2", 4, ss::running}, {"a2", 4, ss::preempt}},
                2, 6, 4),
            job("j-ann2", "ann", "normal", js::pending, {}, 0, 3, 2, "Waiting for preemptions."),
            job("j-bob", "bob", "normal", js::scheduled, {{"a1", 2, ss::new_}}, 1, 1, 2),
            job("svc", "carol", "beta-fixed", js::scheduled, {{"b2", 8, ss::running}}, 1, 1, 0),
            job("lost", "dave", "", js::refused, {}, 0, 0, 0, "Cannot find class gpu for the work")};
  return s;
}

msg::rm_cycle cycle(std::string pool, std::uint64_t n, std::uint64_t preempted, std::uint64_t evicted) {
  msg::rm_cycle c;
  c.pool = std::move(pool);
  c.cycle = n;
  c.preempted = preempted;
  c.evicted = evicted;
  c.total_us = 1500;
  return c;
}

template <class M>
void put(view_model& vm, M m, millis now, const std::string& src = "rmbus.1") {
  vm.fold(web_message{rmbus::top::monitored_message{std::move(m)}}, now, src);
}

json snapshot(const view_model& vm, millis now) {
  snapshot_context ctx;
  ctx.now_ms = now;
  ctx.wall_ms = 1'700'000'000'000 + now;
  ctx.seq = 5;
  ctx.endpoint = "tcp://127.0.0.1:5561";
  ctx.admin = true;
  return json::parse(vm.snapshot_json(ctx));
}

// The row of a job by id, as the page reads it.
json job_row(const json& snap, const std::string& id) {
  for (const auto& j : snap["jobs"])
    if (j[0] == id) return j;
  return nullptr;
}

json node_row(const json& snap, const std::string& name) {
  for (const auto& n : snap["nodes"])
    if (n[0] == name) return n;
  return nullptr;
}

json pool_of(const json& snap, const std::string& name) {
  for (const auto& p : snap["pools"])
    if (p["pool"] == name) return p;
  return nullptr;
}

}  // namespace

TEST_CASE("view_model: before anything arrived the page is told it waits", "[web][view_model]") {
  view_model vm;
  const auto s = snapshot(vm, 1000);
  CHECK(s["type"] == "snapshot");
  CHECK(s["health"]["cycle"].is_null());
  CHECK(s["health"]["state_age_ms"].is_null());
  CHECK(s["health"]["stale"] == false);
  CHECK(s["health"]["ha"].is_null());
  CHECK(s["jobs"].empty());
  CHECK(s["nodes"].empty());
  CHECK(s["pools"].empty());
}

TEST_CASE("view_model: jobs in rmbus-top's order with their pool, numbers as sent", "[web][view_model]") {
  view_model vm;
  put(vm, state(), 1000);
  put(vm, nodes(), 1001);
  const auto s = snapshot(vm, 1500);
  // Pending first, then refused, then scheduled; by id within each.
  std::vector<std::string> ids;
  for (const auto& j : s["jobs"]) ids.push_back(j[0]);
  CHECK(ids == std::vector<std::string>{"j-ann2", "lost", "j-ann", "j-bob", "svc"});
  CHECK(s["jobs_columns"][11] == "pool");
  // j-ann: shares on a1 and a2 (alpha): 2 held, 1 leaving; given 2, demand 6, fair 4.
  const auto ann = job_row(s, "j-ann");
  CHECK(ann[1] == "ann");
  CHECK(ann[3] == "scheduled");
  CHECK(ann[6] == 2);   // active
  CHECK(ann[7] == 1);   // leaving
  CHECK(ann[8] == 2);   // given
  CHECK(ann[9] == 6);   // demand
  CHECK(ann[10] == 4);  // fair share
  CHECK(ann[11] == "alpha");
  // j-ann2 holds nothing: its class's other jobs run in alpha, so it waits there.
  CHECK(job_row(s, "j-ann2")[11] == "alpha");
  CHECK(job_row(s, "svc")[11] == "beta");
  // dave's job never reached a class: no pool.
  CHECK(job_row(s, "lost")[11] == "");
  CHECK(s["health"]["cycle"] == 7);
  CHECK(s["health"]["state_age_ms"] == 500);
  CHECK(s["health"]["jobs"] == 5);
  CHECK(s["health"]["nodes"] == 5);
  CHECK(s["health"]["src"] == "rmbus.1");
}

TEST_CASE("view_model: every node with its shares by job, for the table and the memory picture", "[web][view_model]") {
  view_model vm;
  put(vm, state(), 1000);
  put(vm, nodes(), 1001);
  const auto s = snapshot(vm, 1500);
  // Job indexes in the list above: j-ann2 0, lost 1, j-ann 2, j-bob 3, svc 4.
  const auto a1 = node_row(s, "a1");
  CHECK(a1[1] == "alpha");
  CHECK(a1[3] == "up");
  CHECK(a1[5] == 8);
  CHECK(a1[6] == 2);
  CHECK(a1[8] == json::parse(R"([[2,4,"r"],[3,2,"n"]])"));
  const auto a2 = node_row(s, "a2");
  CHECK(a2[2] == "alpha-gpu");
  CHECK(a2[8] == json::parse(R"([[2,4,"r"],[2,4,"p"]])"));
  CHECK(node_row(s, "a3")[3] == "missing");
  CHECK(node_row(s, "a3")[8].empty());
  CHECK(node_row(s, "b2")[8] == json::parse(R"([[4,8,"r"]])"));
}

TEST_CASE("view_model: pools list classes, then users, then jobs, with awarded, demand, fair share and why below",
          "[web][view_model]") {
  view_model vm;
  put(vm, state(), 1000);
  put(vm, nodes(), 1001);
  const auto s = snapshot(vm, 1500);
  REQUIRE(s["pools"].size() == 3);  // "" (work not placed in any pool), alpha, beta
  const auto alpha = pool_of(s, "alpha");
  // Nodes up: a1 and a2, 16 quanta of which 2 free (a3 is missing: its quanta are not there to be had).
  CHECK(alpha["nodes"] == 3);
  CHECK(alpha["up"] == 2);
  CHECK(alpha["missing"] == 1);
  CHECK(alpha["quanta"] == 16);
  CHECK(alpha["free_quanta"] == 2);
  REQUIRE(alpha["classes"].size() == 1);
  const auto normal = alpha["classes"][0];
  // normal = ann (2 jobs) + bob: jobs 3, active 2 + 1, given 2 + 0 + 1, demand 6 + 3 + 1, fair 4 + 2 + 2.
  CHECK(normal["name"] == "normal");
  CHECK(normal["jobs"] == 3);
  CHECK(normal["active"] == 3);
  CHECK(normal["given"] == 3);
  CHECK(normal["demand"] == 10);
  CHECK(normal["fair_share"] == 8);
  // 3 < min(10, 8): below its fair share, and the first waiting job says why.
  CHECK(normal["below"] == true);
  CHECK(normal["reason"] == "Waiting for preemptions.");
  REQUIRE(normal["users"].size() == 2);
  const auto ann = normal["users"][0];
  CHECK(ann["name"] == "ann");
  CHECK(ann["jobs"] == 2);
  CHECK(ann["job_indexes"] == json::parse("[0,2]"));  // j-ann2 then j-ann: list order
  // ann: given 2 < min(9, 6).
  CHECK(ann["below"] == true);
  CHECK(ann["reason"] == "Waiting for preemptions.");
  const auto bob = normal["users"][1];
  // bob: given 1, min(demand 1, fair 2) = 1: not below, and no reason shown.
  CHECK(bob["below"] == false);
  CHECK(bob["reason"] == "");
  const auto beta = pool_of(s, "beta");
  CHECK(beta["up"] == 1);
  CHECK(beta["down"] == 1);
  CHECK(beta["classes"][0]["name"] == "beta-fixed");
  const auto unplaced = pool_of(s, "");
  CHECK(unplaced["classes"][0]["users"][0]["name"] == "dave");
}

TEST_CASE("view_model: preemptions and evictions per pool over the last minute, from rm.cycle", "[web][view_model]") {
  view_model vm;
  put(vm, cycle("alpha", 1, 2, 0), 1000);
  put(vm, cycle("beta", 1, 0, 0), 5000);
  put(vm, cycle("alpha", 2, 1, 1), 30000);
  // At 40 s the monitor has seen 39 s of rounds: alpha 2 + 1 preempted, 1 evicted.
  auto r = vm.rates("alpha", 40000);
  CHECK(r.preempted == 3);
  CHECK(r.evicted == 1);
  CHECK(r.span_ms == 39000);
  // At 65 s the round at 1 s has left the minute [5 s, 65 s]; the window is whole.
  r = vm.rates("alpha", 65000);
  CHECK(r.preempted == 1);
  CHECK(r.evicted == 1);
  CHECK(r.span_ms == 60000);
  CHECK(vm.rates("beta", 65000).preempted == 0);
  CHECK(vm.rates("gamma", 65000).preempted == 0);
}

TEST_CASE("view_model: the rounds kept per pool are bounded", "[web][view_model]") {
  web_limits limits;
  limits.max_rounds_per_pool = 10;
  view_model vm(limits);
  for (int i = 0; i < 100; ++i) put(vm, cycle("alpha", i, 1, 0), 1000 + i);
  // Only the last 10 rounds are remembered, each with 1 preemption.
  CHECK(vm.rates("alpha", 2000).preempted == 10);
}

TEST_CASE("view_model: events carry running numbers so the page appends only new ones", "[web][view_model]") {
  view_model vm;
  msg::rm_event e;
  e.kind = "preempt";
  e.detail = {{"job", "j-ann"}, {"node", "a2"}, {"reason", "fair share"}, {"share", "j-ann.3"}};
  put(vm, e, 1000);
  put(vm, msg::decode_error{"rm.nodes", "nodes[0].state", "unknown value 'zombie'"}, 2000);
  vm.on_rejected("rm.state: envelope: seq: missing required key", 2500);
  const auto s = snapshot(vm, 3000);
  REQUIRE(s["events"].size() == 3);
  // Newest first: [number, age, kind, text].
  CHECK(s["events"][0][0] == 3);
  CHECK(s["events"][0][1] == 500);
  CHECK(s["events"][0][2] == "bad_message");
  CHECK(s["events"][1][0] == 2);
  CHECK(s["events"][1][3] == "received here: rm.nodes: nodes[0].state: unknown value 'zombie' (from rmbus.1)");
  CHECK(s["events"][2][0] == 1);
  CHECK(s["events"][2][2] == "preempt");
  CHECK(s["events"][2][3] == "job=j-ann node=a2 reason=fair share share=j-ann.3");
  CHECK(s["health"]["events_by_kind"]["preempt"] == 1);
  CHECK(vm.events_total() == 3);
}

TEST_CASE("view_model: the stale marker after three round periods of silence, and each pool's last round",
          "[web][view_model]") {
  view_model vm;
  auto s1 = state();
  put(vm, s1, 0);
  put(vm, cycle("alpha", 7, 0, 0), 10);
  auto s2 = state();
  s2.cycle = 8;
  put(vm, s2, 1000);
  snapshot_context ctx;
  ctx.now_ms = 3500;
  // 2.5 s of silence after rounds 1 s apart: under three periods.
  auto h = json::parse(vm.health_json(ctx));
  CHECK(h["type"] == "health");
  CHECK(h["health"]["round_interval_ms"] == 1000);
  CHECK(h["health"]["stale"] == false);
  ctx.now_ms = 4500;
  h = json::parse(vm.health_json(ctx));
  CHECK(h["health"]["stale"] == true);
  CHECK(h["health"]["state_age_ms"] == 3500);
  // alpha's last rm.cycle is round 7, older than the last rm.state (8): it is behind.
  REQUIRE(h["health"]["cycles"].size() == 1);
  CHECK(h["health"]["cycles"][0]["pool"] == "alpha");
  CHECK(h["health"]["cycles"][0]["behind"] == true);
  CHECK(h["health"]["cycles"][0]["total_us"] == 1500);
}

TEST_CASE("view_model: the HA beacon's role and epoch when the RM sends one, read leniently", "[web][view_model]") {
  view_model vm;
  msg::value::map body{{"v", 1u}, {"seq", 4u}, {"ts_ms", 1u}, {"src", "rmbus.9"}, {"epoch", 12u},
                       {"instance", "rmbus.9.x"}, {"rank", 0u}, {"state", "active"}, {"future_key", "ignored"}};
  auto m = decode_web(ha_topic, msg::encode_value(msg::value{body}));
  REQUIRE(std::holds_alternative<ha_beacon>(m));
  vm.fold(std::move(m), 100, "rmbus.9");
  auto s = snapshot(vm, 200);
  CHECK(s["health"]["ha"]["epoch"] == 12);
  CHECK(s["health"]["ha"]["rank"] == 0);
  CHECK(s["health"]["ha"]["state"] == "active");
  CHECK(s["health"]["ha"]["instance"] == "rmbus.9.x");

  // A later beacon with a key of the wrong type: that key is left out, the rest shown, and it is counted.
  msg::value::map odd{{"epoch", "thirteen"}, {"state", "standby"}};
  m = decode_web(ha_topic, msg::encode_value(msg::value{odd}));
  REQUIRE(std::holds_alternative<ha_beacon>(m));
  CHECK(std::get<ha_beacon>(m).wrong_types == 1);
  vm.fold(std::move(m), 300, "rmbus.9");
  s = snapshot(vm, 400);
  CHECK(s["health"]["ha"]["state"] == "standby");
  CHECK_FALSE(s["health"]["ha"].contains("epoch"));
}

TEST_CASE("view_model: an rm.ha body that does not decode is listed as a bad message, never shown as data",
          "[web][view_model]") {
  view_model vm;
  auto m = decode_web(ha_topic, std::string{"\xc1", 1});  // 0xc1: never used in MessagePack
  vm.fold(std::move(m), 100, "rmbus.9");
  const auto s = snapshot(vm, 200);
  CHECK(s["health"]["ha"].is_null());
  REQUIRE(s["events"].size() == 1);
  CHECK(s["events"][0][2] == "bad_message");
  CHECK(s["health"]["bus"]["bad_messages"] == 1);
}

TEST_CASE("view_model: the topics it subscribes to are rmbus-top's and rm.ha", "[web][view_model]") {
  CHECK(web_topics() == std::vector<std::string>{"rm.state", "rm.nodes", "rm.cycle", "rm.events", "rm.ha"});
  CHECK(web_topics(true) ==
        std::vector<std::string>{"rm.schedule.changes", "rm.nodes", "rm.cycle", "rm.events", "rm.ha"});
  // Another topic that shares a prefix is ignored, not misread.
  const auto m = decode_web("rm.hax", "");
  REQUIRE(std::holds_alternative<rmbus::top::monitored_message>(m));
  CHECK(std::holds_alternative<rmbus::top::ignored_topic>(std::get<rmbus::top::monitored_message>(m)));
}

TEST_CASE("view_model: every fold moves the version the server builds snapshots from", "[web][view_model]") {
  view_model vm;
  const auto v0 = vm.version();
  put(vm, state(), 1);
  CHECK(vm.version() == v0 + 1);
  put(vm, nodes(), 2);
  vm.on_rejected("x", 3);
  CHECK(vm.version() == v0 + 3);
}
