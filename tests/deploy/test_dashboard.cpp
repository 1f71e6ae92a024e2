// The Grafana dashboard (deploy/grafana/rmbus-dashboard.json): it parses as JSON (Debian's Python reads it,
// refusing duplicate keys), every panel queries through the data source variable, every metric it queries is
// one the registry exports (actors/rm_metrics.hpp, rendered by metrics/metrics_registry) and docs/metrics.md
// lists, every exported family is shown (on the dashboard or in the alert rules), and every query is valid
// PromQL (promtool parses them as recording rules).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "actors/rm_metrics.hpp"
#include "metrics/metrics_registry.hpp"
#include "tests/support/child_process.hpp"

namespace fs = std::filesystem;
using rmbus::test_support::run_to_end;
using namespace std::chrono_literals;

namespace {

const fs::path source_dir{RMBUS_SOURCE_DIR};
const fs::path dashboard_file = source_dir / "deploy" / "grafana" / "rmbus-dashboard.json";

std::string slurp(const fs::path& p) {
  std::ifstream in{p};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

// A folder of its own per test process and purpose, removed at the end.
struct scratch_dir {
  fs::path path;
  explicit scratch_dir(const std::string& name)
      : path{fs::temp_directory_path() / ("rmbus-" + name + "-" + std::to_string(::getpid()))} {
    fs::create_directories(path);
  }
  ~scratch_dir() { fs::remove_all(path); }
};

// Reads the dashboard with Python's json module and prints one line per finding: "expr\t<query>" for each
// panel target and template query, "problem\t<what>" for each structural fault.
const char* reader_script = R"PY(
import json, sys
def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise ValueError("duplicate keys: %s" % sorted(dup))
    return dict(pairs)
try:
    d = json.load(open(sys.argv[1], encoding="utf-8"), object_pairs_hook=no_duplicates)
except ValueError as e:
    print("unparsable\t%s" % e)
    sys.exit(1)
def problem(what):
    print("problem\t%s" % what)
for key in ("title", "uid", "panels", "templating", "schemaVersion"):
    if key not in d:
        problem("no %s" % key)
variables = {v["name"]: v for v in d["templating"]["list"]}
source = variables.get("datasource", {})
if source.get("type") != "datasource" or source.get("query") != "prometheus":
    problem("no Prometheus data source variable named datasource")
for v in d["templating"]["list"]:
    if v["type"] == "query":
        print("expr\t%s" % v["query"]["query"])
ids = set()
for p in d["panels"]:
    where = "panel %r" % p.get("title")
    if p.get("id") in ids:
        problem("%s: id %s used twice" % (where, p.get("id")))
    ids.add(p.get("id"))
    g = p.get("gridPos", {})
    if not (0 <= g.get("x", -1) and g.get("w", 0) > 0 and g["x"] + g["w"] <= 24 and g.get("h", 0) > 0):
        problem("%s: gridPos %s outside the 24 columns" % (where, g))
    if p["type"] == "row":
        continue
    if p.get("datasource", {}).get("uid") != "${datasource}":
        problem("%s: does not use the datasource variable" % where)
    targets = p.get("targets", [])
    if not targets:
        problem("%s: no query" % where)
    refs = [t.get("refId") for t in targets]
    if len(set(refs)) != len(refs) or None in refs:
        problem("%s: refIds %s not unique" % (where, refs))
    for t in targets:
        if not t.get("expr"):
            problem("%s: a target without expr" % where)
        else:
            print("expr\t%s" % t["expr"].replace("\n", " "))
)PY";

struct dashboard_reading {
  std::optional<int> status;
  std::vector<std::string> exprs, problems;
  std::string output;
};

dashboard_reading read_dashboard(const fs::path& file) {
  scratch_dir dir{"dashboard-reader"};
  std::ofstream{dir.path / "read_dashboard.py"} << reader_script;
  const auto r =
      run_to_end("/usr/bin/python3", {(dir.path / "read_dashboard.py").string(), file.string()}, 60s);
  dashboard_reading d{r.status, {}, {}, r.output};
  std::istringstream lines{r.output};
  for (std::string line; std::getline(lines, line);) {
    const auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    (line.substr(0, tab) == "expr" ? d.exprs : d.problems).push_back(line.substr(tab + 1));
  }
  return d;
}

// Family name -> type ("counter", "gauge", "histogram"), from the registry every rmbus process exports.
std::map<std::string, std::string> exported_families() {
  rmbus::metrics::metrics_registry registry;
  const rmbus::actors::rm_metric_families families{registry};
  std::map<std::string, std::string> out;
  std::istringstream lines{registry.render()};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words{line};
    std::string hash, type_word, name, type;
    if (words >> hash >> type_word >> name >> type && hash == "#" && type_word == "TYPE") out[name] = type;
  }
  return out;
}

// The names in docs/metrics.md's table (rows that begin with | `rmbus_...` |).
std::set<std::string> documented_metrics() {
  const auto text = slurp(source_dir / "docs" / "metrics.md");
  const std::regex row{R"(^\| `(rmbus_[a-z0-9_]+)` \|)", std::regex::multiline};
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator{}; ++it)
    names.insert((*it)[1]);
  return names;
}

std::set<std::string> metric_names_in(const std::string& text) {
  const std::regex name{R"(\brmbus_[a-z0-9_]+)"};
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator{}; ++it)
    names.insert(it->str());
  return names;
}

// The family a queried series name belongs to: itself, or a histogram's family for its _bucket, _sum and
// _count series. Empty when the name is no exported series.
std::string family_of(const std::string& series, const std::map<std::string, std::string>& families) {
  if (families.count(series)) return series;
  for (const std::string suffix : {"_bucket", "_sum", "_count"}) {
    if (series.size() > suffix.size() && series.ends_with(suffix)) {
      const auto base = series.substr(0, series.size() - suffix.size());
      const auto it = families.find(base);
      if (it != families.end() && it->second == "histogram") return base;
    }
  }
  return {};
}

// Every name queried in `exprs` that is not exported by the registry or not listed in docs/metrics.md.
std::vector<std::string> unknown_names(const std::vector<std::string>& exprs) {
  const auto families = exported_families();
  const auto documented = documented_metrics();
  std::vector<std::string> unknown;
  for (const auto& e : exprs)
    for (const auto& name : metric_names_in(e)) {
      const auto family = family_of(name, families);
      if (family.empty())
        unknown.push_back(name + " (not exported by the registry)");
      else if (!documented.count(family))
        unknown.push_back(name + " (not in docs/metrics.md)");
    }
  return unknown;
}

}  // namespace

TEST_CASE("the dashboard parses and every panel queries Prometheus through the data source variable") {
  const auto d = read_dashboard(dashboard_file);
  INFO(d.output);
  REQUIRE(d.status == 0);
  CHECK(d.problems.empty());
  CHECK(d.exprs.size() >= 20);
}

TEST_CASE("the dashboard reader refuses broken JSON and reports a panel without a query") {
  scratch_dir dir{"dashboard-inputs"};
  std::ofstream{dir.path / "truncated.json"} << slurp(dashboard_file).substr(0, 500);
  const auto truncated = read_dashboard(dir.path / "truncated.json");
  CHECK(truncated.status == 1);
  CHECK(truncated.output.find("unparsable") != std::string::npos);

  std::ofstream{dir.path / "duplicate.json"} << R"({"title": "a", "title": "b"})";
  const auto duplicate = read_dashboard(dir.path / "duplicate.json");
  CHECK(duplicate.status == 1);
  CHECK(duplicate.output.find("duplicate keys: ['title']") != std::string::npos);

  std::ofstream{dir.path / "empty_panel.json"} << R"({"title": "t", "uid": "u", "schemaVersion": 37,
             "templating": {"list": [{"name": "datasource", "type": "datasource", "query": "prometheus"}]},
             "panels": [{"type": "timeseries", "title": "nothing", "id": 1,
                         "gridPos": {"x": 0, "y": 0, "w": 12, "h": 8},
                         "datasource": {"type": "prometheus", "uid": "${datasource}"}, "targets": []}]})";
  const auto empty = read_dashboard(dir.path / "empty_panel.json");
  INFO(empty.output);
  CHECK(empty.status == 0);
  REQUIRE(empty.problems.size() == 1);
  CHECK(empty.problems[0] == "panel 'nothing': no query");
}

TEST_CASE("every metric the dashboard queries is exported by the registry and listed in docs/metrics.md") {
  const auto d = read_dashboard(dashboard_file);
  REQUIRE(d.status == 0);
  const auto unknown = unknown_names(d.exprs);
  INFO(::Catch::Detail::stringify(unknown));
  CHECK(unknown.empty());
}

TEST_CASE("the name check catches a metric that does not exist and a histogram suffix on a counter") {
  const auto unknown = unknown_names({"rate(rmbus_rounds_total[5m])", "rate(rmbus_no_such_thing_total[5m])",
                                      "rmbus_rounds_total_bucket", "rmbus_round_duration_us_bucket"});
  REQUIRE(unknown.size() == 2);
  CHECK(unknown[0] == "rmbus_no_such_thing_total (not exported by the registry)");
  CHECK(unknown[1] == "rmbus_rounds_total_bucket (not exported by the registry)");
}

TEST_CASE("every family the registry exports is on the dashboard or in the alert rules") {
  // A metric added to the registry needs a panel (or an alert) here: an operator should not have to know
  // it exists to see it.
  const auto d = read_dashboard(dashboard_file);
  REQUIRE(d.status == 0);
  const auto families = exported_families();
  REQUIRE(families.size() >= 30);
  std::set<std::string> shown;
  for (const auto& e : d.exprs)
    for (const auto& name : metric_names_in(e)) shown.insert(family_of(name, families));
  for (const auto& name : metric_names_in(slurp(source_dir / "deploy" / "prometheus" / "rmbus-alerts.yml")))
    shown.insert(family_of(name, families));
  for (const auto& [name, type] : families) {
    INFO(name << " is exported but neither deploy/grafana/rmbus-dashboard.json nor the alert rules show it");
    CHECK(shown.count(name) == 1);
  }
}

TEST_CASE("every dashboard query is valid PromQL (promtool parses them as recording rules)") {
  const std::string promtool = RMBUS_PROMTOOL;
  if (promtool.empty())
    FAIL("promtool not found: install Debian's prometheus package (tools/install-deps.sh does)");
  const auto d = read_dashboard(dashboard_file);
  REQUIRE(d.status == 0);
  REQUIRE(!d.exprs.empty());
  scratch_dir dir{"dashboard-queries"};
  const auto rules = dir.path / "dashboard-queries.yml";
  {
    std::ofstream out{rules};
    out << "groups:\n  - name: dashboard\n    rules:\n";
    int n = 0;
    for (auto e : d.exprs) {
      // Grafana's template variables become the values they stand for; label_values() is Grafana's, not
      // PromQL: its first argument is the query.
      e = std::regex_replace(e, std::regex{R"(\$job)"}, "rmbus");
      e = std::regex_replace(e, std::regex{R"(\$instance)"}, ".*");
      std::smatch m;
      if (std::regex_match(e, m, std::regex{R"(label_values\((.*), *[a-z_]+\))"})) e = m[1];
      std::string quoted;
      for (char c : e) quoted += (c == '\'' ? std::string{"''"} : std::string{c});
      out << "      - record: dashboard:query" << ++n << "\n        expr: '" << quoted << "'\n";
    }
  }
  const auto r = run_to_end(promtool, {"check", "rules", rules.string()}, 60s);
  INFO(r.output << "\n" << slurp(rules));
  CHECK(r.status == 0);
}
