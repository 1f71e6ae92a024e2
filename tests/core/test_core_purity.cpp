// The core must stay testable and benchmarkable alone: no file under core/ may include CAF, ZeroMQ or
// MessagePack headers (style.md, "the house"), and none may read a clock or a random source (the cycle is
// deterministic: time and seeds are inputs).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

TEST_CASE("core/ includes no CAF, ZeroMQ or MessagePack and reads no clock or random source") {
  const fs::path core_dir = fs::path(RMBUS_SOURCE_DIR) / "core";
  REQUIRE(fs::is_directory(core_dir));
  const std::regex forbidden_include(R"(#\s*include\s*[<"](caf/|zmq|msgpack))");
  const std::regex forbidden_call(
      R"((system_clock|steady_clock|high_resolution_clock|random_device|getenv|std::rand\b|std::time\s*\(|\btime\s*\(\s*(nullptr|NULL|0)\s*\)))");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(core_dir)) {
    const auto ext = entry.path().extension().string();
    if (ext != ".hpp" && ext != ".cpp") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    INFO(entry.path().filename().string() << ": the core must stay testable and benchmarkable alone");
    CHECK_FALSE(std::regex_search(s, forbidden_include));
    CHECK_FALSE(std::regex_search(s, forbidden_call));
    ++files;
  }
  CHECK(files >= 10);
}
