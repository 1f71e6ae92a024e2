// DUCC's own formats, read by the rules of shared/ducc-rm.md sections 4.1-4.3: the ducc.classes lexer
// (comments, line ends, separators, optional '=', joined values), stanza inheritance (multi-level, abstract
// templates, what is and is not inherited, defaults by policy and from the global properties), nodefiles, and
// the Java properties reader.

#include <algorithm>

#include "config/detail/java_properties.hpp"
#include "config/loader.hpp"
#include "support.hpp"

namespace rc = rmbus::config;
using rc::test::scratch_dir;
using rmbus::core::policy;

namespace {

const rmbus::core::resource_class& cls(const rmbus::core::scheduler_config& cfg, const std::string& name) {
  auto it = std::find_if(cfg.classes.begin(), cfg.classes.end(), [&](const auto& c) { return c.name == name; });
  REQUIRE(it != cfg.classes.end());
  return *it;
}

rmbus::core::scheduler_config read(const scratch_dir& dir, const std::string& classes,
                                   const rmbus::core::scheduling_settings& settings = {}) {
  return rc::load_ducc_classes(dir.write("ducc.classes", classes), {}, settings);
}

}  // namespace

TEST_CASE("lexical rules: comments, line ends, separators, optional '=', joined values", "[config][ducc]") {
  scratch_dir dir;
  auto cfg = read(dir,
                  "   # a comment line, indented\n"
                  "\n"
                  "Nodepool main {\n"
                  "  search-order 7\n"               // '=' is optional
                  "}\n"
                  "Class c {policy=FAIR_SHARE;nodepool=main;weight=3}\n"  // separators need no spaces
                  "Class d\n"
                  "{\n"                               // the brace may sit on the next line
                  "  policy = FIXED_SHARE ; nodepool = main\n"
                  "  users = ann,bob   carl\n"        // commas are whitespace; tokens joined by one space
                  "}\n");
  REQUIRE(cfg.nodepools.size() == 1);
  CHECK(cfg.nodepools[0].search_order == 7);
  CHECK(cls(cfg, "c").weight == 3);
  CHECK(cls(cfg, "d").users == std::vector<std::string>{"ann", "bob", "carl"});
  CHECK(cls(cfg, "d").policy == policy::fixed_share);
}

TEST_CASE("multi-level inheritance copies every key but abstract and default", "[config][ducc]") {
  scratch_dir dir;
  dir.write("side.nodes", "s1\n");
  auto cfg = read(dir,
                  "Nodepool main { }\n"
                  "Nodepool side { nodefile side.nodes }\n"
                  "Class base { policy = FAIR_SHARE ; nodepool = main ; weight = 40 ; prediction-fudge = 5000 ;"
                  " users = u1 ; abstract = true ; default = true }\n"
                  "Class middle base { weight = 60 ; abstract = true }\n"
                  "Class leaf middle { nodepool = side }\n"
                  "Class sibling base { }\n");
  // leaf <- middle <- base: weight from middle (60), fudge and users from base, nodepool its own.
  const auto& leaf = cls(cfg, "leaf");
  CHECK(leaf.weight == 60);
  CHECK(leaf.prediction_fudge_ms == 5000);
  CHECK(leaf.users == std::vector<std::string>{"u1"});
  CHECK(leaf.nodepool == "side");
  // Neither `default` nor `abstract` is inherited: leaf and sibling are concrete and not default.
  CHECK_FALSE(leaf.is_default);
  CHECK_FALSE(cls(cfg, "sibling").is_default);
  CHECK(cls(cfg, "sibling").weight == 40);
  // Abstract templates disappear from the result.
  CHECK(cfg.classes.size() == 2);
}

TEST_CASE("class defaults by policy and from the global properties", "[config][ducc]") {
  scratch_dir dir;
  rmbus::core::scheduling_settings globals;
  globals.initialization_cap = 3;
  globals.expand_by_doubling = false;
  globals.use_prediction = false;
  globals.prediction_fudge_ms = 777;
  auto cfg = read(dir,
                  "Nodepool main { }\n"
                  "Class f { policy = FAIR_SHARE ; nodepool = main }\n"
                  "Class x { policy = FIXED_SHARE ; nodepool = main }\n"
                  "Class r { policy = RESERVE ; nodepool = main }\n"
                  "Class own { policy = FAIR_SHARE ; nodepool = main ; initialization-cap = 2 ;"
                  " expand-by-doubling = true ; use-prediction = true ; prediction-fudge = 10 }\n",
                  globals);
  // Priorities by policy: FAIR 10, FIXED 5, RESERVE 1; weight 100.
  CHECK(cls(cfg, "f").priority == 10);
  CHECK(cls(cfg, "x").priority == 5);
  CHECK(cls(cfg, "r").priority == 1);
  CHECK(cls(cfg, "f").weight == 100);
  // Unset class keys take the global properties...
  CHECK(cls(cfg, "f").initialization_cap == 3);
  CHECK_FALSE(cls(cfg, "f").expand_by_doubling);
  CHECK_FALSE(cls(cfg, "f").use_prediction);
  CHECK(cls(cfg, "f").prediction_fudge_ms == 777);
  // ... and set ones keep their own values.
  CHECK(cls(cfg, "own").initialization_cap == 2);
  CHECK(cls(cfg, "own").expand_by_doubling);
  CHECK(cls(cfg, "own").use_prediction);
  CHECK(cls(cfg, "own").prediction_fudge_ms == 10);
}

TEST_CASE("deprecated and informational class keys are accepted", "[config][ducc]") {
  scratch_dir dir;
  auto cfg = read(dir,
                  "Nodepool main { }\n"
                  "Class f { policy = FAIR_SHARE ; nodepool = main ; cap = 5 ; max-processes = 9 ;"
                  " max-machines = 2 ; debug = fixed }\n"
                  "Class r { policy = RESERVE ; nodepool = main ; enforce = false }\n");
  // max-processes is ignored as DUCC ignores it: the class has no process limit.
  CHECK(cls(cfg, "f").max_processes == 0);
  CHECK(cls(cfg, "r").policy == policy::reserve);
  // enforce is still type-checked.
  RMBUS_CHECK_CONFIG_ERROR(read(dir, "Nodepool main { }\nClass r { policy = RESERVE ; nodepool = main ; enforce = sure }\n"),
                           "ducc.classes", 2, "'enforce' must be true or false");
}

TEST_CASE("nodefiles: comments anywhere, domain lines ignored, imports relative to the naming file", "[config][ducc]") {
  scratch_dir dir;
  std::filesystem::create_directories(dir.path() / "racks");
  dir.write("pool.nodes", "a1   # first\n# whole-line comment\ndomain example.org\na2 a3\nimport racks/r1.nodes\n");
  // r1.nodes lives in racks/, so its import of r2.nodes is resolved in racks/ too.
  dir.write("racks/r1.nodes", "r1-1\nimport r2.nodes\n");
  dir.write("racks/r2.nodes", "r2-1\n");
  auto cfg = read(dir, "Nodepool main { }\nNodepool p { nodefile pool.nodes }\n");
  CHECK(cfg.nodepools[1].nodes == std::vector<std::string>{"a1", "a2", "a3", "r1-1", "r2-1"});
}

TEST_CASE("an absolute class path and a user registry are honoured by load_ducc", "[config][ducc]") {
  scratch_dir dir;
  std::filesystem::create_directories(dir.path() / "elsewhere");
  auto classes = dir.write("elsewhere/site.classes", "Nodepool main { nodefile main.nodes }\n"
                                                     "Class c { policy = FAIR_SHARE ; nodepool = main }\n");
  dir.write("elsewhere/main.nodes", "m1\n");  // relative to the class file, not to the properties file
  dir.write("registry.users", "User zed { max-allotment = 3 }\n");
  auto props = dir.write("ducc.properties", "ducc.rm.class.definitions = " + classes.string() +
                                                "\nducc.rm.user.registry = registry.users\n");
  auto cfg = rc::load_ducc(props);
  CHECK(cfg.scheduling.nodepools[0].nodes == std::vector<std::string>{"m1"});
  REQUIRE(cfg.scheduling.users.size() == 1);
  // 3 GB = 3072 MB
  CHECK(cfg.scheduling.users[0].max_allotment_mb == std::optional<std::uint64_t>{3072});
}

TEST_CASE("ducc.jd.host.class and ducc.jd.host.user choose the auto-authorised class and user", "[config][ducc]") {
  scratch_dir dir;
  dir.write("ducc.classes", "Nodepool main { }\n"
                            "Class drivers { policy = FIXED_SHARE ; nodepool = main ; users = ops }\n"
                            "Class JobDriver { policy = FIXED_SHARE ; nodepool = main }\n");
  auto props = dir.write("ducc.properties", "ducc.jd.host.class = drivers\nducc.jd.host.user = ducc\n");
  auto cfg = rc::load_ducc(props);
  CHECK(cls(cfg.scheduling, "drivers").users == std::vector<std::string>{"ops", "ducc"});
  CHECK(cls(cfg.scheduling, "JobDriver").users.empty());
}

TEST_CASE("Java properties: separators, comments, continuations, escapes, substitution", "[config][ducc]") {
  namespace d = rc::detail;
  auto props = d::parse_java_properties(
      "# comment\n"
      "! also a comment\n"
      "a = 1\n"
      "b:2\n"
      "c 3\n"
      "   d   =   spaced value   \n"
      "e = first \\\n"
      "    second\n"
      "f = back\\\\slash\n"
      "g = ${a}-${missing}\n"
      "a = 10\n");
  CHECK(props.at("a").value == "10");  // later keys replace earlier ones
  CHECK(props.at("a").line == 11);
  CHECK(props.at("b").value == "2");
  CHECK(props.at("c").value == "3");
  CHECK(props.at("d").value == "spaced value");
  CHECK(props.at("e").value == "first second");
  CHECK(props.at("e").line == 7);
  CHECK(props.at("f").value == "back\\slash");
  CHECK(d::expand_property(props, props.at("g").value) == "10-${missing}");
  CHECK_FALSE(props.contains("comment"));
}

TEST_CASE("initialization cap 0, globally and per class, means no initialization cap, as in DUCC", "[config][ducc]") {
  // DUCC's RmJob caps an uninitialized job only when the class's cap is > 0; 0 leaves it its full share.
  scratch_dir dir;
  dir.write("ducc.classes",
            "Nodepool main { }\n"
            "Class inherits { policy = FAIR_SHARE ; nodepool = main }\n"
            "Class own { policy = FAIR_SHARE ; nodepool = main ; initialization-cap = 0 }\n"
            "Class two { policy = FAIR_SHARE ; nodepool = main ; initialization-cap = 2 }\n");
  auto cfg = rc::load_ducc(dir.write("ducc.properties", "ducc.rm.initialization.cap = 0\n"));
  CHECK(cfg.scheduling.settings.initialization_cap == 0);
  CHECK(cls(cfg.scheduling, "inherits").initialization_cap == 0);  // the global 0 reaches the class
  CHECK(cls(cfg.scheduling, "own").initialization_cap == 0);
  CHECK(cls(cfg.scheduling, "two").initialization_cap == 2);       // a class's own value still wins
  // A class may switch the cap off under a global cap of 1 too.
  cfg = rc::load_ducc(dir.write("ducc.properties", "ducc.rm.initialization.cap = 1\n"));
  CHECK(cls(cfg.scheduling, "inherits").initialization_cap == 1);
  CHECK(cls(cfg.scheduling, "own").initialization_cap == 0);
}

TEST_CASE("rmbus.* keys of ducc.properties set log rotation, health and accounting", "[config][ducc]") {
  scratch_dir dir;
  dir.write("ducc.classes", "Nodepool main { }\nClass c { policy = FAIR_SHARE ; nodepool = main }\n");
  auto props = dir.write("ducc.properties",
                         "rmbus.log.file = rm.log\nrmbus.log.max.bytes = 2048\nrmbus.log.max.files = 2\n"
                         "rmbus.log.compress = false\nrmbus.health.enabled = true\nrmbus.health.disk.warn.percent = 5\n"
                         "rmbus.accounting.enabled = true\nrmbus.accounting.file = acct/jobs.jsonl\n");
  const auto rt = rc::load_ducc(props).runtime;
  CHECK(rt.logging.file == (dir.path() / "rm.log").string());  // relative to the properties file's folder
  CHECK(rt.logging.max_bytes == 2048);
  CHECK(rt.logging.max_files == 2);
  CHECK_FALSE(rt.logging.compress);
  CHECK(rt.health.enabled);
  CHECK(rt.health.disk_warn_percent == 5);
  CHECK(rt.accounting.enabled);
  CHECK(rt.accounting.file == (dir.path() / "acct/jobs.jsonl").string());
}

TEST_CASE("rmbus.bus.schedule.changes.full.every of ducc.properties turns rm.schedule.changes on, within bounds", "[config][ducc]") {
  scratch_dir dir;
  dir.write("ducc.classes", "Nodepool main { }\nClass c { policy = FAIR_SHARE ; nodepool = main }\n");
  CHECK(rc::load_ducc(dir.write("ducc.properties", "")).runtime.schedule_changes_full_every == 0);  // off by default
  CHECK(rc::load_ducc(dir.write("ducc.properties", "rmbus.bus.schedule.changes.full.every = 20\n"))
            .runtime.schedule_changes_full_every == 20);
  for (const char* bad : {"rmbus.bus.schedule.changes.full.every = -1\n", "rmbus.bus.schedule.changes.full.every = 1000001\n",
                          "rmbus.bus.schedule.changes.full.every = often\n"}) {
    try {
      (void)rc::load_ducc(dir.write("ducc.properties", bad));
      FAIL("accepted: " << bad);
    } catch (const rc::config_error& e) {
      CHECK(std::string{e.what()}.find("rmbus.bus.schedule.changes.full.every") != std::string::npos);
      CHECK(std::string{e.what()}.find("ducc.properties:1") != std::string::npos);
    }
  }
}
