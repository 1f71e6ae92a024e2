// DUCC's own files, as sites have them: the shipped default.ducc.properties of DUCC 2.2 and 3.0 and the
// shipped ducc.classes (our copies of their keys and values, data/ducc-2.2 and data/ducc-3.0) load through
// the real loader without a complaint and give the values DUCC would use; every ducc.rm.* key any release
// ships or DUCC's RM reads is accepted, and docs/configuration.md lists each one as used or ignored.

#include <algorithm>
#include <fstream>
#include <sstream>

#include "config/detail/ducc_rm_keys.hpp"
#include "config/loader.hpp"
#include "support.hpp"

namespace rc = rmbus::config;
using rc::test::scratch_dir;
using rmbus::core::policy;

namespace {

const rmbus::core::resource_class& cls(const rmbus::core::scheduler_config& cfg, const std::string& name) {
  auto it =
      std::find_if(cfg.classes.begin(), cfg.classes.end(), [&](const auto& c) { return c.name == name; });
  REQUIRE(it != cfg.classes.end());
  return *it;
}

rc::rm_config load_shipped(const std::string& version) {
  return rc::load_ducc(rc::test::data_dir() / ("ducc-" + version) / "default.ducc.properties");
}

}  // namespace

TEST_CASE("DUCC 2.2's and 3.0's shipped default.ducc.properties and ducc.classes load as written",
          "[config][ducc]") {
  for (const std::string version : {"2.2", "3.0"}) {
    CAPTURE(version);
    rc::rm_config cfg;
    try {
      cfg = load_shipped(version);
    } catch (const rc::config_error& e) {
      FAIL("DUCC " << version << "'s shipped files were refused:\n" << e.what());
    }
    const auto& s = cfg.scheduling.settings;
    CHECK(s.quantum_mb == 1024);       // ducc.rm.share.quantum = 1 (GB)
    CHECK(s.initialization_cap == 1);  // ducc.rm.initialization.cap = 1
    CHECK(s.expand_by_doubling);
    CHECK(s.use_prediction);
    CHECK(s.prediction_fudge_ms == 120000);
    CHECK(s.fragmentation_threshold == 8);
    CHECK(s.reserve_overage_mb == 0);                // ducc.rm.reserve_overage = 0 (new in 2.2)
    CHECK(s.default_memory_mb == 4096);              // ducc.rm.default.memory = 4 (GB)
    CHECK_FALSE(s.global_allotment_mb.has_value());  // only a commented-out line in the file: unlimited
    CHECK(s.epoch_ms == 10000);                      // orchestrator 10000 ms x ratio 1
    const auto& rt = cfg.runtime;
    CHECK(rt.heartbeat_interval_ms == 30000);  // ducc.agent.node.metrics.publish.rate
    CHECK(rt.node_stability == 5);             // what both files ship (rmbus's own default is 6)
    CHECK(rt.init_stability == 2);
    CHECK(rt.orchestrator_publish_ms == 10000);  // ducc.orchestrator.state.publish.rate
    CHECK(rt.state_publish_ratio == 1);

    // ducc.classes: one pool, the abstract templates dropped, 11 classes left.
    const auto& sc = cfg.scheduling;
    REQUIRE(sc.nodepools.size() == 1);
    CHECK(sc.nodepools[0].name == "--default--");
    CHECK(sc.nodepools[0].quantum_mb == 1024);
    CHECK(sc.classes.size() == 11);
    CHECK(cls(sc, "background").weight == 1);
    CHECK(cls(sc, "urgent").weight == 400);
    CHECK(cls(sc, "standalone").weight == 150);
    CHECK(cls(sc, "normal").is_default);
    CHECK(cls(sc, "normal").policy == policy::fair_share);
    CHECK(cls(sc, "normal").priority == 10);
    CHECK(cls(sc, "fixed").is_default);
    CHECK(cls(sc, "debug").priority == 7);
    CHECK(cls(sc, "debug").policy == policy::fixed_share);
    // fixed-base's max-processes = 10 is accepted and, as in DUCC, ignored.
    CHECK(cls(sc, "fixed").max_processes == 0);
    // ducc.jd.host.class = JobDriver, ducc.jd.host.user = System: the class admits System only.
    CHECK(cls(sc, "JobDriver").priority == 9);
    CHECK(cls(sc, "JobDriver").users == std::vector<std::string>{"System"});
    CHECK(cls(sc, "reserve").policy == policy::reserve);
    CHECK(cls(sc, "reserve").is_default);
    // The global initialization cap reaches every class that sets none.
    CHECK(cls(sc, "normal").initialization_cap == 1);
  }
}

TEST_CASE("3.0 differs from 2.2 only outside the RM: both files give the same configuration",
          "[config][ducc]") {
  // 3.0 adds ducc.virtual.ip.device / .address (reliable DUCC), which are none of the RM's business.
  CHECK(load_shipped("2.2") == load_shipped("3.0"));
}

TEST_CASE("every ducc.rm.* key of a release or of DUCC's RM is accepted, with a valid value",
          "[config][ducc]") {
  // A file carrying every known key at once: the ones no shipped 2.2/3.0 file sets too (DUCC 1.x's
  // state.publish.rate, and keys only DUCC's code reads).
  scratch_dir dir;
  dir.write("ducc.classes", "Nodepool main { }\nClass normal { policy = FAIR_SHARE ; nodepool = main }\n");
  std::ostringstream text;
  for (const auto& key : rc::detail::ducc_rm_keys()) {
    const std::string name(key.name);
    std::string value = "1";
    if (name == "ducc.rm.class.definitions")
      value = "ducc.classes";
    else if (name == "ducc.rm.user.registry")
      value = "ducc.users";
    else if (name == "ducc.rm.fast.recovery" || name == "ducc.rm.expand.by.doubling" ||
             name == "ducc.rm.prediction" || name == "ducc.rm.defragmentation" ||
             name == "ducc.rm.use_global_allotment")
      value = "true";
    else if (name.find("endpoint") != std::string::npos || name.find("class") != std::string::npos ||
             name == "ducc.rm.scheduler" || name == "ducc.rm.persistence.impl" ||
             name == "ducc.rm.jvm.args" || name == "ducc.rm.eviction.policy")
      value = "anything-at-all";
    text << name << " = " << value << "\n";
  }
  auto props = dir.write("ducc.properties", text.str());
  rc::rm_config cfg;
  try {
    cfg = rc::load_ducc(props);
  } catch (const rc::config_error& e) {
    FAIL("a known key was refused:\n" << e.what());
  }
  // Spot checks that the used ones were read: 1 GB, 1 GB of global allotment, 1 GB held back per node.
  CHECK(cfg.scheduling.settings.quantum_mb == 1024);
  CHECK(cfg.scheduling.settings.global_allotment_mb == std::optional<std::uint64_t>{1024});
  CHECK(cfg.scheduling.settings.reserved_dram_mb == 1024);
  CHECK(cfg.runtime.node_stability == 1);
}

TEST_CASE("the keys DUCC 2.2 added are known: the orchestrator's admin relay and reserve_overage",
          "[config][ducc]") {
  // The keys a DUCC site's file carried that an earlier rmbus refused (issue 12).
  for (auto name : {"ducc.rm.via.or.admin.endpoint", "ducc.rm.via.or.admin.endpoint.type"}) {
    const auto* key = rc::detail::find_ducc_rm_key(name);
    REQUIRE(key != nullptr);
    CHECK_FALSE(key->used);
  }
  const auto* overage = rc::detail::find_ducc_rm_key("ducc.rm.reserve_overage");
  REQUIRE(overage != nullptr);
  CHECK(overage->used);
  CHECK(rc::detail::find_ducc_rm_key("ducc.rm.share.quantom") == nullptr);
  // The table is sorted by name, which find_ducc_rm_key's binary search relies on.
  const auto& keys = rc::detail::ducc_rm_keys();
  CHECK(
      std::is_sorted(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.name < b.name; }));
}

TEST_CASE("docs/configuration.md lists every known ducc.rm.* key as used or ignored", "[config][docs]") {
  std::ifstream in(rc::test::data_dir() / ".." / ".." / ".." / "docs" / "configuration.md");
  REQUIRE(in.good());
  std::ostringstream docs;
  docs << in.rdbuf();
  for (const auto& key : rc::detail::ducc_rm_keys()) {
    const std::string row = "| `" + std::string(key.name) + "` | " + (key.used ? "used" : "ignored") + " |";
    CAPTURE(row);
    CHECK(docs.str().find(row) != std::string::npos);
  }
}
