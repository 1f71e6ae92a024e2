// rmbus-admin's output over hand-built replies shaped as docs/protocol.md section 5 gives them: the compact
// tables (exact lines), the per-node results of vary-off, the exit codes, and the JSON that a script parses
// back into the very reply (docs/admin.md).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>

#include "tools/admin/admin_output.hpp"
#include "tools/admin/clock_text.hpp"

using namespace rmbus::tools::admin;
using rmbus::messages::admin_reply;
using rmbus::messages::value;

namespace {

// 2024-05-02 12:00:00 UTC, the "now" of every text below; times are shown in UTC (set before any test runs).
constexpr std::int64_t now = 1714651200000;
const bool in_utc = [] {
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  return true;
}();

value strs(std::initializer_list<const char*> xs) {
  value::array a;
  for (const char* x : xs) a.emplace_back(x);
  return value{std::move(a)};
}

value share(const char* job, const char* id, std::uint64_t quanta, const char* status) {
  return value{value::map{
      {"job", value{job}}, {"share", value{id}}, {"quanta", value{quanta}}, {"status", value{status}}}};
}

value node(const char* name, const char* state, std::uint64_t quanta, std::uint64_t free,
           value::array shares) {
  return value{value::map{{"node", value{name}},
                          {"nodepool", value{"alpha"}},
                          {"state", value{state}},
                          {"quiesced", value{false}},
                          {"memory_mb", value{quanta * 1024}},
                          {"quanta", value{quanta}},
                          {"free_quanta", value{free}},
                          {"shares", value{std::move(shares)}}}};
}

admin_reply qoccupancy_reply() {
  admin_reply r;
  value::array nodes;
  nodes.push_back(
      node("a1", "up", 8, 6, {share("alice-1", "3", 1, "running"), share("alice-1", "4", 1, "new")}));
  // Varied off and empty: its 8 quanta are not held, yet nothing may be placed there.
  nodes.push_back(node("a2", "varied_off", 8, 8, {}));
  r.results["pools"] = value{value::array{value{value::map{{"pool", value{"alpha"}},
                                                           {"quantum_mb", value{std::uint64_t{1024}}},
                                                           {"nodes", value{std::move(nodes)}}}}}};
  return r;
}

// JSON back to a value tree, as any script reading --json would see it.
value from_json(const nlohmann::json& j) {
  if (j.is_null()) return value{};
  if (j.is_boolean()) return value{j.get<bool>()};
  if (j.is_number_unsigned()) return value{j.get<std::uint64_t>()};
  if (j.is_number_integer()) return value{j.get<std::int64_t>()};
  if (j.is_number_float()) return value{j.get<double>()};
  if (j.is_string()) return value{j.get<std::string>()};
  if (j.is_array()) {
    value::array a;
    for (const auto& e : j) a.push_back(from_json(e));
    return value{std::move(a)};
  }
  value::map m;
  for (const auto& [k, e] : j.items()) m[k] = from_json(e);
  return value{std::move(m)};
}

}  // namespace

TEST_CASE("qoccupancy is one row per node, and a varied-off node shows no free quanta") {
  const auto text = text_of("qoccupancy", qoccupancy_reply(), false, now);
  CHECK(text ==
        "NODE  POOL   NODEPOOL  STATE       MEMORY  QUANTA  FREE  SHARES  JOBS\n"
        "a1    alpha  alpha     up            8 GB       8     6       2  alice-1 x2\n"
        "a2    alpha  alpha     varied_off    8 GB       8     -       0\n");
  const auto details = text_of("qoccupancy", qoccupancy_reply(), true, now);
  CHECK(details.find("\nshares:\n  a1  share 3  job alice-1  quanta 1  running\n  a1  share 4  job alice-1  "
                     "quanta 1  new\n") != std::string::npos);
}

TEST_CASE("qload is one row per class and order, with the size in GB beside the order") {
  admin_reply r;
  value::map cls{
      {"class", value{"normal"}},
      {"priority", value{std::uint64_t{10}}},
      {"weight", value{std::uint64_t{100}}},
      {"demand_by_order", value{value::map{{"1", value{std::uint64_t{8}}}, {"4", value{std::uint64_t{2}}}}}},
      {"awarded_by_order", value{value::map{{"1", value{std::uint64_t{6}}}}}}};
  value::map pool{{"pool", value{"alpha"}},
                  {"quantum_mb", value{std::uint64_t{1024}}},
                  {"nodes_up", value{std::uint64_t{4}}},
                  {"quanta", value{std::uint64_t{32}}},
                  {"free_quanta", value{std::uint64_t{2}}},
                  {"classes", value{value::array{value{std::move(cls)}}}}};
  r.results["pools"] = value{value::array{value{std::move(pool)}}};
  CHECK(text_of("qload", r, false, now) ==
        "POOL   QUANTUM  NODES UP  QUANTA  FREE\n"
        "alpha     1 GB         4      32     2\n"
        "\n"
        "POOL   CLASS   PRIORITY  WEIGHT     ORDER  CAP  AWARDED\n"
        "alpha  normal        10     100  1 (1 GB)    8        6\n"
        "alpha  normal        10     100  4 (4 GB)    2        0\n");
}

TEST_CASE("qload lists the demand no machine can meet beside the caps, with why") {
  admin_reply r;
  value::map cls{{"class", value{"normal"}},
                 {"priority", value{std::uint64_t{10}}},
                 {"weight", value{std::uint64_t{100}}},
                 {"demand_by_order", value{value::map{{"1", value{std::uint64_t{8}}}}}},
                 {"cap_by_order", value{value::map{{"1", value{std::uint64_t{8}}}}}},
                 {"awarded_by_order", value{value::map{{"1", value{std::uint64_t{8}}}}}}};
  auto unmet = [](const char* cls, std::uint64_t order, std::uint64_t jobs, std::uint64_t processes, const char* text) {
    return value{value::map{{"class", value{cls}},
                            {"order", value{order}},
                            {"jobs", value{jobs}},
                            {"processes", value{processes}},
                            {"reason", value{"no_machine_of_order"}},
                            {"text", value{text}}}};
  };
  value::map pool{{"pool", value{"alpha"}},
                  {"quantum_mb", value{std::uint64_t{1024}}},
                  {"nodes_up", value{std::uint64_t{4}}},
                  {"quanta", value{std::uint64_t{32}}},
                  {"free_quanta", value{std::uint64_t{24}}},
                  {"classes", value{value::array{value{std::move(cls)}}}},
                  // A class with nothing but work too large has no load row of its own.
                  {"unmet", value{value::array{unmet("normal", 200, 1, 24, "no machine of order 200"),
                                               unmet("batch", 64, 3, 3, "no machine of order 64")}}}};
  r.results["pools"] = value{value::array{value{std::move(pool)}}};
  CHECK(text_of("qload", r, false, now) ==
        "POOL   QUANTUM  NODES UP  QUANTA  FREE\n"
        "alpha     1 GB         4      32    24\n"
        "\n"
        "POOL   CLASS   PRIORITY  WEIGHT         ORDER  CAP  AWARDED  UNMET BECAUSE\n"
        "alpha  normal        10     100      1 (1 GB)    8        8\n"
        "alpha  normal        10     100  200 (200 GB)   24        0  no machine of order 200\n"
        "alpha  batch          -       -    64 (64 GB)    3        0  3 jobs: no machine of order 64\n");
}

TEST_CASE("vary-off names every node's result and what it evicted, and part done is a partial success") {
  admin_reply r;
  r.ok = false;
  r.error = "unknown node(s): zz";
  r.results["nodes"] = strs({"a1", "a2"});
  r.results["already"] = strs({"a2"});
  r.results["unknown"] = strs({"zz"});
  value::array evicted;
  for (const char* id : {"1", "2", "3"})
    evicted.emplace_back(value::map{{"node", value{"a1"}},
                                    {"job", value{"alice-1"}},
                                    {"share", value{id}},
                                    {"quanta", value{std::uint64_t{1}}}});
  r.results["evicted"] = value{std::move(evicted)};
  CHECK(text_of("vary_off", r, false, now) ==
        "NODE  RESULT\n"
        "a1    varied off\n"
        "a2    already varied off\n"
        "zz    unknown: never heard of (no heartbeat, no recovered process); nothing done\n"
        "evicted 3 share(s):\n"
        "  JOB      SHARES  ON\n"
        "  alice-1       3  a1 3\n");
  CHECK(outcome_of("vary_off", r) == outcome::partial);
  CHECK(exit_code(outcome_of("vary_off", r)) == 5);
  // Nothing known: a refusal (exit 1), not a partial success.
  admin_reply none;
  none.ok = false;
  none.error = "unknown node(s): zz";
  none.results["nodes"] = strs({});
  none.results["unknown"] = strs({"zz"});
  CHECK(outcome_of("vary_off", none) == outcome::refused);
  CHECK(exit_code(outcome::refused) == 1);
  admin_reply fine;
  fine.results["nodes"] = strs({"a1"});
  CHECK(exit_code(outcome_of("vary_on", fine)) == 0);
}

TEST_CASE("the JSON of --json is the reply itself: parsed back it equals what the RM sent") {
  auto r = qoccupancy_reply();
  const auto j = nlohmann::json::parse(json_of(r));
  CHECK(j.at("ok") == true);
  CHECK_FALSE(j.contains("error"));
  CHECK(j.at("pools").at(0).at("nodes").at(1).at("state") == "varied_off");
  value::map back = *from_json(j).as_map();
  back.erase("ok");
  CHECK(value{back} == value{r.results});

  admin_reply bad;
  bad.ok = false;
  bad.error = "unknown node(s): \"zz\"\n";  // quotes and a newline survive as JSON escapes
  bad.results["nodes"] = strs({});
  bad.results["unknown"] = strs({"zz"});
  const auto e = nlohmann::json::parse(json_of(bad));
  CHECK(e.at("ok") == false);
  CHECK(e.at("error") == "unknown node(s): \"zz\"\n");
  CHECK(e.at("unknown") == nlohmann::json::array({"zz"}));

  const auto c = nlohmann::json::parse(json_of_client_error("no answer"));
  CHECK(c == nlohmann::json{{"ok", false}, {"error", "no answer"}, {"reached", false}});
}

TEST_CASE("drain says what runs on, never-seen nodes say the mark waits, and qoccupancy shows both") {
  admin_reply r;
  r.ok = false;
  r.error = "unknown node(s): zz";
  r.results["nodes"] = strs({"a1", "a2", "a5"});
  r.results["already"] = strs({"a2"});
  r.results["never_seen"] = strs({"a5"});
  r.results["unknown"] = strs({"zz"});
  r.results["running"] = value{value::array{
      value{value::map{{"node", value{"a1"}}, {"shares", value{std::uint64_t{8}}}}},
      value{value::map{{"node", value{"a2"}}, {"shares", value{std::uint64_t{0}}}}}}};
  CHECK(text_of("drain", r, false, now) ==
        "NODE  RESULT\n"
        "a1    drained: no new work; 8 share(s) still running\n"
        "a2    already drained\n"
        "a5    drained (never seen yet: applies when it first reports)\n"
        "zz    unknown: never heard of (no heartbeat, no recovered process); nothing done\n");
  CHECK(exit_code(outcome_of("drain", r)) == 5);

  auto occ = qoccupancy_reply();
  auto& pool = (*(*occ.results["pools"].as_array())[0].as_map());
  auto& first = *(*pool["nodes"].as_array())[0].as_map();
  first["drained"] = value{true};
  occ.results["never_seen"] = value{value::array{value{value::map{{"node", value{"a5"}},
                                                                     {"pool", value{"alpha"}},
                                                                     {"nodepool", value{"alpha-late"}},
                                                                     {"marks", strs({"varied_off"})}}}}};
  CHECK(text_of("qoccupancy", occ, false, now) ==
        "NODE  POOL   NODEPOOL    STATE                    MEMORY  QUANTA  FREE  SHARES  JOBS\n"
        "a1    alpha  alpha       up (draining)              8 GB       8     -       2  alice-1 x2\n"
        "a2    alpha  alpha       varied_off                 8 GB       8     -       0\n"
        "a5    alpha  alpha-late  never seen (varied off)       -       -     -       0\n");
}

TEST_CASE("a pool restarting: nothing shown, its own exit code") {
  admin_reply r;
  r.ok = false;
  r.error = "pool restarting: alpha: ...";
  r.results["restarting"] = strs({"alpha"});
  r.results["pools"] = value{value::array{value{value::map{{"pool", value{"alpha"}}, {"restarting", value{true}}}}}};
  CHECK(outcome_of("qoccupancy", r) == outcome::restarting);
  CHECK(exit_code(outcome::restarting) == 6);
  CHECK(text_of("qoccupancy", r, false, now).empty());
  CHECK(text_of("qload", r, false, now).empty());
}

TEST_CASE("status: version, the last round as a clock time, nodes, jobs, and the HA warning") {
  admin_reply r;
  r.results["instance"] = value{"rmbus.1.x"};
  r.results["version"] = value{"0.1.0"};
  r.results["cycle"] = value{std::uint64_t{412}};
  r.results["last_round_at_ms"] = value{std::uint64_t{now - 300}};
  r.results["last_round_ms_ago"] = value{std::uint64_t{300}};
  r.results["uptime_ms"] = value{std::uint64_t{1830000}};
  r.results["pools"] = strs({"alpha", "beta"});
  r.results["restarting"] = strs({"beta"});
  r.results["nodes"] = value{value::map{{"up", value{std::uint64_t{6}}},
                                        {"missing", value{std::uint64_t{0}}},
                                        {"down", value{std::uint64_t{1}}},
                                        {"expected", value{std::uint64_t{8}}},
                                        {"never_seen", value{std::uint64_t{1}}},
                                        {"schedulable", value{std::uint64_t{5}}},
                                        {"varied_off", value{std::uint64_t{1}}},
                                        {"drained", value{std::uint64_t{0}}}}};
  r.results["jobs"] = value{value::map{{"total", value{std::uint64_t{3}}},
                                       {"scheduled", value{std::uint64_t{2}}},
                                       {"pending", value{std::uint64_t{1}}},
                                       {"refused", value{std::uint64_t{0}}}}};
  r.results["safety"] = value{value::map{{"guard_refusals", value{std::uint64_t{0}}},
                                         {"over_order_repairs", value{std::uint64_t{1}}}}};
  r.results["role"] = value{"active"};
  r.results["epoch"] = value{std::uint64_t{4}};
  r.results["rank"] = value{std::uint64_t{1}};
  r.results["peers"] = value{value::array{}};
  r.results["ha_warning"] = value{"no standby heard within takeover_ms: if this RM stops, no other takes over"};
  CHECK(text_of("status", r, false, now) ==
        "instance    rmbus.1.x\n"
        "version     0.1.0\n"
        "cycle       412\n"
        "last round  0.3 s ago (at 11:59:59)\n"
        "uptime      1830 s\n"
        "pools       alpha, beta (restarting, no round since: beta)\n"
        "nodes       6 up, 0 missing, 1 down of 8 expected (1 never seen); 5 schedulable, 1 varied off, 0 drained\n"
        "jobs        3: 2 scheduled, 1 pending, 0 refused\n"
        "safety      0 plan(s) refused by the guard, 1 node(s) brought back under their order\n"
        "role        active\n"
        "epoch       4\n"
        "rank        1\n"
        "warning     no standby heard within takeover_ms: if this RM stops, no other takes over\n");
}

TEST_CASE("status: a plan the guard refused is a warning") {
  admin_reply r;
  r.results["instance"] = value{"rmbus.1.x"};
  r.results["safety"] = value{value::map{{"guard_refusals", value{std::uint64_t{2}}},
                                         {"over_order_repairs", value{std::uint64_t{0}}}}};
  const auto text = text_of("status", r, false, now);
  CHECK(text.find("safety      2 plan(s) refused by the guard, 0 node(s) brought back under their order\n"
                  "warning     the publication guard refused a plan") != std::string::npos);
}

TEST_CASE("jobs as squeue lists them, and users summed") {
  auto row = [](const char* job, const char* user, const char* status, std::uint64_t procs, std::uint64_t mb,
                const char* reason, const char* text) {
    return value{value::map{{"job", value{job}},
                            {"user", value{user}},
                            {"class", value{"normal"}},
                            {"pool", value{"alpha"}},
                            {"status", value{status}},
                            {"processes", value{procs}},
                            {"memory_mb", value{mb}},
                            {"demand", value{std::uint64_t{1000}}},
                            {"reason", value{reason}},
                            {"reason_text", value{text}}}};
  };
  admin_reply r;
  r.results["jobs"] = value{value::array{row("alice-1", "alice", "scheduled", 8, 1024, "none", ""),
                                         row("big-1", "bob", "pending", 0, 204800, "no_machine_of_order",
                                             "no machine of order 200")}};
  CHECK(text_of("jobs", r, false, now) ==
        "JOB      USER   CLASS   POOL   STATE      PROCS  MEMORY  DEMAND  REASON\n"
        "alice-1  alice  normal  alpha  scheduled      8    1 GB    1000\n"
        "big-1    bob    normal  alpha  pending        0  200 GB    1000  no machine of order 200\n");
  admin_reply u;
  u.results["users"] = value{value::array{value{value::map{{"user", value{"bob"}},
                                                           {"jobs", value{std::uint64_t{2}}},
                                                           {"pending", value{std::uint64_t{1}}},
                                                           {"processes", value{std::uint64_t{4}}},
                                                           {"quanta", value{std::uint64_t{8}}},
                                                           {"demand", value{std::uint64_t{2000}}}}}}};
  CHECK(text_of("users", u, false, now) ==
        "USER  JOBS  PENDING  PROCS  QUANTA  DEMAND\n"
        "bob      2        1      4       8    2000\n");
}

TEST_CASE("explain's times are clock times, not milliseconds since the epoch") {
  // 12:02:00 UTC the same day; then the next day, which carries its date.
  CHECK(with_clock_times("estimated end: in 2 min (at 1714651320000 ms): job 17", now) ==
        "estimated end: in 2 min (at 12:02:00): job 17");
  CHECK(with_clock_times("next process in 1 d (at 1714737600000 ms), all", now) ==
        "next process in 1 d (at 2024-05-03 12:00:00), all");
  // Durations and other numbers stay as they are.
  CHECK(with_clock_times("at 300 ms; at 1714651320000 msec; cap at 12", now) == "at 300 ms; at 1714651320000 msec; cap at 12");
  admin_reply e;
  e.results["pool"] = value{"alpha"};
  e.results["explanation"] = value{value::map{{"text", value{"estimated end: in 2 min (at 1714651320000 ms)\n"}}}};
  CHECK(text_of("explain", e, false, now) == "pool alpha\nestimated end: in 2 min (at 12:02:00)\n");
}

TEST_CASE("sizes read in GB") {
  CHECK(gb_text(49152) == "48 GB");
  CHECK(gb_text(1536) == "1.5 GB");
  CHECK(gb_text(512) == "512 MB");
}
