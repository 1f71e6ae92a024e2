// Every kind of configuration error names the file, the line and what is wrong, on both roads. Each case
// below states the offending line; the check requires an issue at exactly that file and line whose message
// carries the reason.

#include <fstream>
#include <random>
#include <sstream>

#include "config/loader.hpp"
#include "config/log_level.hpp"
#include "support.hpp"

namespace rc = rmbus::config;
using rc::test::scratch_dir;

namespace {

// A minimal valid native site, to which each case appends one mistake. 6 lines.
const std::string base_toml = R"([[nodepool]]
name = "main"

[[class]]
name = "normal"
policy = "FAIR_SHARE"
nodepool = "main"
)";
// The line number of the first line appended to base_toml.
constexpr int next = 8;

rc::rm_config native(const std::string& text) { return rc::parse_native(text, "site.toml"); }

// Writes a ducc.classes (and optional ducc.users) and reads them as DUCC's NodeConfiguration would.
rmbus::core::scheduler_config ducc(const scratch_dir& dir, const std::string& classes, const std::string& users = {}) {
  auto c = dir.write("ducc.classes", classes);
  auto u = users.empty() ? std::filesystem::path{} : dir.write("ducc.users", users);
  return rc::load_ducc_classes(c, u);
}

const std::string base_classes =
    "Nodepool main { }\n"                                        // 1
    "Class normal { policy = FAIR_SHARE ; nodepool = main }\n";  // 2

}  // namespace

TEST_CASE("a misspelt native key gets the nearest known key, as DUCC's keys do", "[config][errors]") {
  RMBUS_CHECK_CONFIG_ERROR(native("[scheduling]\nquantom = \"1G\"\n" + base_toml), "site.toml", 2,
                           "unknown key 'quantom' in [scheduling]; did you mean quantum?");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "wieght = 3\n"), "site.toml", next,
                           "unknown key 'wieght' in class 'normal'; did you mean weight?");
  // Nothing near: the list of known keys alone, no guess.
  RMBUS_CHECK_CONFIG_ERROR(native("[timing]\nzzzzzz = 1\n" + base_toml), "site.toml", 2, "unknown key 'zzzzzz' in [timing] (known: ");
}

TEST_CASE("an unknown key names its file and line", "[config][errors]") {
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "weihgt = 3\n"), "site.toml", next, "unknown key 'weihgt'");
  RMBUS_CHECK_CONFIG_ERROR(native("[scheduling]\nquantum = \"1G\"\nqunatum = 2\n" + base_toml), "site.toml", 3,
                           "unknown key 'qunatum' in [scheduling]");
  RMBUS_CHECK_CONFIG_ERROR(native("[buss]\npub = \"tcp://127.0.0.1:1\"\n" + base_toml), "site.toml", 1,
                           "unknown key 'buss' in the top level");
  scratch_dir dir;
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Class b { policy = FAIR_SHARE ; nodepool = main ; wieght = 2 }\n"),
                           "ducc.classes", 3, "unknown key 'wieght' in Class 'b'");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, "Nodepool main { nodfile = x.nodes }\n"), "ducc.classes", 1,
                           "unknown key 'nodfile' in Nodepool 'main'");
  // ducc.properties: an unknown ducc.rm.* key is an error; other daemons' keys are none of our business.
  dir.write("ducc.classes", base_classes);
  auto props = dir.write("ducc.properties", "ducc.ws.port = 1\nducc.rm.share.quantom = 4\n");
  RMBUS_CHECK_CONFIG_ERROR(rc::load_ducc(props), "ducc.properties", 2, "unknown key 'ducc.rm.share.quantom'");
}

TEST_CASE("a misspelt ducc.classes key or policy gets the nearest one, as ducc.properties keys do",
          "[config][errors]") {
  scratch_dir dir;
  RMBUS_CHECK_CONFIG_ERROR(
      ducc(dir, base_classes + "Class b { policy = FAIR_SHARE ; nodepool = main ; wieght = 2 }\n"),
      "ducc.classes", 3, "; did you mean weight?");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, "Nodepool main { nodfile = x.nodes }\n"), "ducc.classes", 1,
                           "; did you mean nodefile?");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Class b { policy = FAIR_SHAER ; nodepool = main }\n"),
                           "ducc.classes", 3,
                           "bad policy 'FAIR_SHAER' (expected FAIR_SHARE, FIXED_SHARE or RESERVE); "
                           "did you mean FAIR_SHARE?");
  // Nothing near: no suggestion.
  bool thrown = false;
  try {
    ducc(dir, base_classes + "Class b { policy = FAIR_SHARE ; nodepool = main ; zzzzzz = 2 }\n");
  } catch (const rc::config_error& e) {
    thrown = true;
    CHECK(std::string{e.what()}.find("unknown key 'zzzzzz'") != std::string::npos);
    CHECK(std::string{e.what()}.find("did you mean") == std::string::npos);
  }
  CHECK(thrown);
}

TEST_CASE("a class naming a missing nodepool", "[config][errors]") {
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "\n[[class]]\nname = \"b\"\npolicy = \"FAIR_SHARE\"\nnodepool = \"nope\"\n"),
                           "site.toml", next + 4, "class 'b' names nodepool 'nope', which is not defined");
}

TEST_CASE("nodepool tree errors: cycle, duplicate, missing parent, quantum on a nested pool", "[config][errors]") {
  // a (line 8) -> b (line 12) -> a
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + R"([[nodepool]]
name = "a"
parent = "b"
nodes = ["n1"]
[[nodepool]]
name = "b"
parent = "a"
nodes = ["n2"]
)"),
                           "site.toml", next + 2, "cycle in nodepool parents: a -> b -> a");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "[[nodepool]]\nname = \"main\"\nnodes = [\"x\"]\n"), "site.toml", next,
                           "duplicate nodepool 'main'");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "[[nodepool]]\nname = \"a\"\nparent = \"ghost\"\nnodes = [\"x\"]\n"),
                           "site.toml", next + 2, "names parent 'ghost', which is not defined");
  RMBUS_CHECK_CONFIG_ERROR(
      native(base_toml + "[[nodepool]]\nname = \"a\"\nparent = \"main\"\nquantum = \"2G\"\nnodes = [\"x\"]\n"),
      "site.toml", next + 3, "a quantum may be set on top-level nodepools only");
}

TEST_CASE("overlapping nodepools name the second listing and the first", "[config][errors]") {
  // n1 in pool a (line 10) and, qualified with the domain, in pool b (line 13).
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + R"([[nodepool]]
name = "a"
domain = "example.org"
nodes = ["n1"]
[[nodepool]]
name = "b"
nodes = ["n1.example.org"]
)"),
                           "site.toml", next + 6, "node 'n1.example.org' is in nodepool 'b' and already in nodepool 'a'");
  scratch_dir dir;
  dir.write("a.nodes", "h1\nh2\n");
  dir.write("b.nodes", "# b's hosts\nh3\nh2   # also in a\n");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Nodepool a { nodefile a.nodes }\nNodepool b { nodefile b.nodes }\n"),
                           "b.nodes", 3, "node 'h2' is in nodepool 'b' and already in nodepool 'a'");
}

TEST_CASE("two pools without nodes", "[config][errors]") {
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "[[nodepool]]\nname = \"second\"\n"), "site.toml", next,
                           "at most one pool may go without a nodefile");
}

TEST_CASE("a weight of zero or below", "[config][errors]") {
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "weight = 0\n"), "site.toml", next, "weight 0 is not allowed");
  scratch_dir dir;
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Class b { policy = FAIR_SHARE ; nodepool = main ; weight = -5 }\n"),
                           "ducc.classes", 3, "weight -5 is not allowed");
}

TEST_CASE("values of the wrong type", "[config][errors]") {
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "priority = \"high\"\n"), "site.toml", next, "priority must be an integer");
  RMBUS_CHECK_CONFIG_ERROR(native("[scheduling]\nquantum = \"16 gigs\"\n" + base_toml), "site.toml", 2,
                           "is not a size");
  RMBUS_CHECK_CONFIG_ERROR(native("[timing]\nfast_recovery = \"yes\"\n" + base_toml), "site.toml", 2,
                           "must be true or false");
  scratch_dir dir;
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Class b { policy = FAIR_SHARE ; nodepool = main ; priority = 1.5 }\n"),
                           "ducc.classes", 3, "'priority' must be an integer, not '1.5'");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, "Nodepool main { share-quantum = 16 GB }\n"), "ducc.classes", 1,
                           "'share-quantum' must be an integer, not '16 GB'");
  dir.write("ducc.classes", base_classes);
  auto props = dir.write("ducc.properties", "# site\n\nducc.rm.share.quantum = sixteen\nducc.rm.prediction = maybe\n");
  try {
    rc::load_ducc(props);
    FAIL("expected a config_error");
  } catch (const rc::config_error& e) {
    INFO(e.what());
    CHECK(rc::test::has_issue(e, "ducc.properties", 3, "ducc.rm.share.quantum must be an integer, not 'sixteen'"));
    CHECK(rc::test::has_issue(e, "ducc.properties", 4, "ducc.rm.prediction must be true or false"));
  }
}

TEST_CASE("a bad policy", "[config][errors]") {
  RMBUS_CHECK_CONFIG_ERROR(native(R"([[nodepool]]
name = "main"
[[class]]
name = "c"
policy = "FAIRSHARE"
nodepool = "main"
)"),
                           "site.toml", 5, "bad policy 'FAIRSHARE'");
  scratch_dir dir;
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Class b { policy = GREEDY ; nodepool = main }\n"), "ducc.classes", 3,
                           "bad policy 'GREEDY'");
}

TEST_CASE("mixed policies at one priority", "[config][errors]") {
  // normal is FAIR_SHARE at the default priority 10; rigid says FIXED_SHARE at 10 on line 12.
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + R"(
[[class]]
name = "rigid"
policy = "FIXED_SHARE"
priority = 10
nodepool = "main"
)"),
                           "site.toml", next + 4, "all classes of one priority must share one policy");
}

TEST_CASE("user limits: unknown class, malformed key", "[config][errors]") {
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "[[user]]\nname = \"bob\"\nclass_allotments = { nonesuch = \"10G\" }\n"),
                           "site.toml", next + 2, "allotment for class 'nonesuch', which is not defined");
  scratch_dir dir;
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes, "User bob {\n  max_allotment = 10\n}\n"), "ducc.users", 2,
                           "malformed key 'max_allotment'");
}

TEST_CASE("missing required keys", "[config][errors]") {
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "\n[[class]]\nname = \"nopolicy\"\nnodepool = \"main\"\n"), "site.toml",
                           next + 1, "class 'nopolicy' has no policy");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "\n[[class]]\nname = \"nopool\"\npolicy = \"RESERVE\"\n"), "site.toml",
                           next + 1, "class 'nopool' names no nodepool");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "\n[[class]]\npolicy = \"RESERVE\"\n"), "site.toml", next + 1,
                           "has no name");
  RMBUS_CHECK_CONFIG_ERROR(native("[[class]]\nname = \"c\"\npolicy = \"RESERVE\"\nnodepool = \"x\"\n"), "site.toml", 0,
                           "no nodepool is defined");
}

TEST_CASE("bad bus endpoints and addresses", "[config][errors]") {
  RMBUS_CHECK_CONFIG_ERROR(native("[bus]\npub = \"tcp://127.0.0.1\"\n" + base_toml), "site.toml", 2,
                           "bus.pub: bad endpoint 'tcp://127.0.0.1': expected HOST:PORT");
  RMBUS_CHECK_CONFIG_ERROR(native("[bus]\nsub = \"udp://127.0.0.1:5\"\n" + base_toml), "site.toml", 2,
                           "expected tcp://HOST:PORT, ipc://PATH or inproc://NAME");
  RMBUS_CHECK_CONFIG_ERROR(native("[bus]\nadmin = \"tcp://127.0.0.1:70000\"\n" + base_toml), "site.toml", 2,
                           "outside 1..65535");
  RMBUS_CHECK_CONFIG_ERROR(native("[bus]\nmetrics = \"localhost\"\n" + base_toml), "site.toml", 2,
                           "bus.metrics: bad address 'localhost'");
  // Valid forms are accepted as written.
  auto ok = native("[bus]\npub = \"ipc:///tmp/rmbus-pub\"\nsub = \"tcp://*:*\"\nadmin = \"inproc://admin\"\n" + base_toml);
  CHECK(ok.runtime.bus_pub == "ipc:///tmp/rmbus-pub");
  CHECK(ok.runtime.bus_sub == "tcp://*:*");
  // The metrics listener: HOST:PORT (port 0 = a free one) or the word "off"; nothing else.
  CHECK(native("[bus]\nmetrics = \"off\"\n" + base_toml).runtime.metrics == "off");
  CHECK(native("[bus]\nmetrics = \"127.0.0.1:0\"\n" + base_toml).runtime.metrics == "127.0.0.1:0");
  RMBUS_CHECK_CONFIG_ERROR(native("[bus]\nmetrics = \"Off\"\n" + base_toml), "site.toml", 2,
                           "bus.metrics: bad address 'Off': expected HOST:PORT (or \"off\")");
}

TEST_CASE("bus sides take a list of forwarders, each endpoint checked, none empty or twice", "[config][errors]") {
  auto ok = native("[bus]\npub = \"tcp://h1:5560, tcp://h2:5560\"\nsub = \"tcp://h1:5561,tcp://h2:5561\"\n" + base_toml);
  CHECK(ok.runtime.bus_pub == "tcp://h1:5560, tcp://h2:5560");  // kept as written; the bus splits it
  CHECK(ok.runtime.bus_sub == "tcp://h1:5561,tcp://h2:5561");
  RMBUS_CHECK_CONFIG_ERROR(native("[bus]\npub = \"tcp://h1:5560,tcp://h2\"\n" + base_toml), "site.toml", 2,
                           "bus.pub: bad endpoint 'tcp://h2': expected HOST:PORT");
  RMBUS_CHECK_CONFIG_ERROR(native("[bus]\nsub = \"tcp://h1:5561,\"\n" + base_toml), "site.toml", 2,
                           "bus.sub: empty endpoint in the list 'tcp://h1:5561,'");
  RMBUS_CHECK_CONFIG_ERROR(native("[bus]\nsub = \"tcp://h1:5561,tcp://h1:5561\"\n" + base_toml), "site.toml", 2,
                           "bus.sub: endpoint 'tcp://h1:5561' is listed twice");
  // The admin endpoint is one socket rmbus binds: no list.
  RMBUS_CHECK_CONFIG_ERROR(native("[bus]\nadmin = \"tcp://h1:5562,tcp://h2:5562\"\n" + base_toml), "site.toml", 2,
                           "bus.admin: bad endpoint");
  // The command line's --bus-pub / --bus-sub go through the same check.
  rc::runtime_settings rt;
  rt.bus_pub = "tcp://127.0.0.1:5560,tcp://127.0.0.1:6560";
  rt.bus_sub = "tcp://127.0.0.1:5561,tcp://127.0.0.1:6561";
  CHECK(rc::runtime_problems(rt).empty());
  rt.bus_sub = "tcp://127.0.0.1:5561,,tcp://127.0.0.1:6561";
  const auto problems = rc::runtime_problems(rt);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == "bus sub: empty endpoint in the list 'tcp://127.0.0.1:5561,,tcp://127.0.0.1:6561'");
}

TEST_CASE("an unknown log level: level names are validated, not guessed", "[config][errors]") {
  RMBUS_CHECK_CONFIG_ERROR(native("[log]\nlevel = \"verbose\"\n" + base_toml), "site.toml", 2,
                           "unknown log level 'verbose'");
  // spdlog::level::from_str would turn both of these into `off`; we accept the first and refuse the second.
  CHECK(rc::parse_log_level("WARN") == spdlog::level::warn);
  CHECK(rc::parse_log_level("warning") == spdlog::level::warn);
  CHECK(rc::parse_log_level("err") == spdlog::level::err);
  CHECK(rc::parse_log_level("off") == spdlog::level::off);
  CHECK_FALSE(rc::parse_log_level("loud").has_value());
  CHECK_FALSE(rc::parse_log_level("").has_value());
  auto cfg = native("[log]\nlevel = \"DEBUG\"\n" + base_toml);
  CHECK(cfg.runtime.log_level == "debug");
}

TEST_CASE("class inheritance errors: missing parent class, cycle, two defaults", "[config][errors]") {
  scratch_dir dir;
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Class b ghost { weight = 2 }\n"), "ducc.classes", 3,
                           "inherits from class 'ghost', which is not defined");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Class x y { }\nClass y x { }\n"), "ducc.classes", 3,
                           "cycle in class parents");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, "Nodepool main { }\n"
                                     "Class a { policy = FAIR_SHARE ; nodepool = main ; default = true }\n"
                                     "Class b { policy = FAIR_SHARE ; nodepool = main ; default = true }\n"),
                           "ducc.classes", 3, "are both the default FAIR_SHARE class");
}

TEST_CASE("ducc.classes syntax errors", "[config][errors]") {
  scratch_dir dir;
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, "Nodepool main { search-order = 1\n search-order = 2 }\n"), "ducc.classes", 2,
                           "duplicate key 'search-order' in Nodepool 'main' (first at line 1)");
  // No trailing comments in ducc.classes: the '#' after '}' starts a new (bad) stanza.
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, "Nodepool main { }   # the only pool\n"), "ducc.classes", 1,
                           "ducc.classes has no trailing comments");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, "Nodepool main {\n"), "ducc.classes", 1, "has no closing '}'");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, "Pool main { }\n"), "ducc.classes", 1, "expected 'Nodepool', 'Class' or 'User'");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, "Nodepool main { parent }\n"), "ducc.classes", 1, "key 'parent'");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, "Nodepool main other { }\n"), "ducc.classes", 1, "expected 'Nodepool <name> {'");
}

TEST_CASE("TOML syntax errors carry the parser's line", "[config][errors]") {
  RMBUS_CHECK_CONFIG_ERROR(native("[scheduling]\nquantum = \n"), "site.toml", 2, "TOML syntax");
}

TEST_CASE("file problems: unreadable files, import cycles, bad regular expressions", "[config][errors]") {
  scratch_dir dir;
  RMBUS_CHECK_CONFIG_ERROR(rc::load_native(dir.path() / "absent.toml"), "absent.toml", 0, "cannot read");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Nodepool a { nodefile missing.nodes }\n"), "ducc.classes", 3,
                           "cannot read nodefile");
  // a.nodes -> loop1 -> loop2 -> loop1. (Had a.nodes been imported, the import would be skipped instead: a
  // pool's own nodefile is read for that pool.)
  dir.write("a.nodes", "h0\nimport loop1.nodes\n");
  dir.write("loop1.nodes", "h1\nimport loop2.nodes\n");
  dir.write("loop2.nodes", "h2\nimport loop1.nodes\n");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Nodepool a { nodefile a.nodes }\n"), "loop2.nodes", 2,
                           "import cycle");
  dir.write("bad.nodes.regex", "# one pattern\nnode[0-9\n");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Nodepool a { nodefile bad.nodes.regex }\n"), "bad.nodes.regex", 2,
                           "bad regular expression 'node[0-9'");
  // The properties file names a class file that is not there: blame the key's line.
  auto props = dir.write("p/ducc.properties", "");
  std::filesystem::create_directories(dir.path() / "p");
  props = dir.write("p/ducc.properties", "x = 1\nducc.rm.class.definitions = nowhere.classes\n");
  RMBUS_CHECK_CONFIG_ERROR(rc::load_ducc(props), "ducc.properties", 2, "cannot read class file");
}

// Found by fuzz_ducc_config (issue 55; seed fuzz_seeds_ducc/regression-user-registry-name-too-long.properties):
// a registry path the filesystem cannot even look at escaped load_ducc as std::filesystem::filesystem_error,
// so `rmbus --check-config` printed no file and line.
TEST_CASE("ducc.rm.user.registry naming a path too long to look at is that key's error, at its line",
          "[config][errors]") {
  scratch_dir dir;
  dir.write("ducc.classes", base_classes);
  const std::string too_long(300, 'y');  // a file name is at most 255 bytes (NAME_MAX)
  auto props = dir.write("ducc.properties", "ducc.ws.port = 1\nducc.rm.user.registry = " + too_long + "\n");
  RMBUS_CHECK_CONFIG_ERROR(rc::load_ducc(props), "ducc.properties", 2,
                           "ducc.rm.user.registry: cannot look at '");
  RMBUS_CHECK_CONFIG_ERROR(rc::load_ducc(props), "ducc.properties", 2, "File name too long");
  // A registry that is simply not there is no registry, as in DUCC.
  props = dir.write("ducc.properties", "ducc.rm.user.registry = absent.users\n");
  CHECK_NOTHROW(rc::load_ducc(props));
}

// Found by fuzz_native_config (seed fuzz_seeds_native/regression-regex-number-overflow): a back-reference of
// twenty digits in a nodefile pattern overflowed the long that libstdc++'s regex compiler reads it into
// (undefined behaviour, reported by UBSan); a repeat count of a million would build a million states.
TEST_CASE("a node pattern whose back-reference or repeat count is above 1000 is refused at its line before it is compiled",
          "[config][errors]") {
  scratch_dir dir;
  const std::string twenty(20, '6');
  dir.write("a.nodes.regex", "# patterns\njd[0-9]+(\\" + twenty + ")?\n");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Nodepool a { nodefile a.nodes.regex }\n"), "a.nodes.regex", 2,
                           "the number " + twenty + " of a back-reference or repeat count is above 1000");
  dir.write("b.nodes.regex", "n{2,1000000}\n");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Nodepool a { nodefile b.nodes.regex }\n"), "b.nodes.regex", 1,
                           "the number 1000000 of a back-reference or repeat count is above 1000");
  dir.write("c.nodes.regex", "n{1001}\n");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Nodepool a { nodefile c.nodes.regex }\n"), "c.nodes.regex", 1,
                           "the number 1001 of");
  // The native road shares the rule.
  dir.write("d.nodes.regex", "x\\123456\n");
  RMBUS_CHECK_CONFIG_ERROR(native("[[nodepool]]\nname = \"a\"\nnodefile = \"" + (dir.path() / "d.nodes.regex").string() +
                                  "\"\n"),
                           "d.nodes.regex", 1, "the number 123456 of");
  // Counts up to 1000, escaped braces and braces in a class are patterns as before.
  for (const std::string pattern : {"n[0-9]{1,1000}", "m\\{99999\\}", "k[{12345]"}) {
    dir.write("ok.nodes.regex", pattern + "\n");
    CHECK_NOTHROW(ducc(dir, base_classes + "Nodepool a { nodefile ok.nodes.regex }\n"));
  }
}

TEST_CASE("every problem is reported at once, one line each", "[config][errors]") {
  try {
    native(base_toml + "weight = 0\npriority = \"x\"\nusers = \"bob\"\n[[nodepool]]\nname = \"main\"\n");
    FAIL("expected a config_error");
  } catch (const rc::config_error& e) {
    INFO(e.what());
    // weight (line 8), priority (9), users (10), duplicate pool (11): four issues, in one error.
    CHECK(e.issues().size() == 4);
    CHECK(rc::test::has_issue(e, "site.toml", 8, "weight 0"));
    CHECK(rc::test::has_issue(e, "site.toml", 9, "priority must be an integer"));
    CHECK(rc::test::has_issue(e, "site.toml", 10, "users must be an array of strings"));
    CHECK(rc::test::has_issue(e, "site.toml", 11, "duplicate nodepool 'main'"));
    CHECK(std::string(e.what()).find("site.toml:9: ") != std::string::npos);
    CHECK(e.file() == "site.toml");
  }
}

TEST_CASE("runtime_problems checks command-line overrides", "[config][errors]") {
  rc::runtime_settings rt;
  CHECK(rc::runtime_problems(rt).empty());
  rt.bus_pub = "tcp://:5560";
  rt.log_level = "chatty";
  auto problems = rc::runtime_problems(rt);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].find("the host is empty") != std::string::npos);
  CHECK(problems[1].find("unknown log level 'chatty'") != std::string::npos);
  rc::runtime_settings metrics_off;
  metrics_off.metrics = "off";  // rmbus --metrics off
  CHECK(rc::runtime_problems(metrics_off).empty());
  metrics_off.metrics = "9464";
  REQUIRE(rc::runtime_problems(metrics_off).size() == 1);
  CHECK(rc::runtime_problems(metrics_off)[0].find("metrics: bad address '9464'") != std::string::npos);
}

TEST_CASE("bounds: absurd timings and endless inheritance are refused, not overflowed", "[config][errors]") {
  // 10^15 ms x ratio would overflow nothing today, but a period of 31 000 years is a mistake: bounded to a day.
  RMBUS_CHECK_CONFIG_ERROR(native("[timing]\norchestrator_publish_ms = 1000000000000000\n" + base_toml), "site.toml",
                           2, "out of range");
  scratch_dir dir;
  dir.write("ducc.classes", base_classes);
  auto props = dir.write("ducc.properties", "ducc.rm.state.publish.ratio = 5000000\n");
  RMBUS_CHECK_CONFIG_ERROR(rc::load_ducc(props), "ducc.properties", 1, "out of range (1..1000)");
  // A chain c0 <- c1 <- ... <- c99, written child first so resolving c99 must walk all the way down: deeper
  // than the 64 levels allowed. (Written parent first, each class finds its parent already resolved.)
  std::string chain = base_classes;
  for (int i = 99; i >= 1; --i) {
    chain += "Class c" + std::to_string(i) + " c" + std::to_string(i - 1) + " { }\n";
  }
  chain += "Class c0 { policy = FAIR_SHARE ; nodepool = main }\n";
  try {
    ducc(dir, chain);
    FAIL("expected a config_error");
  } catch (const rc::config_error& e) {
    CHECK(std::string(e.what()).find("inheritance deeper than 64 levels") != std::string::npos);
  }
}

TEST_CASE("a user registry holds User stanzas only", "[config][errors]") {
  scratch_dir dir;
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes, "User a { max-allotment = 1 }\nClass sneaky { policy = RESERVE }\n"),
                           "ducc.users", 2, "may hold User stanzas only, not Class 'sneaky'");
}

TEST_CASE("malformed input never crashes: truncations and byte flips give a config_error or a result",
          "[config][errors]") {
  // Deterministic: a fixed seed and fixed inputs (the example site in both syntaxes).
  auto site = rc::test::data_dir() / "site";
  auto slurp = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  const std::string toml = slurp(site / "site.toml");
  const std::string classes = slurp(site / "ducc.classes");
  std::mt19937 rng(12345);
  const std::string noise = "{}=;,#\n\"'[]\\ x.0-";
  auto mutate = [&](std::string text) {
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips && !text.empty(); ++i) text[rng() % text.size()] = noise[rng() % noise.size()];
    return text;
  };
  scratch_dir dir;
  for (const auto* name : {"bigmem.nodes", "bigmem-rack2.nodes", "drivers.nodes.regex"}) {
    dir.write(name, slurp(site / name));
  }
  int results = 0;
  int errors = 0;
  auto attempt = [&](auto&& load) {
    try {
      load();
      ++results;
    } catch (const rc::config_error& e) {
      ++errors;
      CHECK_FALSE(e.issues().empty());
    }
    // Any other exception escapes and fails the test.
  };
  for (std::size_t cut = 0; cut < toml.size(); cut += 7) {
    attempt([&] { rc::parse_native(toml.substr(0, cut), "cut.toml", dir.path()); });
  }
  for (std::size_t cut = 0; cut < classes.size(); cut += 7) {
    attempt([&] { ducc(dir, classes.substr(0, cut)); });
  }
  for (int i = 0; i < 300; ++i) {
    attempt([&] { rc::parse_native(mutate(toml), "flip.toml", dir.path()); });
    attempt([&] { ducc(dir, mutate(classes)); });
  }
  // Both outcomes occur: the loaders neither accept everything nor refuse everything.
  CHECK(results > 0);
  CHECK(errors > 0);
}

TEST_CASE("a misspelt ducc.rm.* key is refused and the error names the known key it is closest to",
          "[config][errors]") {
  scratch_dir dir;
  dir.write("ducc.classes", base_classes);
  auto refused = [&](const std::string& line) { return rc::load_ducc(dir.write("ducc.properties", line + "\n")); };
  // 1 edit (o -> u) from ducc.rm.share.quantum.
  RMBUS_CHECK_CONFIG_ERROR(refused("ducc.rm.share.quantom = 4"), "ducc.properties", 1,
                           "unknown key 'ducc.rm.share.quantom' (not a ducc.rm.* key any DUCC release ships or its "
                           "RM reads); did you mean ducc.rm.share.quantum?");
  // The name DUCC's own documentation gives; its RM reads ducc.rm.fragmentation.threshold (2 edits away).
  RMBUS_CHECK_CONFIG_ERROR(refused("ducc.rm.defragmentation.threshold = 4"), "ducc.properties", 1,
                           "did you mean ducc.rm.fragmentation.threshold?");
  RMBUS_CHECK_CONFIG_ERROR(refused("ducc.rm.via.or.admin.endpoint.typ = queue"), "ducc.properties", 1,
                           "did you mean ducc.rm.via.or.admin.endpoint.type?");
  // Nothing within 3 edits: refused, and no guess.
  try {
    refused("ducc.rm.colour = blue");
    FAIL("expected a config_error");
  } catch (const rc::config_error& e) {
    CHECK(rc::test::has_issue(e, "ducc.properties", 1, "unknown key 'ducc.rm.colour'"));
    CHECK(std::string(e.what()).find("did you mean") == std::string::npos);
  }
}

TEST_CASE("an initialization cap below 0 is refused on both roads",
          "[config][errors]") {
  RMBUS_CHECK_CONFIG_ERROR(native("[scheduling]\ninitialization_cap = -1\n" + base_toml), "site.toml", 2,
                           "scheduling.initialization_cap = -1 is out of range (0..");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "initialization_cap = -1\n"), "site.toml", next,
                           "class 'normal': initialization cap must be 0 (no initialization cap) or greater");
  scratch_dir dir;
  RMBUS_CHECK_CONFIG_ERROR(
      ducc(dir, base_classes + "Class b { policy = FAIR_SHARE ; nodepool = main ; initialization-cap = -1 }\n"),
      "ducc.classes", 3, "class 'b': initialization cap must be 0 (no initialization cap) or greater");
  dir.write("ducc.classes", base_classes);
  auto props = dir.write("ducc.properties", "ducc.rm.initialization.cap = -1\n");
  RMBUS_CHECK_CONFIG_ERROR(rc::load_ducc(props), "ducc.properties", 1,
                           "ducc.rm.initialization.cap = -1 is out of range (0..");
}

TEST_CASE("ignored ducc.rm.* keys with a typed value are still type-checked", "[config][errors]") {
  scratch_dir dir;
  dir.write("ducc.classes", base_classes);
  auto props = dir.write("ducc.properties", "ducc.rm.override.dram = lots\nducc.rm.use_global_allotment = maybe\n");
  RMBUS_CHECK_CONFIG_ERROR(rc::load_ducc(props), "ducc.properties", 1, "ducc.rm.override.dram must be an integer");
  RMBUS_CHECK_CONFIG_ERROR(rc::load_ducc(props), "ducc.properties", 2,
                           "ducc.rm.use_global_allotment must be true or false");
}

TEST_CASE("reclaim grace and probe_first: bounds, types and policy are checked on both roads", "[config][errors]") {
  // one day = 86,400,000 ms is the bound; a negative grace means nothing
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "reclaim_grace_ms = -1\n"), "site.toml", next,
                           "class 'normal': reclaim grace -1 ms is out of range 0..86400000");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "reclaim_grace_ms = 86400001\n"), "site.toml", next,
                           "reclaim grace 86400001 ms is out of range");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "reclaim_grace_ms = \"30s\"\n"), "site.toml", next,
                           "reclaim_grace_ms must be an integer");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "probe_first = 1\n"), "site.toml", next, "must be true or false");
  // non-preemptable classes are never preempted: a grace there is a mistake, not a no-op
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "\n[[class]]\nname = \"fixed\"\npolicy = \"FIXED_SHARE\"\n"
                                              "nodepool = \"main\"\npriority = 5\nreclaim_grace_ms = 1000\n"),
                           "site.toml", next + 6, "reclaim grace applies to FAIR_SHARE classes only");
  scratch_dir dir;
  RMBUS_CHECK_CONFIG_ERROR(
      ducc(dir, base_classes + "Class b { policy = FAIR_SHARE ; nodepool = main ; reclaim-grace-ms = 90000000 }\n"),
      "ducc.classes", 3, "class 'b': reclaim grace 90000000 ms is out of range");
  RMBUS_CHECK_CONFIG_ERROR(
      ducc(dir, base_classes + "Class b { policy = FAIR_SHARE ; nodepool = main ; probe-first = perhaps }\n"),
      "ducc.classes", 3, "probe-first");
}

TEST_CASE("reclaim grace and probe_first are read, inherited, and default to off", "[config][errors]") {
  auto plain = native(base_toml);
  REQUIRE(plain.scheduling.classes.size() == 1);
  CHECK(plain.scheduling.classes[0].reclaim_grace_ms == 0);
  CHECK_FALSE(plain.scheduling.classes[0].probe_first);
  auto set = native(base_toml + "reclaim_grace_ms = 30000\nprobe_first = true\n"
                                "\n[[class]]\nname = \"child\"\nparent = \"normal\"\nweight = 50\n");
  for (const auto& c : set.scheduling.classes) {
    INFO(c.name);
    CHECK(c.reclaim_grace_ms == 30000);  // the child inherits both
    CHECK(c.probe_first);
  }
  scratch_dir dir;
  auto d = ducc(dir, base_classes + "Class b { policy = FAIR_SHARE ; nodepool = main ; reclaim-grace-ms = 30000 ; "
                                    "probe-first = true ; priority = 10 }\n");
  bool seen = false;
  for (const auto& c : d.classes)
    if (c.name == "b") {
      seen = true;
      CHECK(c.reclaim_grace_ms == 30000);
      CHECK(c.probe_first);
    }
  CHECK(seen);
}

TEST_CASE("log rotation, health and accounting keys: bounds and types name the key, on both roads", "[config][errors]") {
  // Native: [log] max_bytes 1024..2^40, max_files 1..1000; [health] disk_warn_percent 0..100.
  RMBUS_CHECK_CONFIG_ERROR(native("[log]\nmax_bytes = 100\n" + base_toml), "site.toml", 2,
                           "log.max_bytes = 100 is out of range (1024..1099511627776)");
  RMBUS_CHECK_CONFIG_ERROR(native("[log]\nmax_files = 0\n" + base_toml), "site.toml", 2,
                           "log.max_files = 0 is out of range (1..1000)");
  RMBUS_CHECK_CONFIG_ERROR(native("[log]\ncompress = \"yes\"\n" + base_toml), "site.toml", 2,
                           "log.compress must be true or false");
  RMBUS_CHECK_CONFIG_ERROR(native("[log]\nfile = 3\n" + base_toml), "site.toml", 2, "log.file must be a string");
  RMBUS_CHECK_CONFIG_ERROR(native("[health]\ndisk_warn_percent = 101\n" + base_toml), "site.toml", 2,
                           "health.disk_warn_percent = 101 is out of range (0..100)");
  RMBUS_CHECK_CONFIG_ERROR(native("[health]\nenable = true\n" + base_toml), "site.toml", 2,
                           "unknown key 'enable' in [health]; did you mean enabled? (known: enabled, disk_warn_percent)");
  RMBUS_CHECK_CONFIG_ERROR(native("[accounting]\nfiles = \"x\"\n" + base_toml), "site.toml", 2,
                           "unknown key 'files' in [accounting]");
  // DUCC road: the rmbus.* keys, with the same bounds; an unknown rmbus.* key is an error, as ducc.rm.* ones.
  scratch_dir dir;
  dir.write("ducc.classes", base_classes);
  RMBUS_CHECK_CONFIG_ERROR(rc::load_ducc(dir.write("ducc.properties", "ducc.ws.port = 1\nrmbus.log.max.files = 5000\n")),
                           "ducc.properties", 2, "rmbus.log.max.files = 5000 is out of range (1..1000)");
  RMBUS_CHECK_CONFIG_ERROR(rc::load_ducc(dir.write("ducc.properties", "rmbus.health.disk.warn.percent = -1\n")),
                           "ducc.properties", 1, "out of range (0..100)");
  RMBUS_CHECK_CONFIG_ERROR(rc::load_ducc(dir.write("ducc.properties", "rmbus.log.compress = maybe\n")),
                           "ducc.properties", 1, "rmbus.log.compress must be true or false, not 'maybe'");
  RMBUS_CHECK_CONFIG_ERROR(rc::load_ducc(dir.write("ducc.properties", "rmbus.accounting.fle = a.jsonl\n")),
                           "ducc.properties", 1, "unknown key 'rmbus.accounting.fle' (known rmbus.* keys:");
  // runtime_problems re-checks what may have been set elsewhere.
  rc::runtime_settings rt;
  rt.logging.max_files = 0;
  rt.health.disk_warn_percent = 200;
  auto problems = rc::runtime_problems(rt);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0] == "log max_files must be 1..1000");
  CHECK(problems[1] == "health disk_warn_percent must be 0..100");
}

TEST_CASE("share groups: unknown parent, cycle, a user in two groups, weight, depth", "[config][errors]") {
  const std::string g = "[[group]]\n";  // each case's first line is `next`
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + g + "name = \"x\"\nparent = \"nonesuch\"\n"), "site.toml", next + 2,
                           "group 'x' names parent 'nonesuch', which is neither a class nor a group");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + g + "name = \"x\"\n"), "site.toml", next, "group 'x' names no parent");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + g + "parent = \"normal\"\n"), "site.toml", next, "has no name");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + g + "name = \"x\"\nparent = \"normal\"\nshare = 3\n"), "site.toml",
                           next + 3, "unknown key 'share' in group 'x'");
  // a -> b -> a: reported at a's parent line.
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + g + "name = \"a\"\nparent = \"b\"\n" + g + "name = \"b\"\nparent = \"a\"\n"),
                           "site.toml", next + 2, "cycle in group parents: a -> b -> a");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + g + "name = \"a\"\nparent = \"a\"\n"), "site.toml", next + 2,
                           "cycle in group parents: a -> a");
  // ann under p and again under q, which hangs from p: both in class normal's tree.
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + g + "name = \"p\"\nparent = \"normal\"\nusers = [\"ann\"]\n" + g +
                                  "name = \"q\"\nparent = \"p\"\nusers = [\"ann\"]\n"),
                           "site.toml", next + 7, "user 'ann' is in group 'q' and already in group 'p'");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + g + "name = \"x\"\nparent = \"normal\"\nweight = 0\n"), "site.toml",
                           next + 3, "group 'x': weight 0 is not allowed");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + g + "name = \"normal\"\nparent = \"normal\"\n"), "site.toml", next,
                           "group 'normal' has the name of a class");
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + g + "name = \"x\"\nparent = \"normal\"\n" + g + "name = \"x\"\nparent = \"normal\"\n"),
                           "site.toml", next + 3, "duplicate group 'x'");
  // Groups hang from FAIR_SHARE classes only.
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "[[class]]\nname = \"rigid\"\npolicy = \"FIXED_SHARE\"\nnodepool = \"main\"\n" +
                                  g + "name = \"x\"\nparent = \"rigid\"\n"),
                           "site.toml", next + 6, "class 'rigid' is FIXED_SHARE; share groups apply to FAIR_SHARE classes only");
  // A class that lists its users admits no other user through a group.
  RMBUS_CHECK_CONFIG_ERROR(native(base_toml + "users = [\"ann\"]\n" + g + "name = \"x\"\nparent = \"normal\"\nusers = [\"bob\"]\n"),
                           "site.toml", next + 4, "group 'x' lists user 'bob', who may not use class 'normal'");
}

TEST_CASE("share groups: at most 16 levels below a class, and a user in one group per class", "[config][errors]") {
  // g1 under the class, g2 under g1, ... each table three lines, its parent on the third.
  const auto chain = [](int levels) {
    std::string text = base_toml;
    for (int k = 1; k <= levels; ++k)
      text += "[[group]]\nname = \"g" + std::to_string(k) + "\"\nparent = \"" + (k == 1 ? std::string("normal") : "g" + std::to_string(k - 1)) + "\"\n";
    return text;
  };
  CHECK(native(chain(16)).scheduling.groups.size() == 16);
  // g17's parent line: next + 3 * 16 + 2
  RMBUS_CHECK_CONFIG_ERROR(native(chain(17)), "site.toml", next + 3 * 16 + 2,
                           "group 'g17' is 17 levels below class 'normal'; at most 16 are allowed");
  // The same user in groups of two different classes is fine.
  auto ok = native(base_toml + "[[class]]\nname = \"high\"\npolicy = \"FAIR_SHARE\"\nnodepool = \"main\"\n" +
                   "[[group]]\nname = \"p\"\nparent = \"normal\"\nusers = [\"ann\"]\n" +
                   "[[group]]\nname = \"q\"\nparent = \"high\"\nusers = [\"ann\"]\n");
  CHECK(ok.scheduling.groups.size() == 2);
}

// Found by fuzz_native_config and fuzz_ducc_config (docs/reliability.md, "Hostile input"): bytes that are not
// UTF-8 in a DUCC file or nodefile used to become class or node names, which then made `rmbus --check-config`
// print TOML its own reader refused (and no heartbeat could ever carry such a node name).
TEST_CASE("a line that is not valid UTF-8 in a DUCC file or a nodefile names its file and line", "[config][errors]") {
  scratch_dir dir;
  const std::string bad = "debu\xff\xfeg";
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Class " + bad + " { policy = FIXED_SHARE ; nodepool = main }\n"),
                           "ducc.classes", 3, "not valid UTF-8");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes, "User alice { max-allotment = 1 }\nUser " + bad + " { }\n"),
                           "ducc.users", 2, "not valid UTF-8");
  // A truncated sequence (0xdb wants one continuation byte) in a host name of a nodefile, on both roads.
  dir.write("main.nodes", "n1\nbM\xdb[m02.example.org\n");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, "Nodepool main { nodefile = main.nodes }\n"
                                     "Class normal { policy = FAIR_SHARE ; nodepool = main }\n"),
                           "main.nodes", 2, "not valid UTF-8");
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[[nodepool]]\nname = \"main\"\nnodefile = \"main.nodes\"\n", "site.toml",
                                            dir.path()),
                           "main.nodes", 2, "not valid UTF-8");
  dir.write("ducc.classes", base_classes);
  auto props = dir.write("ducc.properties", "ducc.ws.port = 1\nducc.jd.host.user = " + bad + "\n");
  RMBUS_CHECK_CONFIG_ERROR(rc::load_ducc(props), "ducc.properties", 2, "not valid UTF-8");
  // Overlong forms and surrogates are not UTF-8 either; valid multi-byte names are fine.
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Class a\xc0\xaf { policy = FIXED_SHARE ; nodepool = main }\n"),
                           "ducc.classes", 3, "not valid UTF-8");
  RMBUS_CHECK_CONFIG_ERROR(ducc(dir, base_classes + "Class a\xed\xa0\x80 { policy = FIXED_SHARE ; nodepool = main }\n"),
                           "ducc.classes", 3, "not valid UTF-8");
  CHECK_NOTHROW(ducc(dir, base_classes + "Class d\xc3\xa9j\xc3\xa0-vu { policy = FIXED_SHARE ; nodepool = main }\n"));
}

TEST_CASE("forget_down_ms and max_heartbeats_queued: read, defaulted and bounded, naming the key", "[config][errors]") {
  const auto defaults = native(base_toml);
  CHECK(defaults.runtime.limits.forget_down_ms == 3'600'000);  // one hour
  CHECK(defaults.runtime.limits.max_heartbeats_queued == 50'000);
  const auto set = native("[limits]\nforget_down_ms = 0\nmax_heartbeats_queued = 7\n" + base_toml);
  CHECK(set.runtime.limits.forget_down_ms == 0);  // never forgotten
  CHECK(set.runtime.limits.max_heartbeats_queued == 7);
  // 30 days = 30 x 86,400,000 ms = 2,592,000,000 ms at most.
  CHECK(native("[limits]\nforget_down_ms = 2592000000\n" + base_toml).runtime.limits.forget_down_ms == 2'592'000'000);
  RMBUS_CHECK_CONFIG_ERROR(native("[limits]\nforget_down_ms = 2592000001\n" + base_toml), "site.toml", 2,
                           "limits.forget_down_ms = 2592000001 is out of range (0..2592000000)");
  RMBUS_CHECK_CONFIG_ERROR(native("[limits]\nforget_down_ms = -1\n" + base_toml), "site.toml", 2,
                           "limits.forget_down_ms = -1 is out of range (0..2592000000)");
  RMBUS_CHECK_CONFIG_ERROR(native("[limits]\nmax_heartbeats_queued = 0\n" + base_toml), "site.toml", 2,
                           "limits.max_heartbeats_queued = 0 is out of range");
}

TEST_CASE("preemption_policy: ducc unless given, read on both roads, a bad value named", "[config][errors]") {
  CHECK(native(base_toml).scheduling.settings.preemption_policy == rmbus::core::preemption_policy::ducc);
  const auto sparing = native("[scheduling]\npreemption_policy = \"sparing\"\n" + base_toml);
  CHECK(sparing.scheduling.settings.preemption_policy == rmbus::core::preemption_policy::sparing);
  RMBUS_CHECK_CONFIG_ERROR(native("[scheduling]\npreemption_policy = \"gentle\"\n" + base_toml), "site.toml",
                           2,
                           "scheduling.preemption_policy must be \"ducc\" or \"sparing\", not \"gentle\"");
  RMBUS_CHECK_CONFIG_ERROR(native("[scheduling]\npreemption_policy = 1\n" + base_toml), "site.toml", 2,
                           "preemption_policy");
  scratch_dir dir;
  dir.write("ducc.classes", base_classes);
  auto plain = rc::load_ducc(dir.write("ducc.properties", "ducc.rm.share.quantum = 1\n"));
  CHECK(plain.scheduling.settings.preemption_policy == rmbus::core::preemption_policy::ducc);
  auto set = rc::load_ducc(dir.write("ducc.properties", "rmbus.rm.preemption.policy = sparing\n"));
  CHECK(set.scheduling.settings.preemption_policy == rmbus::core::preemption_policy::sparing);
  RMBUS_CHECK_CONFIG_ERROR(rc::load_ducc(dir.write("ducc.properties", "rmbus.rm.preemption.policy = kind\n")),
                           "ducc.properties", 1,
                           "rmbus.rm.preemption.policy must be ducc or sparing, not 'kind'");
}
