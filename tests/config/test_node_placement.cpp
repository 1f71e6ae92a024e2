// Node placement by DUCC's rule: regex rule (against name, short name, address), then exact name (as
// reported, short, or a listed short name qualified with the pool's domain), then address; a node named
// nowhere goes to the first top-level nodepool.

#include "config/loader.hpp"
#include "config/node_placement.hpp"
#include "support.hpp"

namespace rc = rmbus::config;

namespace Catch {
template <>
struct StringMaker<rc::placement> {
  static std::string convert(const rc::placement& p) { return "{" + p.top_level + ", " + p.nodepool + "}"; }
};
}  // namespace Catch

namespace {

// general (top-level, domain example.org, the catch-all), bigmem nested in general, drivers (top-level, regex)
// and addr (top-level, listed by address). Also: a regex that would match "bm01" sits in pool greedy, defined
// AFTER bigmem lists bm01, to show rules beat names.
const char* site = R"([[nodepool]]
name = "general"
domain = "example.org"

[[nodepool]]
name = "bigmem"
parent = "general"
nodes = ["bm01", "bm02.example.org", "bm03.other.org"]

[[nodepool]]
name = "drivers"
node_patterns = ['jd[0-9]+(\.example\.org)?']

[[nodepool]]
name = "addr"
nodes = ["10.0.0.7"]

[[nodepool]]
name = "greedy"
node_patterns = ['bm0[1]', '192\.168\.9\.[0-9]+']
)";

rc::node_placement placer() { return rc::node_placement(rc::parse_native(site, "site.toml").scheduling); }

}  // namespace

TEST_CASE("a regex rule wins over an exact name", "[config][placement]") {
  auto p = placer();
  // bm01 is listed in bigmem, but greedy's rule 'bm0[1]' matches it, and rules come first.
  CHECK(p.place("bm01", "10.1.1.1") == rc::placement{"greedy", "greedy"});
  // The rule is matched against the short name too...
  CHECK(p.place("bm01.example.org", "10.1.1.1") == rc::placement{"greedy", "greedy"});
  // ... and against the address.
  CHECK(p.place("anything", "192.168.9.14") == rc::placement{"greedy", "greedy"});
  // A rule must match the whole text: "jd12x" is not "jd[0-9]+".
  CHECK(p.place("jd12", "") == rc::placement{"drivers", "drivers"});
  CHECK(p.place("jd12.example.org", "") == rc::placement{"drivers", "drivers"});
  CHECK(p.place("jd12x", "") == rc::placement{"general", "general"});
}

TEST_CASE("exact names: as reported, short, or qualified with the pool's domain", "[config][placement]") {
  auto p = placer();
  // bm02 is listed qualified; the agent may report it either way.
  CHECK(p.place("bm02.example.org", "") == rc::placement{"general", "bigmem"});
  CHECK(p.place("bm02", "") == rc::placement{"general", "bigmem"});
  // bm03 is listed with another domain: its short form still finds it.
  CHECK(p.place("bm03", "") == rc::placement{"general", "bigmem"});
  // A nested pool's top-level pool is its root: bigmem -> general.
  CHECK(p.place("bm03.other.org", "").top_level == "general");
}

TEST_CASE("listed short names are qualified with the domain", "[config][placement]") {
  auto cfg = rc::parse_native(R"([[nodepool]]
name = "first"
domain = "example.org"
[[nodepool]]
name = "second"
nodes = ["n7"]
)",
                              "site.toml");
  rc::node_placement p(cfg.scheduling);
  // "n7" is listed short; the first pool's domain applies to every pool, so n7.example.org is n7...
  CHECK(p.place("n7.example.org", "") == rc::placement{"second", "second"});
  // ... and so, by the short form, is n7.elsewhere.net (DUCC indexes short names too).
  CHECK(p.place("n7.elsewhere.net", "") == rc::placement{"second", "second"});
}

TEST_CASE("the address is tried after names", "[config][placement]") {
  auto p = placer();
  CHECK(p.place("unlisted", "10.0.0.7") == rc::placement{"addr", "addr"});
  // A name listed elsewhere beats the address.
  CHECK(p.place("bm02", "10.0.0.7") == rc::placement{"general", "bigmem"});
}

TEST_CASE("unknown nodes go to the first top-level nodepool", "[config][placement]") {
  auto p = placer();
  CHECK(p.place("stranger", "172.16.0.1") == rc::placement{"general", "general"});
  CHECK(p.place("", "") == rc::placement{"general", "general"});
  // The first TOP-LEVEL pool, even when a nested pool is defined first.
  auto cfg = rc::parse_native(R"([[nodepool]]
name = "child"
parent = "root"
nodes = ["c1"]
[[nodepool]]
name = "root"
)",
                              "site.toml");
  rc::node_placement nested_first(cfg.scheduling);
  CHECK(nested_first.place("stranger", "") == rc::placement{"root", "root"});
  CHECK(nested_first.place("c1", "") == rc::placement{"root", "child"});
}

TEST_CASE("placement of the example DUCC site", "[config][placement]") {
  auto cfg = rc::load_ducc(rc::test::data_dir() / "site" / "ducc.properties");
  rc::node_placement p(cfg.scheduling);
  CHECK(p.place("bm04.example.org", "") == rc::placement{"general", "bigmem"});  // imported from bigmem-rack2
  CHECK(p.place("jd3", "") == rc::placement{"drivers", "drivers"});
  CHECK(p.place("worker17.example.org", "") == rc::placement{"general", "general"});
  // Deterministic: asking twice gives the same answer (no state, no unordered iteration).
  CHECK(p.place("jd3", "") == p.place("jd3", ""));
}

TEST_CASE("overlong names are not fed to the regex matcher", "[config][placement]") {
  auto p = placer();
  // "jd" followed by 100 000 digits would match 'jd[0-9]+' but is no host name: it goes to the default pool
  // (without the guard, std::regex's recursive matcher could exhaust the stack on such input).
  std::string hostile = "jd" + std::string(100000, '7');
  CHECK(p.place(hostile, "") == rc::placement{"general", "general"});
  // At the limit, matching still applies: "jd" + 251 digits is 253 characters.
  CHECK(p.place("jd" + std::string(251, '7'), "") == rc::placement{"drivers", "drivers"});
}
