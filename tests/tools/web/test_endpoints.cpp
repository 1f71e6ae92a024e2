// Where rmbus-web connects (from the RM's own configuration) and listens (--listen).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/config_error.hpp"
#include "tools/web/endpoints.hpp"

using namespace rmbus::web;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// This process's folder for configuration files, removed when the tests end.
struct scratch_folder {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rmbus-web-endpoints-" + std::to_string(::getpid()));
  scratch_folder() { std::filesystem::create_directories(dir); }
  ~scratch_folder() { std::filesystem::remove_all(dir); }
};

// A configuration file in that folder: the shipped simulation configuration plus `extra`.
std::string config_file(const std::string& name, const std::string& extra) {
  static scratch_folder scratch;
  const auto path = scratch.dir / name;
  std::ofstream(path) << read(RMBUS_SOURCE_DIR "/tools/sim/rmbus-sim.toml") << extra;
  return path.string();
}

}  // namespace

TEST_CASE("connectable: a wildcard bind becomes this host's loopback, anything else is kept", "[web][endpoints]") {
  CHECK(connectable("tcp://*:5561") == "tcp://127.0.0.1:5561");
  CHECK(connectable("tcp://0.0.0.0:5561") == "tcp://127.0.0.1:5561");
  CHECK(connectable("tcp://[::]:5561") == "tcp://[::1]:5561");
  CHECK(connectable("tcp://10.0.0.7:5561") == "tcp://10.0.0.7:5561");
  CHECK(connectable("tcp://rm-head:5562") == "tcp://rm-head:5562");
  CHECK(connectable("ipc:///run/rmbus/sub") == "ipc:///run/rmbus/sub");
}

TEST_CASE("discover_endpoints: the [bus] of a native configuration, as a client connects to it", "[web][endpoints]") {
  const auto path = config_file("bus.toml", "\n[bus]\nsub = \"tcp://*:7001\"\nadmin = \"tcp://10.1.2.3:7002\"\n");
  const auto found = discover_endpoints(path, "");
  CHECK(found.bus_sub == "tcp://127.0.0.1:7001");
  CHECK(found.admin == "tcp://10.1.2.3:7002");
  CHECK_FALSE(found.curve);
}

TEST_CASE("discover_endpoints: no [bus] gives rmbus's defaults, and [security] curve is reported", "[web][endpoints]") {
  const auto found = discover_endpoints(config_file("curve.toml", "\n[security]\ncurve = true\n"), "");
  CHECK(found.bus_sub == "tcp://127.0.0.1:5561");
  CHECK(found.admin == "tcp://127.0.0.1:5562");
  CHECK(found.curve);
}

TEST_CASE("discover_endpoints: a broken configuration is refused with its file and line", "[web][endpoints]") {
  const auto path = config_file("broken.toml", "\n[bus]\nsub = \"carrier-pigeon://x\"\n");
  try {
    discover_endpoints(path, "");
    FAIL("a broken configuration was accepted");
  } catch (const rmbus::config::config_error& e) {
    CHECK(std::string{e.what()}.find("broken.toml") != std::string::npos);
    CHECK(std::string{e.what()}.find("sub") != std::string::npos);
  }
}

TEST_CASE("discover_endpoints: a DUCC ducc.properties (which names no bus) gives rmbus's defaults", "[web][endpoints]") {
  // DUCC's files have no keys for rmbus's bus: rmbus binds its defaults, and so they are found.
  const auto found = discover_endpoints("", RMBUS_SOURCE_DIR "/tests/config/data/shipped/ducc.properties");
  CHECK(found.bus_sub == "tcp://127.0.0.1:5561");
  CHECK(found.admin == "tcp://127.0.0.1:5562");
  CHECK_FALSE(found.curve);
}

TEST_CASE("parse_listen: HOST:PORT, IPv6 in brackets, and clear errors", "[web][endpoints]") {
  const auto a = parse_listen("127.0.0.1:8080");
  CHECK(a.host == "127.0.0.1");
  CHECK(a.port == 8080);
  const auto b = parse_listen("[::1]:0");
  CHECK(b.host == "::1");
  CHECK(b.port == 0);
  CHECK_THROWS_WITH(parse_listen("8080"), Catch::Contains("expected HOST:PORT"));
  CHECK_THROWS_WITH(parse_listen("127.0.0.1:http"), Catch::Contains("0..65535"));
  CHECK_THROWS_WITH(parse_listen("127.0.0.1:70000"), Catch::Contains("0..65535"));
  CHECK_THROWS_WITH(parse_listen(":8080"), Catch::Contains("host is empty"));
}

TEST_CASE("is_loopback: only this machine's addresses", "[web][endpoints]") {
  CHECK(is_loopback("127.0.0.1"));
  CHECK(is_loopback("127.1.2.3"));
  CHECK(is_loopback("::1"));
  CHECK(is_loopback("localhost"));
  CHECK_FALSE(is_loopback("0.0.0.0"));
  CHECK_FALSE(is_loopback("10.0.0.1"));
}
