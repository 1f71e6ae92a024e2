// [ha] in the native file and DUCC's ducc.head.reliable.list: defaults, every key read, bad values refused
// with file, line and what is wrong, and the rank DUCC's spelling gives this host.

#include <unistd.h>

#include "config/loader.hpp"
#include "config/render.hpp"
#include "support.hpp"

namespace rc = rmbus::config;
using rc::test::scratch_dir;

namespace {

const std::string one_pool = "[[nodepool]]\nname = \"main\"\n";

std::string host_name() {
  char name[256] = {};
  REQUIRE(::gethostname(name, sizeof name - 1) == 0);
  return name;
}

// A minimal DUCC site: properties with `extra` lines, one class file.
rc::rm_config load_ducc_site(const scratch_dir& dir, const std::string& extra) {
  dir.write("ducc.classes", "Nodepool main { }\nClass normal { policy = FAIR_SHARE; nodepool = main; default = true }\n");
  return rc::load_ducc(dir.write("ducc.properties", extra));
}

}  // namespace

TEST_CASE("[ha] is off by default, with a 200 ms beacon and a 1 s takeover", "[config][ha]") {
  const auto cfg = rc::parse_native(one_pool, "site.toml");
  CHECK_FALSE(cfg.runtime.ha.enabled);
  CHECK(cfg.runtime.ha.beacon_ms == 200);
  CHECK(cfg.runtime.ha.takeover_ms == 1000);
  CHECK(cfg.runtime.ha.rank == 0);
  // Off: the rendered configuration says nothing of it, as before HA existed.
  CHECK(rc::render(cfg).find("[ha]") == std::string::npos);
}

TEST_CASE("[ha] reads every key and renders them back", "[config][ha]") {
  const auto cfg = rc::parse_native("[ha]\nenabled = true\nbeacon_ms = 50\ntakeover_ms = 400\nrank = 3\n"
                                    "advertise_admin = \"tcp://10.0.0.5:5562\"\n" + one_pool,
                                    "site.toml");
  CHECK(cfg.runtime.ha.enabled);
  CHECK(cfg.runtime.ha.beacon_ms == 50);
  CHECK(cfg.runtime.ha.takeover_ms == 400);
  CHECK(cfg.runtime.ha.rank == 3);
  CHECK(cfg.runtime.ha.advertise_admin == "tcp://10.0.0.5:5562");
  const auto again = rc::parse_native(rc::render(cfg), "rendered.toml");
  CHECK(again.runtime.ha == cfg.runtime.ha);
}

TEST_CASE("[ha] refuses bad values with file, line and what is wrong", "[config][ha]") {
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[ha]\nbeacon_ms = 5\n" + one_pool, "site.toml"), "site.toml", 2,
                           "out of range");
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[ha]\nrank = -1\n" + one_pool, "site.toml"), "site.toml", 2,
                           "out of range");
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[ha]\nrank = 1001\n" + one_pool, "site.toml"), "site.toml", 2,
                           "out of range");
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[ha]\nenabled = 1\n" + one_pool, "site.toml"), "site.toml", 2,
                           "enabled");
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[ha]\nbeacon_ms = 300\ntakeover_ms = 500\n" + one_pool, "site.toml"),
                           "site.toml", 1, "at least twice ha.beacon_ms");
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[ha]\nadvertise_admin = \"nowhere\"\n" + one_pool, "site.toml"),
                           "site.toml", 2, "ha.advertise_admin");
  RMBUS_CHECK_CONFIG_ERROR(rc::parse_native("[ha]\nranks = 1\n" + one_pool, "site.toml"), "site.toml", 2,
                           "unknown key 'ranks'");
}

TEST_CASE("runtime_problems names HA timings broken after loading (command-line overrides)", "[config][ha]") {
  rc::runtime_settings rt;
  CHECK(rc::runtime_problems(rt).empty());
  rt.ha.takeover_ms = rt.ha.beacon_ms;
  const auto problems = rc::runtime_problems(rt);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("takeover_ms") != std::string::npos);
}

TEST_CASE("ducc.head.reliable.list turns HA on, and this host's position in it is its rank", "[config][ha][ducc]") {
  scratch_dir dir;
  const auto host = host_name();
  SECTION("no list: HA off, as in DUCC without reliable heads") {
    CHECK_FALSE(load_ducc_site(dir, "ducc.rm.share.quantum = 1\n").runtime.ha.enabled);
  }
  SECTION("an empty list is DUCC's default: HA off") {
    CHECK_FALSE(load_ducc_site(dir, "ducc.head.reliable.list =\n").runtime.ha.enabled);
  }
  SECTION("this host second in the list: rank 1") {
    const auto cfg = load_ducc_site(dir, "ducc.head.reliable.list = otherhead.example " + host + "\n");
    CHECK(cfg.runtime.ha.enabled);
    CHECK(cfg.runtime.ha.rank == 1);
  }
  SECTION("a short name in the list matches the full host name") {
    const auto short_name = host.substr(0, host.find('.'));
    const auto cfg = load_ducc_site(dir, "ducc.head.reliable.list = " + short_name + ".some.domain, b\n");
    CHECK(cfg.runtime.ha.rank == 0);
  }
  SECTION("rmbus.ha.rank overrides the position, and the timings have their own keys") {
    const auto cfg = load_ducc_site(dir, "ducc.head.reliable.list = a b\nrmbus.ha.rank = 7\n"
                                         "rmbus.ha.beacon.ms = 100\nrmbus.ha.takeover.ms = 600\n");
    CHECK(cfg.runtime.ha.enabled);
    CHECK(cfg.runtime.ha.rank == 7);
    CHECK(cfg.runtime.ha.beacon_ms == 100);
    CHECK(cfg.runtime.ha.takeover_ms == 600);
  }
  SECTION("this host not listed and no rank: refused, naming the host and the list") {
    RMBUS_CHECK_CONFIG_ERROR(load_ducc_site(dir, "ducc.head.reliable.list = nohost-a nohost-b\n"), "ducc.properties",
                             1, "is not in the list (nohost-a, nohost-b)");
  }
  SECTION("a rank without a list is refused: it would do nothing") {
    RMBUS_CHECK_CONFIG_ERROR(load_ducc_site(dir, "rmbus.ha.rank = 1\n"), "ducc.properties", 0,
                             "ducc.head.reliable.list is not");
  }
  SECTION("a takeover shorter than two beacons is refused") {
    RMBUS_CHECK_CONFIG_ERROR(load_ducc_site(dir, "ducc.head.reliable.list = a\nrmbus.ha.rank = 0\n"
                                                 "rmbus.ha.beacon.ms = 400\nrmbus.ha.takeover.ms = 500\n"),
                             "ducc.properties", 0, "at least twice");
  }
}
