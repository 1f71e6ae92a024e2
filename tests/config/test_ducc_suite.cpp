// DUCC's configuration validation suite (NodeConfigurationTest, test1..test12; shared/ducc-rm.md section 5.1
// #9) ported with fixtures of our own written from the descriptions. Each test reads data/ducc_suite/testN
// (ducc.classes, optional ducc.users, nodefiles) as DUCC's NodeConfiguration would: pass cases are checked for
// what they produced, fail cases for the file, line and reason of the error.

#include <algorithm>

#include "config/loader.hpp"
#include "support.hpp"

namespace rc = rmbus::config;
using rmbus::core::policy;
using rmbus::core::scheduler_config;

namespace {

std::filesystem::path suite(const std::string& test) { return rc::test::data_dir() / "ducc_suite" / test; }

scheduler_config load_suite(const std::string& test) {
  auto dir = suite(test);
  auto users = dir / "ducc.users";
  return rc::load_ducc_classes(dir / "ducc.classes", std::filesystem::exists(users) ? users : std::filesystem::path{});
}

const rmbus::core::nodepool_def& pool(const scheduler_config& cfg, const std::string& name) {
  auto it = std::find_if(cfg.nodepools.begin(), cfg.nodepools.end(), [&](const auto& p) { return p.name == name; });
  REQUIRE(it != cfg.nodepools.end());
  return *it;
}

const rmbus::core::resource_class& cls(const scheduler_config& cfg, const std::string& name) {
  auto it = std::find_if(cfg.classes.begin(), cfg.classes.end(), [&](const auto& c) { return c.name == name; });
  REQUIRE(it != cfg.classes.end());
  return *it;
}

std::vector<std::string> names(const std::vector<rmbus::core::resource_class>& classes) {
  std::vector<std::string> out;
  for (const auto& c : classes) out.push_back(c.name);
  return out;
}

}  // namespace

TEST_CASE("test1: basic six-pool tree with nested imports passes", "[config][ducc_suite]") {
  auto cfg = load_suite("test1");
  REQUIRE(cfg.nodepools.size() == 6);
  CHECK(pool(cfg, "--default--").parent.empty());
  CHECK(pool(cfg, "npA").parent == "--default--");
  CHECK(pool(cfg, "npC").parent == "npA");
  CHECK(pool(cfg, "npD").parent == "npC");
  CHECK(pool(cfg, "npE").parent == "npB");
  // npA.nodes lists nodeA1, nodeA2.example.org, then imports rackA.nodes (nodeA3), which imports rackA-2.nodes
  // (nodeA4): imports are expanded in place.
  CHECK(pool(cfg, "npA").nodes == std::vector<std::string>{"nodeA1", "nodeA2.example.org", "nodeA3", "nodeA4"});
  // npB.nodes imports npE.nodes, which is npE's own nodefile: skipped, so nodeE1 is in npE only.
  CHECK(pool(cfg, "npB").nodes == std::vector<std::string>{"nodeB1", "nodeB2"});
  CHECK(pool(cfg, "npE").nodes == std::vector<std::string>{"nodeE1"});
  // The abstract templates fair-base, fixed-base and reserve-base are gone after inheritance.
  CHECK(names(cfg.classes) == std::vector<std::string>{"normal", "normal-npA", "normal-npB", "normal-npC",
                                                        "normal-npD", "normal-npE", "fixed", "JobDriver",
                                                        "reserve"});
  CHECK(cls(cfg, "normal-npD").nodepool == "npD");
  CHECK(cls(cfg, "normal-npD").priority == 10);
  CHECK(cls(cfg, "normal").is_default);
  CHECK_FALSE(cls(cfg, "normal-npA").is_default);  // `default` is never inherited
  CHECK(cls(cfg, "JobDriver").priority == 9);      // own value beats the template's 5
  CHECK(cls(cfg, "fixed").priority == 5);
  // max-processes = 10 in fixed-base is deprecated and ignored, as DUCC ignores it.
  CHECK(cls(cfg, "fixed").max_processes == 0);
  CHECK(cls(cfg, "reserve").policy == policy::reserve);
  // JobDriver (ducc.jd.host.class) authorises ducc.jd.host.user (System) automatically.
  CHECK(cls(cfg, "JobDriver").users == std::vector<std::string>{"System"});
  REQUIRE(cfg.users.size() == 1);
  // max-allotment is in GB: 100 GB = 100 * 1024 MB = 102400 MB.
  CHECK(cfg.users[0].max_allotment_mb == std::optional<std::uint64_t>{102400});
}

TEST_CASE("test2: a pool with several children passes", "[config][ducc_suite]") {
  auto cfg = load_suite("test2");
  REQUIRE(cfg.nodepools.size() == 6);
  int children_of_default = 0;
  int children_of_a = 0;
  for (const auto& p : cfg.nodepools) {
    children_of_default += p.parent == "--default--";
    children_of_a += p.parent == "npA";
  }
  CHECK(children_of_default == 3);
  CHECK(children_of_a == 2);
  CHECK(pool(cfg, "npA2").nodes == std::vector<std::string>{"npA2-host1", "npA2-host2"});
}

TEST_CASE("test3: circular nodepool parents fail", "[config][ducc_suite]") {
  // npA (line 3) -> npC -> npB -> npA; the cycle is reported once, at the earliest pool's parent key.
  RMBUS_CHECK_CONFIG_ERROR(load_suite("test3"), "test3/ducc.classes", 3, "cycle in nodepool parents");
}

TEST_CASE("test4: a duplicate nodepool fails", "[config][ducc_suite]") {
  RMBUS_CHECK_CONFIG_ERROR(load_suite("test4"), "test4/ducc.classes", 5, "duplicate nodepool 'npA'");
}

TEST_CASE("test5: a missing parent fails", "[config][ducc_suite]") {
  RMBUS_CHECK_CONFIG_ERROR(load_suite("test5"), "test5/ducc.classes", 4, "parent 'npZ', which is not defined");
}

TEST_CASE("test6: a top-level pool beside --default-- passes", "[config][ducc_suite]") {
  auto cfg = load_suite("test6");
  CHECK(pool(cfg, "top2").parent.empty());
  CHECK(pool(cfg, "sub2").parent == "top2");
  // share-quantum is in GB: 4 GB = 4096 MB; --default-- takes the global quantum, 1 GB = 1024 MB.
  CHECK(pool(cfg, "top2").quantum_mb == 4096);
  CHECK(pool(cfg, "--default--").quantum_mb == 1024);
  CHECK(pool(cfg, "sub2").quantum_mb == 0);  // nested pools use their top-level pool's quantum
  CHECK(cls(cfg, "second").nodepool == "sub2");
}

TEST_CASE("test7: a class naming a missing nodepool fails", "[config][ducc_suite]") {
  RMBUS_CHECK_CONFIG_ERROR(load_suite("test7"), "test7/ducc.classes", 5, "nodepool 'npX', which is not defined");
}

TEST_CASE("test8: two pools without nodefile fail", "[config][ducc_suite]") {
  RMBUS_CHECK_CONFIG_ERROR(load_suite("test8"), "test8/ducc.classes", 4, "at most one pool may go without");
}

TEST_CASE("test9: a malformed max_allotment.class key fails", "[config][ducc_suite]") {
  RMBUS_CHECK_CONFIG_ERROR(load_suite("test9"), "test9/ducc.users", 3, "malformed key '.normal'");
}

TEST_CASE("test10: a non-integer limit fails", "[config][ducc_suite]") {
  RMBUS_CHECK_CONFIG_ERROR(load_suite("test10"), "test10/ducc.users", 6, "must be an integer, not 'lots'");
}

TEST_CASE("test11: users lists in classes pass", "[config][ducc_suite]") {
  auto cfg = load_suite("test11");
  // "users = user1 user2, user3": commas are whitespace, the value is the tokens joined by spaces.
  CHECK(cls(cfg, "normal").users == std::vector<std::string>{"user1", "user2", "user3"});
  // "users user4, user5 user6": '=' is optional; the child's own list replaces the inherited one.
  CHECK(cls(cfg, "normal-npB").users == std::vector<std::string>{"user4", "user5", "user6"});
  CHECK(cls(cfg, "fixed").users.empty());
  CHECK(cls(cfg, "JobDriver").users == std::vector<std::string>{"jd-admin", "System"});
  REQUIRE(cfg.users.size() == 2);
  CHECK_FALSE(cfg.users[0].max_allotment_mb.has_value());  // only class-specific values, which DUCC never applies
  CHECK(cfg.users[1].max_allotment_mb == std::optional<std::uint64_t>{22 * 1024});
}

TEST_CASE("test12: a user limit naming an unknown class fails", "[config][ducc_suite]") {
  RMBUS_CHECK_CONFIG_ERROR(load_suite("test12"), "test12/ducc.users", 4, "class 'noclass', which is not defined");
}
