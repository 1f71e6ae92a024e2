// The native TOML schema: sizes, every section, inheritance, nodefiles relative to the file, derived values
// (epoch, round timeout), and the example in docs/configuration.md, which must stay a valid configuration.

#include <fstream>
#include <sstream>

#include "config/detail/values.hpp"
#include "config/loader.hpp"
#include "config/render.hpp"
#include "support.hpp"

namespace rc = rmbus::config;
using rc::test::scratch_dir;

namespace {

const std::string one_pool = "[[nodepool]]\nname = \"main\"\n";

}  // namespace

TEST_CASE("sizes: strings with a unit or integers in MB", "[config][native]") {
  namespace d = rc::detail;
  CHECK(d::parse_size_mb("512M") == std::optional<std::uint64_t>{512});
  CHECK(d::parse_size_mb("512MB") == std::optional<std::uint64_t>{512});
  // 16 GB = 16 * 1024 MB = 16384 MB; units are case-insensitive.
  CHECK(d::parse_size_mb("16G") == std::optional<std::uint64_t>{16384});
  CHECK(d::parse_size_mb("16gb") == std::optional<std::uint64_t>{16384});
  // 2 TB = 2 * 1024 * 1024 MB = 2097152 MB.
  CHECK(d::parse_size_mb("2T") == std::optional<std::uint64_t>{2097152});
  CHECK_FALSE(d::parse_size_mb("16").has_value());      // a string needs its unit
  CHECK_FALSE(d::parse_size_mb("1.5G").has_value());    // whole numbers only
  CHECK_FALSE(d::parse_size_mb("G").has_value());
  CHECK_FALSE(d::parse_size_mb("16 G").has_value());
  CHECK_FALSE(d::parse_size_mb("99999999999999999999G").has_value());  // overflow is refused, not wrapped
  CHECK(d::size_text(16384) == "16G");
  CHECK(d::size_text(1536) == "1536M");

  auto in_mb = rc::parse_native("[scheduling]\nquantum = \"2048M\"\n" + one_pool, "site.toml");
  auto in_gb = rc::parse_native("[scheduling]\nquantum = \"2G\"\n" + one_pool, "site.toml");
  CHECK(in_mb.scheduling.settings.quantum_mb == 2048);
  CHECK(in_mb == in_gb);
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[scheduling]\nquantum = \"0M\"\n" + one_pool, "site.toml"), "site.toml",
                           2, "quantum must be greater than 0");
  // Other sizes still take a bare number of MB.
  auto allotment = rc::parse_native("[scheduling]\nquantum = \"1G\"\nglobal_allotment = 4096\n" + one_pool, "site.toml");
  CHECK(allotment.scheduling.settings.global_allotment_mb == 4096);
}

TEST_CASE("a bare number for a quantum is refused, naming the unit", "[config][native]") {
  // DUCC's ducc.rm.share.quantum = 1 means 1 GB; here a bare 1 would silently have meant 1 MB.
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[scheduling]\nquantum = 1\n" + one_pool, "site.toml"), "site.toml", 2,
                           "scheduling.quantum = 1 has no unit: write \"1G\" or \"1M\" (DUCC's ducc.rm.share.quantum "
                           "= 1 means 1 GB)");
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[scheduling]\nquantum = 4096\n" + one_pool, "site.toml"), "site.toml", 2,
                           "write \"4096G\" or \"4096M\"");
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[[nodepool]]\nname = \"main\"\nquantum = 16\n", "site.toml"), "site.toml",
                           3, "nodepool 'main'.quantum = 16 has no unit");
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[scheduling]\nquantum = -1\n" + one_pool, "site.toml"), "site.toml", 2,
                           "has no unit");
}

TEST_CASE("every section is read", "[config][native]") {
  auto cfg = rc::parse_native(R"([scheduling]
quantum = "15G"
fragmentation_threshold = 2
defragmentation = false
initialization_cap = 4
expand_by_doubling = false
use_prediction = false
prediction_fudge_ms = 1
global_allotment = "360G"
reserve_overage = "20G"
reserved_dram = "2G"
default_memory = "15G"
default_threads = 4
default_tasks = 100

[timing]
heartbeat_interval_ms = 250
node_stability = 3
init_stability = 1
fast_recovery = false
orchestrator_publish_ms = 300
state_publish_ratio = 2
round_timeout_ms = 900

[bus]
pub = "tcp://127.0.0.1:7000"
sub = "tcp://127.0.0.1:7001"
admin = "ipc:///tmp/rmbus-admin"
metrics = "0.0.0.0:9000"

[log]
level = "trace"

[limits]
max_body_bytes = 1000
max_string_bytes = 100
max_array_len = 10
max_map_len = 20
max_depth = 4
max_nodes = 50

[[nodepool]]
name = "main"
search_order = 50

[[class]]
name = "c"
policy = "fair_share"
nodepool = "main"
max_processes = 12
users = ["ann"]

[[user]]
name = "ann"
max_allotment = "100G"
class_allotments = { c = "10G" }
)",
                              "site.toml");
  const auto& s = cfg.scheduling.settings;
  CHECK(s.quantum_mb == 15 * 1024);
  CHECK(s.fragmentation_threshold == 2);
  CHECK_FALSE(s.defragmentation);
  CHECK(s.initialization_cap == 4);
  CHECK_FALSE(s.expand_by_doubling);
  CHECK_FALSE(s.use_prediction);
  CHECK(s.prediction_fudge_ms == 1);
  CHECK(s.global_allotment_mb == std::optional<std::uint64_t>{360 * 1024});
  CHECK(s.reserve_overage_mb == 20 * 1024);
  CHECK(s.reserved_dram_mb == 2 * 1024);
  CHECK(s.default_memory_mb == 15 * 1024);
  CHECK(s.default_threads == 4);
  CHECK(s.default_tasks == 100);
  // epoch = orchestrator period x ratio = 300 ms x 2 = 600 ms
  CHECK(s.epoch_ms == 600);
  const auto& rt = cfg.runtime;
  CHECK(rt.heartbeat_interval_ms == 250);
  CHECK(rt.node_stability == 3);
  CHECK(rt.init_stability == 1);
  CHECK_FALSE(rt.fast_recovery);
  CHECK(rt.orchestrator_publish_ms == 300);
  CHECK(rt.state_publish_ratio == 2);
  CHECK(rt.round_timeout_ms == 900);
  CHECK(rt.bus_pub == "tcp://127.0.0.1:7000");
  CHECK(rt.admin == "ipc:///tmp/rmbus-admin");
  CHECK(rt.metrics == "0.0.0.0:9000");
  CHECK(rt.log_level == "trace");
  CHECK(rt.limits == rc::decode_limit_settings{1000, 100, 10, 20, 4, 50});
  CHECK(cfg.scheduling.nodepools[0].search_order == 50);
  CHECK(cfg.scheduling.nodepools[0].quantum_mb == 15 * 1024);  // a top-level pool takes the global quantum
  CHECK(cfg.scheduling.classes[0].max_processes == 12);
  CHECK(cfg.scheduling.classes[0].users == std::vector<std::string>{"ann"});
  CHECK(cfg.scheduling.users[0].max_allotment_mb == std::optional<std::uint64_t>{100 * 1024});
}

TEST_CASE("the round timeout defaults to one orchestrator period", "[config][native]") {
  auto cfg = rc::parse_native("[timing]\norchestrator_publish_ms = 400\n" + one_pool, "site.toml");
  CHECK(cfg.runtime.round_timeout_ms == 400);
}

TEST_CASE("the settle window defaults to one heartbeat interval, and 0 turns it off", "[config][native]") {
  CHECK(rc::parse_native("[timing]\nheartbeat_interval_ms = 700\n" + one_pool, "site.toml").runtime.settle_ms == 700);
  CHECK(rc::parse_native("[timing]\nsettle_ms = 2500\n" + one_pool, "site.toml").runtime.settle_ms == 2500);
  CHECK(rc::parse_native("[timing]\nsettle_ms = 0\n" + one_pool, "site.toml").runtime.settle_ms == 0);
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[timing]\nsettle_ms = -1\n" + one_pool, "site.toml"), "site.toml", 2,
                           "out of range");
}

TEST_CASE("an empty file is refused: a site needs a nodepool", "[config][native]") {
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("", "empty.toml"), "empty.toml", 0, "no nodepool is defined");
  auto cfg = rc::parse_native(one_pool, "site.toml");
  CHECK(cfg.scheduling.classes.empty());
  CHECK(cfg.runtime == rc::runtime_settings{});
}

TEST_CASE("nodefiles in TOML are resolved next to the TOML file", "[config][native]") {
  scratch_dir dir;
  dir.write("gpu.nodes", "g1\ng2   # second\n");
  dir.write("jd.nodes.regex", "jd[0-9]+\n");
  auto path = dir.write("site.toml", one_pool +
                                         "[[nodepool]]\nname = \"gpu\"\nparent = \"main\"\nnodefile = \"gpu.nodes\"\n"
                                         "nodes = [\"g3\"]\n"
                                         "[[nodepool]]\nname = \"jd\"\nnodefile = \"jd.nodes.regex\"\n");
  auto cfg = rc::load_native(path);
  // Inline nodes first, then the nodefile's.
  CHECK(cfg.scheduling.nodepools[1].nodes == std::vector<std::string>{"g3", "g1", "g2"});
  CHECK(cfg.scheduling.nodepools[2].node_patterns == std::vector<std::string>{"jd[0-9]+"});
}

TEST_CASE("a pool whose nodefile lists no node beside a pool without one is written back as nodes = []",
          "[config][native]") {
  // Fuzz finding 7 (seed regression-empty-nodefile-beside-unlisted-pool.toml): the rendering wrote both pools
  // without a node list, and reading it back refused two pools without a nodefile.
  scratch_dir dir;
  dir.write("a.nodes", "  # nothing but a comment\n");
  auto path = dir.write("site.toml", "[[nodepool]]\nname = \"general\"\nnodefile = \"a.nodes\"\n"
                                     "[[nodepool]]\nname = \"other\"\n");
  const auto cfg = rc::load_native(path);
  REQUIRE(cfg.scheduling.nodepools.size() == 2);
  CHECK(cfg.scheduling.nodepools[0].nodes.empty());
  CHECK(cfg.scheduling.nodepools[1].nodes.empty());
  const auto text = rc::render(cfg);
  INFO(text);
  CHECK(text.find("# no node list: takes every node no other pool names\n\n[[nodepool]]\nname = \"other\"") !=
        std::string::npos);
  CHECK(text.find("nodes = []") != std::string::npos);
  CHECK(rc::parse_native(text, "<rendered>", dir.path()) == cfg);
}

TEST_CASE("a pool without a node list after the first top-level pool is written as getting no node", "[config][native]") {
  // A node no pool names goes to the first top-level pool (DUCC's rule), whether or not that pool lists nodes.
  const auto cfg = rc::parse_native("[[nodepool]]\nname = \"main\"\nnodes = [\"n1\"]\n[[nodepool]]\nname = \"other\"\n",
                                    "site.toml");
  const auto text = rc::render(cfg);
  INFO(text);
  CHECK(text.find("# no node list: a node no pool names goes to the first top-level pool, \"main\"") !=
        std::string::npos);
  CHECK(text.find("takes every node") == std::string::npos);
  CHECK(rc::parse_native(text, "<rendered>") == cfg);
}

TEST_CASE("the example in docs/configuration.md is a valid configuration", "[config][native]") {
  auto doc = rc::test::data_dir().parent_path().parent_path().parent_path() / "docs" / "configuration.md";
  std::ifstream in(doc);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  std::string md = text.str();
  // The first ```toml block of the document is the complete example.
  auto begin = md.find("```toml\n");
  REQUIRE(begin != std::string::npos);
  begin += 8;
  auto end = md.find("```", begin);
  REQUIRE(end != std::string::npos);
  auto cfg = rc::parse_native(md.substr(begin, end - begin), "docs/configuration.md example");
  CHECK(cfg.scheduling.nodepools.size() >= 2);
  CHECK_FALSE(cfg.scheduling.classes.empty());
}

TEST_CASE("initialization_cap = 0, in [scheduling] and per class, means no initialization cap, as in DUCC",
          "[config][native]") {
  auto cfg = rc::parse_native("[scheduling]\ninitialization_cap = 0\n" + one_pool +
                                  "[[class]]\nname = \"inherits\"\npolicy = \"FAIR_SHARE\"\nnodepool = \"main\"\n"
                                  "[[class]]\nname = \"two\"\npolicy = \"FAIR_SHARE\"\nnodepool = \"main\"\n"
                                  "initialization_cap = 2\n",
                              "site.toml");
  CHECK(cfg.scheduling.settings.initialization_cap == 0);
  REQUIRE(cfg.scheduling.classes.size() == 2);
  CHECK(cfg.scheduling.classes[0].initialization_cap == 0);  // the [scheduling] 0 reaches the class
  CHECK(cfg.scheduling.classes[1].initialization_cap == 2);
  cfg = rc::parse_native(one_pool + "[[class]]\nname = \"own\"\npolicy = \"FAIR_SHARE\"\nnodepool = \"main\"\n"
                                    "initialization_cap = 0\n",
                         "site.toml");
  CHECK(cfg.scheduling.settings.initialization_cap == 1);   // the default
  CHECK(cfg.scheduling.classes[0].initialization_cap == 0);
}

TEST_CASE("log rotation, health and accounting: read, files resolved next to the TOML file, defaults off", "[config][native]") {
  // Defaults: stderr only (no file), 64 MiB x 5 compressed once a file is set; health and accounting off.
  const auto defaults = rc::parse_native(one_pool, "site.toml").runtime;
  CHECK(defaults.logging.file.empty());
  CHECK(defaults.logging.max_bytes == 64u * 1024u * 1024u);
  CHECK(defaults.logging.max_files == 5);
  CHECK(defaults.logging.compress);
  CHECK_FALSE(defaults.health.enabled);
  CHECK(defaults.health.disk_warn_percent == 10);
  CHECK_FALSE(defaults.accounting.enabled);
  CHECK(defaults.accounting.file.empty());

  scratch_dir dir;
  auto path = dir.write("site.toml", "[log]\nfile = \"logs/rm.log\"\nmax_bytes = 4096\nmax_files = 3\ncompress = false\n"
                                     "[health]\nenabled = true\ndisk_warn_percent = 25\n"
                                     "[accounting]\nenabled = true\nfile = \"/var/tmp/jobs.jsonl\"\n" +
                                         one_pool);
  const auto rt = rc::load_native(path).runtime;
  CHECK(rt.logging.file == (dir.path() / "logs/rm.log").string());  // relative: next to the TOML file
  CHECK(rt.logging.max_bytes == 4096);
  CHECK(rt.logging.max_files == 3);
  CHECK_FALSE(rt.logging.compress);
  CHECK(rt.health.enabled);
  CHECK(rt.health.disk_warn_percent == 25);
  CHECK(rt.accounting.enabled);
  CHECK(rt.accounting.file == "/var/tmp/jobs.jsonl");  // absolute: as written
}

TEST_CASE("[security]: off by default, one line turns CURVE on, paths resolve next to the file", "[config][native]") {
  const auto off = rc::parse_native(one_pool, "/site/rmbus.toml");
  CHECK_FALSE(off.runtime.security.curve);
  CHECK(off.runtime.security == rc::security_settings{});  // nothing resolved when the section is absent

  const auto on = rc::parse_native("[security]\ncurve = true\n" + one_pool, "/site/rmbus.toml");
  CHECK(on.runtime.security.curve);
  CHECK(on.runtime.security.key == "/site/curve/rmbus.key");
  CHECK(on.runtime.security.keys == "/site/curve/keys");
  CHECK(on.runtime.security.server_key.empty());  // the own key's public half

  const auto named = rc::parse_native(
      "[security]\ncurve = true\nkey = \"../k/rm.key\"\nserver_key = \"/etc/proxy.pub\"\nkeys = \"allowed\"\n" + one_pool,
      "/site/conf/rmbus.toml");
  CHECK(named.runtime.security.key == "/site/k/rm.key");
  CHECK(named.runtime.security.server_key == "/etc/proxy.pub");
  CHECK(named.runtime.security.keys == "/site/conf/allowed");

  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[security]\ncurve = true\npassword = \"x\"\n" + one_pool, "s.toml"),
                           "s.toml", 3, "password");
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[security]\nkeys = \"\"\n" + one_pool, "s.toml"), "s.toml", 2,
                           "security.keys: a file path must not be empty");
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[security]\ncurve = \"yes\"\n" + one_pool, "s.toml"), "s.toml", 2,
                           "curve");
}

TEST_CASE("share groups: [[group]] tables with parent, weight, priority and users", "[config][native]") {
  const std::string text = one_pool + R"(
[[class]]
name = "normal"
policy = "FAIR_SHARE"
nodepool = "main"

[[group]]
name = "physics"
parent = "normal"
weight = 2

[[group]]
name = "lhc"
parent = "physics"
priority = -1
users = ["ann", "bob", "ann"]
)";
  auto cfg = rc::parse_native(text, "site.toml");
  const auto& g = cfg.scheduling.groups;
  REQUIRE(g.size() == 2);
  CHECK(g[0].name == "physics");
  CHECK(g[0].parent == "normal");
  CHECK(g[0].weight == 2);
  CHECK(g[0].priority == 0);  // default
  CHECK(g[0].users.empty());
  CHECK(g[1].parent == "physics");
  CHECK(g[1].weight == 1);  // default: a group weighs as one user
  CHECK(g[1].priority == -1);
  CHECK(g[1].users == std::vector<std::string>{"ann", "bob"});  // a repeated name is listed once
  // render() writes them back so that they read back equal.
  CHECK(rc::parse_native(rc::render(cfg), "<rendered>") == cfg);
}

TEST_CASE("the share group example in docs/configuration.md extends the complete example", "[config][native]") {
  auto doc = rc::test::data_dir().parent_path().parent_path().parent_path() / "docs" / "configuration.md";
  std::ifstream in(doc);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string md = text.str();
  const auto block = [&](std::size_t from) {
    auto begin = md.find("```toml\n", from);
    REQUIRE(begin != std::string::npos);
    begin += 8;
    return md.substr(begin, md.find("```", begin) - begin);
  };
  const auto groups_at = md.find("### Share groups");
  REQUIRE(groups_at != std::string::npos);
  auto cfg = rc::parse_native(block(0) + block(groups_at), "docs/configuration.md examples");
  REQUIRE(cfg.scheduling.groups.size() == 2);
  CHECK(cfg.scheduling.groups[1].parent == "physics");
}
