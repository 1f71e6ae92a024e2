// rmbus-admin's output over hand-built replies shaped as docs/protocol.md section 5 gives them: the compact
// tables (exact lines), the per-node results of vary-off, the exit codes, and the JSON that a script parses
// back into the very reply (docs/admin.md).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tools/admin/admin_output.hpp"

using namespace rmbus::tools::admin;
using rmbus::messages::admin_reply;
using rmbus::messages::value;

namespace {

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
  const auto text = text_of("qoccupancy", qoccupancy_reply(), false);
  CHECK(text ==
        "NODE  POOL   NODEPOOL  STATE       MEMORY  QUANTA  FREE  SHARES  JOBS\n"
        "a1    alpha  alpha     up            8 GB       8     6       2  alice-1 x2\n"
        "a2    alpha  alpha     varied_off    8 GB       8     -       0\n");
  const auto details = text_of("qoccupancy", qoccupancy_reply(), true);
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
  CHECK(text_of("qload", r, false) ==
        "POOL   QUANTUM  NODES UP  QUANTA  FREE\n"
        "alpha     1 GB         4      32     2\n"
        "\n"
        "POOL   CLASS   PRIORITY  WEIGHT     ORDER  DEMAND  AWARDED\n"
        "alpha  normal        10     100  1 (1 GB)       8        6\n"
        "alpha  normal        10     100  4 (4 GB)       2        0\n");
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
  CHECK(text_of("vary_off", r, false) ==
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

TEST_CASE("sizes read in GB") {
  CHECK(gb_text(49152) == "48 GB");
  CHECK(gb_text(1536) == "1.5 GB");
  CHECK(gb_text(512) == "512 MB");
}
