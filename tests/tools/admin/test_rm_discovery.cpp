// Finding the RM from the operator's tools (tools/common/rm_discovery, used by rmbus-admin and rmbus-top):
// the endpoints and CURVE server keys the RM of a configuration file binds, native or DUCC; an endpoint
// checked before connecting, with `expected tcp://HOST:PORT` in the words; the environment variable only when
// set.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "config/config_error.hpp"
#include "tools/common/rm_discovery.hpp"

namespace fs = std::filesystem;
using rmbus::tools::endpoint_problem;
using rmbus::tools::endpoints_of_configuration;
using rmbus::tools::environment;
using rmbus::tools::with_tcp_scheme;

namespace {

// A folder of its own under the system's temporary folder, removed at the end.
struct scratch_dir {
  fs::path path;
  scratch_dir() {
    char tmpl[] = "/tmp/rmbus-discovery-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = path / name;
    fs::create_directories(p.parent_path());
    std::ofstream{p} << text;
    return p.string();
  }
};

const std::string one_pool = "[[nodepool]]\nname = \"main\"\n";

}  // namespace

TEST_CASE(
    "a native configuration gives the endpoints its RM binds, and with CURVE the public keys to trust") {
  scratch_dir dir;
  const auto plain =
      dir.write("rm.toml", one_pool +
                               "[bus]\npub = \"tcp://10.0.0.1:6000\"\nsub = \"tcp://10.0.0.1:6001\"\n"
                               "admin = \"tcp://10.0.0.1:6002\"\n");
  const auto e = endpoints_of_configuration(plain, "");
  CHECK(e.admin == "tcp://10.0.0.1:6002");
  CHECK(e.bus_pub == "tcp://10.0.0.1:6000");
  CHECK(e.bus_sub == "tcp://10.0.0.1:6001");
  CHECK_FALSE(e.curve);
  CHECK(e.admin_server_key.empty());
  CHECK(e.source == plain + " (native)");

  // CURVE: the RM's key pair is rmbus.key; its public half rmbus.pub beside it is what a client names (it
  // may be readable where the pair is not). A separate forwarder key is the bus's server key.
  const auto secure = dir.write("secure.toml", one_pool +
                                                   "[security]\ncurve = true\nkey = \"curve/rmbus.key\"\n"
                                                   "server_key = \"curve/forwarder.key\"\n");
  dir.write("curve/rmbus.key", "pair\n");
  dir.write("curve/rmbus.pub", "public\n");
  const auto s = endpoints_of_configuration(secure, "");
  CHECK(s.curve);
  CHECK(s.admin_server_key == (dir.path / "curve/rmbus.pub").string());
  // No forwarder.pub beside forwarder.key: the file named is used as it is.
  CHECK(s.bus_server_key == (dir.path / "curve/forwarder.key").string());
  CHECK(s.admin == "tcp://127.0.0.1:5562");  // the defaults, as the RM would bind them
}

TEST_CASE("a DUCC configuration gives the default endpoints (DUCC has no keys for them), named as DUCC's") {
  const std::string props = std::string{RMBUS_CONFIG_TEST_DATA} + "/site/ducc.properties";
  const auto e = endpoints_of_configuration("", props);
  CHECK(e.admin == "tcp://127.0.0.1:5562");
  CHECK(e.bus_sub == "tcp://127.0.0.1:5561");
  CHECK(e.source == props + " (DUCC)");
}

TEST_CASE("a broken configuration is an error naming the file and line, as rmbus would print it") {
  scratch_dir dir;
  const auto broken = dir.write("broken.toml", one_pool + "[bus]\nadmin = \"localhost:1\"\n");
  try {
    endpoints_of_configuration(broken, "");
    FAIL("no error");
  } catch (const rmbus::config::config_error& e) {
    CHECK(std::string{e.what()}.find(broken + ":4") != std::string::npos);
  }
  CHECK_THROWS(endpoints_of_configuration((dir.path / "missing.toml").string(), ""));
}

TEST_CASE("an endpoint is checked before connecting: the option, the value and what is expected") {
  CHECK_FALSE(endpoint_problem("--admin", "tcp://127.0.0.1:5562"));
  CHECK_FALSE(endpoint_problem("--bus-sub", "tcp://rm1:5561,tcp://rm2:5561"));
  const auto no_scheme = endpoint_problem("--admin", "127.0.0.1:5562");
  REQUIRE(no_scheme);
  CHECK(no_scheme->rfind("--admin: ", 0) == 0);
  CHECK(no_scheme->find("127.0.0.1:5562") != std::string::npos);
  CHECK(no_scheme->find("expected tcp://HOST:PORT") != std::string::npos);
  const auto wildcard = endpoint_problem("--admin", "tcp://*:5562");
  REQUIRE(wildcard);
  CHECK(*wildcard ==
        "--admin: 'tcp://*:5562' has a wildcard, which only a server binds: expected tcp://HOST:PORT");
  // One bad endpoint of a list is named.
  const auto list = endpoint_problem("--bus-sub", "tcp://rm1:5561,rm2:5561");
  REQUIRE(list);
  CHECK(list->find("rm2:5561") != std::string::npos);
}

TEST_CASE("HOST:PORT means tcp://HOST:PORT and anything else is left for the checks") {
  CHECK(with_tcp_scheme("127.0.0.1:5562") == "tcp://127.0.0.1:5562");
  CHECK(with_tcp_scheme("rm1.example.org:5562") == "tcp://rm1.example.org:5562");
  CHECK(with_tcp_scheme("tcp://rm1:5562") == "tcp://rm1:5562");
  CHECK(with_tcp_scheme("ipc:///run/rmbus.sock") == "ipc:///run/rmbus.sock");
  CHECK(with_tcp_scheme("localhost") == "localhost");
  CHECK(with_tcp_scheme("localhost:port") == "localhost:port");
  CHECK(endpoint_problem("--admin", with_tcp_scheme("localhost")));
}

TEST_CASE("the environment variable counts only when set and not empty") {
  ::unsetenv("RMBUS_DISCOVERY_TEST");
  CHECK_FALSE(environment("RMBUS_DISCOVERY_TEST"));
  ::setenv("RMBUS_DISCOVERY_TEST", "", 1);
  CHECK_FALSE(environment("RMBUS_DISCOVERY_TEST"));
  ::setenv("RMBUS_DISCOVERY_TEST", "tcp://rm:5562", 1);
  CHECK(environment("RMBUS_DISCOVERY_TEST") == std::optional<std::string>{"tcp://rm:5562"});
  ::unsetenv("RMBUS_DISCOVERY_TEST");
}
