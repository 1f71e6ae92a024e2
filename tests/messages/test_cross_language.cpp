// Other languages must be able to read and write our bodies from docs/protocol.md alone. This test runs
// Debian's /usr/bin/python3 with python3-msgpack (not the PATH python3, which may be a pyenv interpreter
// without it): Python decodes a work map we encoded, checks fields by name, re-encodes the dict it got and
// compares bytes with ours; and it encodes a heartbeat and an admin request that we then decode.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <unistd.h>

#include "messages/topics.hpp"
#include "samples.hpp"

using namespace rmbus::messages;
namespace fs = std::filesystem;

namespace {

constexpr const char* python = "/usr/bin/python3";

const char* script = R"PY(
import sys, msgpack
ours = open(sys.argv[1], "rb").read()
m = msgpack.unpackb(ours, raw=False)
assert m["v"] == 1 and m["seq"] == 7 and m["src"] == "sample-src", m
w = m["work"][0]
assert w["id"] == "j1" and w["kind"] == "job" and w["class"] == "normal", w
assert w["memory_mb"] == 30720 and w["state"] == "running" and w["max_processes"] == 10, w
assert w["processes"][0] == {"id": "s-1", "node": "n01", "state": "running", "init_ms": 15000,
                             "run_ms": 4800, "node_memory_mb": 65536}, w["processes"][0]
assert "node_memory_mb" not in w["processes"][1]
s = m["work"][1]
assert s["kind"] == "service" and s["service_id"] == 7 and s["hosts"] == ["n01", "n02"], s
assert m["work"][2]["kind"] == "reservation"
# Same dict, same key order, same smallest encodings: Python writes exactly our bytes.
assert msgpack.packb(m) == ours, "python re-encoding differs"

hb = {"v": 1, "seq": 3, "ts_ms": 1700000000456, "src": "agent-py", "node": "py01", "ip": "10.9.9.9",
      "memory_mb": 65536, "quiesced": True, "cpus": 16, "a_future_key": [1, {"x": None}]}
open(sys.argv[2], "wb").write(msgpack.packb(hb))
req = {"cmd": "vary_off", "nodes": ["n1", "n2"]}
open(sys.argv[3], "wb").write(msgpack.packb(req))
print("python ok")
)PY";

std::string slurp(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

bool python_msgpack_available() {
  if (!fs::exists(python)) return false;
  const std::string cmd = std::string{python} + " -c 'import msgpack' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

}  // namespace

TEST_CASE("Python's msgpack reads our work map byte for byte and writes bodies we decode") {
  if (!python_msgpack_available()) {
    WARN("SKIPPED: /usr/bin/python3 with the msgpack module (Debian python3-msgpack) is not available");
    return;
  }
  const auto dir = fs::temp_directory_path() / ("rmbus-xlang-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto ours = dir / "workmap.bin";
  const auto hb_path = dir / "heartbeat.bin";
  const auto req_path = dir / "request.bin";
  const auto script_path = dir / "check.py";
  {
    std::ofstream{ours, std::ios::binary} << encode(samples::env(), samples::full_workmap());
    std::ofstream{script_path} << script;
  }
  const auto cmd = std::string{python} + " " + script_path.string() + " " + ours.string() + " " +
                   hb_path.string() + " " + req_path.string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  CHECK(rc == 0);

  if (rc == 0) {
    envelope env;
    auto hb = decode_heartbeat(topics::heartbeat, slurp(hb_path), {}, &env);
    INFO((hb ? std::string{} : hb.error().message()));
    REQUIRE(hb.ok());
    CHECK(env == envelope{1, 3, 1'700'000'000'456, "agent-py"});
    CHECK(hb.value() == heartbeat{"py01", "10.9.9.9", 65536, std::nullopt, true, 16});

    auto req = decode_admin_request(topics::admin, slurp(req_path));
    REQUIRE(req.ok());
    CHECK(req.value().cmd == "vary_off");
    CHECK(arguments(req.value()).get_string_list("nodes").value() == std::vector<std::string>{"n1", "n2"});
  }
  fs::remove_all(dir);
}
