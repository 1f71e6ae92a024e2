// Both configuration roads describe the same site the same way: the example site of shared/ducc-rm.md
// section 4.1 (two top-level pools, a subpool, all three policies) with the section 4.3 site override, once as
// ducc.properties + ducc.classes + nodefiles and once as one native TOML file. Also: the defaults are those of
// DUCC's shipped default.ducc.properties; the embedded default is DUCC's sample; render() round-trips.

#include <algorithm>

#include "config/embedded_default.hpp"
#include "config/loader.hpp"
#include "config/render.hpp"
#include "support.hpp"

namespace rc = rmbus::config;
using rmbus::core::policy;

namespace {

const rmbus::core::resource_class& cls(const rc::rm_config& cfg, const std::string& name) {
  const auto& classes = cfg.scheduling.classes;
  auto it = std::find_if(classes.begin(), classes.end(), [&](const auto& c) { return c.name == name; });
  REQUIRE(it != classes.end());
  return *it;
}

const rmbus::core::nodepool_def& pool(const rc::rm_config& cfg, const std::string& name) {
  const auto& pools = cfg.scheduling.nodepools;
  auto it = std::find_if(pools.begin(), pools.end(), [&](const auto& p) { return p.name == name; });
  REQUIRE(it != pools.end());
  return *it;
}

}  // namespace

TEST_CASE("the DUCC files and the native file of one site give equal configurations", "[config][roads]") {
  auto site = rc::test::data_dir() / "site";
  auto from_ducc = rc::load_ducc(site / "ducc.properties");
  auto from_toml = rc::load_native(site / "site.toml");
  INFO("DUCC road:\n" << rc::render(from_ducc) << "\nnative road:\n" << rc::render(from_toml));
  CHECK(from_ducc.scheduling.settings == from_toml.scheduling.settings);
  CHECK(from_ducc.scheduling.nodepools == from_toml.scheduling.nodepools);
  CHECK(from_ducc.scheduling.classes == from_toml.scheduling.classes);
  CHECK(from_ducc.scheduling.users == from_toml.scheduling.users);
  CHECK(from_ducc.runtime == from_toml.runtime);
  CHECK(from_ducc == from_toml);
}

TEST_CASE("the example site resolves to the values its files state", "[config][roads]") {
  auto cfg = rc::load_ducc(rc::test::data_dir() / "site" / "ducc.properties");
  const auto& s = cfg.scheduling.settings;
  // ducc.rm.share.quantum = 16 (GB) -> 16 * 1024 = 16384 MB.
  CHECK(s.quantum_mb == 16384);
  CHECK(s.fragmentation_threshold == 4);
  CHECK(s.initialization_cap == 2);
  CHECK(s.prediction_fudge_ms == 30000);
  // ducc.rm.global_allotment = 2048 (GB) -> 2048 * 1024 = 2097152 MB.
  CHECK(s.global_allotment_mb == std::optional<std::uint64_t>{2097152});
  // epoch = orchestrator rate x publish ratio = 5000 ms x 1.
  CHECK(s.epoch_ms == 5000);
  CHECK(cfg.runtime.heartbeat_interval_ms == 5000);
  CHECK(cfg.runtime.node_stability == 4);
  CHECK(cfg.runtime.round_timeout_ms == 5000);  // defaults to one orchestrator period
  CHECK(cfg.runtime.settle_ms == 5000);  // the settle window defaults to one heartbeat interval

  // Pools: general (top-level, 16 GB), bigmem nested in general, drivers (top-level, 4 GB = 4096 MB).
  REQUIRE(cfg.scheduling.nodepools.size() == 3);
  CHECK(cfg.scheduling.nodepools[0].name == "general");
  CHECK(pool(cfg, "general").quantum_mb == 16384);
  CHECK(pool(cfg, "drivers").quantum_mb == 4096);
  CHECK(pool(cfg, "bigmem").parent == "general");
  CHECK(pool(cfg, "bigmem").nodes == std::vector<std::string>{"bm01", "bm02.example.org", "bm03", "bm04"});
  CHECK(pool(cfg, "drivers").node_patterns == std::vector<std::string>{R"(jd[0-9]+(\.example\.org)?)"});
  // The first pool's domain qualifies every pool's short names.
  CHECK(pool(cfg, "drivers").domain == "example.org");

  // Inherited from fair-template: prediction-fudge 60000 and initialization-cap 1 override the globals.
  CHECK(cls(cfg, "batch").weight == 50);
  CHECK(cls(cfg, "batch").prediction_fudge_ms == 60000);
  CHECK(cls(cfg, "batch").initialization_cap == 1);
  CHECK(cls(cfg, "bigmem-jobs").nodepool == "bigmem");
  // No template: fixed takes the globals (fudge 30000, initialization cap 2).
  CHECK(cls(cfg, "fixed").prediction_fudge_ms == 30000);
  CHECK(cls(cfg, "fixed").initialization_cap == 2);
  CHECK(cls(cfg, "JobDriver").users == std::vector<std::string>{"System"});
  CHECK(cls(cfg, "reserve").policy == policy::reserve);
  CHECK(cfg.scheduling.classes.size() == 7);  // fair-template is abstract
  REQUIRE(cfg.scheduling.users.size() == 1);
  // max-allotment = 512 (GB) -> 524288 MB.
  CHECK(cfg.scheduling.users[0].max_allotment_mb == std::optional<std::uint64_t>{524288});
}

TEST_CASE("defaults are those of DUCC's shipped default.ducc.properties", "[config][defaults]") {
  // A properties file holding exactly the shipped RM keys, and one holding none, both give our defaults.
  auto shipped = rc::load_ducc(rc::test::data_dir() / "shipped" / "ducc.properties");
  auto empty = rc::load_ducc(rc::test::data_dir() / "empty_props" / "ducc.properties");
  CHECK(shipped.scheduling.settings == rmbus::core::scheduling_settings{});
  CHECK(shipped.runtime == rc::runtime_settings{});
  CHECK(empty.scheduling.settings == shipped.scheduling.settings);
  CHECK(empty.runtime == shipped.runtime);

  // And the defaults are the FILE column of section 4.3, not the Java code defaults.
  const auto& s = shipped.scheduling.settings;
  CHECK(s.quantum_mb == 1024);                 // 1 GB (code: 15)
  CHECK(s.fragmentation_threshold == 8);       // (code: 2)
  CHECK(s.initialization_cap == 1);            // (code: 2)
  CHECK(s.expand_by_doubling);
  CHECK(s.use_prediction);
  CHECK(s.prediction_fudge_ms == 120000);      // (code: 60000)
  CHECK(s.reserve_overage_mb == 0);
  CHECK(s.default_memory_mb == 4096);          // 4 GB (code: 15)
  CHECK_FALSE(s.global_allotment_mb.has_value());  // commented out in the file: unlimited
  CHECK(s.epoch_ms == 10000);                  // 10000 ms x ratio 1
  const auto& rt = shipped.runtime;
  CHECK(rt.heartbeat_interval_ms == 30000);    // (code: 60000)
  CHECK(rt.node_stability == 6);               // (code: 5)
  CHECK(rt.init_stability == 2);               // (code: 3)
  CHECK(rt.fast_recovery);
  CHECK(rt.orchestrator_publish_ms == 10000);
  CHECK(rt.state_publish_ratio == 1);
  CHECK(rt.bus_pub == "tcp://127.0.0.1:5560");
  CHECK(rt.bus_sub == "tcp://127.0.0.1:5561");
  CHECK(rt.admin == "tcp://127.0.0.1:5562");
  CHECK(rt.metrics == "127.0.0.1:9464");
  CHECK(rt.log_level == "info");
}

TEST_CASE("the embedded default is DUCC's shipped sample and equals the shipped files", "[config][defaults]") {
  auto cfg = rc::embedded_default();
  REQUIRE(cfg.scheduling.nodepools.size() == 1);
  CHECK(cfg.scheduling.nodepools[0].name == "--default--");
  CHECK(cfg.scheduling.nodepools[0].nodes.empty());
  struct expected {
    const char* name;
    policy pol;
    int priority;
    int weight;
    bool is_default;
  };
  const expected table[] = {
      {"background", policy::fair_share, 10, 1, false}, {"low", policy::fair_share, 10, 50, false},
      {"normal", policy::fair_share, 10, 100, true},    {"high", policy::fair_share, 10, 200, false},
      {"weekly", policy::fair_share, 10, 100, false},   {"urgent", policy::fair_share, 10, 400, false},
      {"standalone", policy::fair_share, 10, 150, false}, {"fixed", policy::fixed_share, 5, 100, true},
      {"debug", policy::fixed_share, 7, 100, false},    {"JobDriver", policy::fixed_share, 9, 100, false},
      {"reserve", policy::reserve, 1, 100, true},
  };
  REQUIRE(cfg.scheduling.classes.size() == std::size(table));
  for (std::size_t i = 0; i < std::size(table); ++i) {
    const auto& c = cfg.scheduling.classes[i];
    INFO("class " << table[i].name);
    CHECK(c.name == table[i].name);
    CHECK(c.policy == table[i].pol);
    CHECK(c.priority == table[i].priority);
    CHECK(c.weight == table[i].weight);
    CHECK(c.is_default == table[i].is_default);
    CHECK(c.nodepool == "--default--");
  }
  CHECK(cls(cfg, "JobDriver").users == std::vector<std::string>{"System"});
  CHECK(cls(cfg, "normal").users.empty());
  CHECK(cfg.scheduling.settings == rmbus::core::scheduling_settings{});
  CHECK(cfg.runtime == rc::runtime_settings{});
  // The same sample written as DUCC files (data/shipped) gives the same configuration.
  CHECK(rc::load_ducc(rc::test::data_dir() / "shipped" / "ducc.properties") == cfg);
}

TEST_CASE("render prints a native configuration that reads back equal", "[config][render]") {
  for (const char* which : {"embedded", "site"}) {
    INFO(which);
    auto cfg = std::string(which) == "embedded" ? rc::embedded_default()
                                                : rc::load_ducc(rc::test::data_dir() / "site" / "ducc.properties");
    auto text = rc::render(cfg);
    INFO(text);
    CHECK(rc::parse_native(text, "<rendered>") == cfg);
    CHECK(text.find("[[class]]") != std::string::npos);
  }
}

TEST_CASE("render writes [security] when CURVE is on, and it reads back equal", "[config][render]") {
  auto cfg = rc::embedded_default();
  CHECK(rc::render(cfg).find("[security]") == std::string::npos);  // off: the section is not written
  cfg.runtime.security.curve = true;
  cfg.runtime.security.key = "/site/curve/rmbus.key";
  cfg.runtime.security.server_key = "/site/curve/proxy.pub";
  cfg.runtime.security.keys = "/site/curve/keys";
  const auto text = rc::render(cfg);
  INFO(text);
  CHECK(text.find("[security]\ncurve = true\n") != std::string::npos);
  CHECK(rc::parse_native(text, "<rendered>") == cfg);
}

// Next to what fuzz_ducc_config found (bytes that are not UTF-8 in a class name): a class name holding DEL
// (0x7f), which is valid UTF-8, was printed unescaped, which TOML forbids in a basic string, so the rendering
// did not read back.
TEST_CASE("render escapes every control character, DEL included, so names holding them read back", "[config][render]") {
  rc::test::scratch_dir dir;
  auto classes = dir.write("ducc.classes", "Nodepool main { }\n"
                                           "Class de\x7f\x01g { policy = FAIR_SHARE ; nodepool = main ; default = true }\n");
  dir.write("ducc.properties", "ducc.rm.share.quantum = 1\n");
  const auto cfg = rc::load_ducc(dir.path() / "ducc.properties");
  REQUIRE(cfg.scheduling.classes.size() == 1);
  CHECK(cfg.scheduling.classes[0].name == "de\x7f\x01g");
  const auto text = rc::render(cfg);
  CHECK(text.find("\"de\\u007f\\u0001g\"") != std::string::npos);
  CHECK(rc::parse_native(text, "rendered.toml") == cfg);
}
