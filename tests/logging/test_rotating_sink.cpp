// The log file's rotation by size and count, and the compression of the rotated files: enough is written to
// rotate many times, then every file is read back (the rotated ones through zlib) and the lines must be the
// newest ones, in order, none lost within the kept files, none duplicated.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <stdlib.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <spdlog/logger.h>

#include "logging/rotating_sink.hpp"

namespace fs = std::filesystem;
using rmbus::logging::rotating_sink;
using rmbus::logging::rotation_settings;

namespace {

struct scratch {
  fs::path dir;
  scratch() {
    char tmpl[] = "/tmp/rmbus-log-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

std::string read_plain(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string read_gzip(const fs::path& p) {
  gzFile in = gzopen(p.c_str(), "rb");
  REQUIRE(in != nullptr);
  std::string out;
  char buf[4096];
  int n = 0;
  while ((n = gzread(in, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  CHECK(n == 0);  // end of stream, not an error
  gzclose(in);
  return out;
}

bool is_gzip(const fs::path& p) {
  const auto head = read_plain(p).substr(0, 2);
  return head.size() == 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b;
}

// Line i: "line NNNN " padded with 'x' to 99 characters, plus the newline: exactly 100 bytes.
std::string line(int i) {
  std::string s = "line " + std::to_string(1000 + i) + " ";
  s.resize(99, 'x');
  return s;
}

std::string lines(int first, int last) {
  std::string out;
  for (int i = first; i <= last; ++i) out += line(i) + "\n";
  return out;
}

std::shared_ptr<rotating_sink> write_lines(const rotation_settings& s, int count) {
  auto sink = std::make_shared<rotating_sink>(s);
  spdlog::logger log("rotation-test", sink);
  log.set_pattern("%v");
  for (int i = 1; i <= count; ++i) log.info(line(i));
  log.flush();
  // Rotated files are moved in by the sink's background thread: the checks below look at its finished work.
  REQUIRE(sink->wait_idle(std::chrono::seconds(30)));
  return sink;
}

}  // namespace

TEST_CASE("rotated files are gzip-compressed, bounded in number, and gunzip to the lines written", "[logging]") {
  scratch tmp;
  rotation_settings s;
  s.file = (tmp.dir / "rm.log").string();
  s.max_bytes = 1024;
  s.max_files = 3;
  s.compress = true;
  // 100-byte lines, at most 1024 bytes a file: 10 lines fit (1000), the 11th (1100 > 1024) rotates.
  // 100 lines = 10 files' worth: live 91..100, .1 81..90, .2 71..80, .3 61..70; 1..60 dropped (3 kept).
  auto sink = write_lines(s, 100);
  CHECK(read_plain(s.file) == lines(91, 100));
  CHECK(sink->rotated_name(1) == s.file + ".1.gz");
  for (int n = 1; n <= 3; ++n) {
    const fs::path rotated = sink->rotated_name(n);
    REQUIRE(fs::exists(rotated));
    CHECK(is_gzip(rotated));
    // Compressed: 10 near-identical lines of 100 bytes shrink well below 1000 bytes.
    CHECK(fs::file_size(rotated) < 1000);
    const int first = 91 - 10 * n;
    CHECK(read_gzip(rotated) == lines(first, first + 9));
  }
  CHECK_FALSE(fs::exists(sink->rotated_name(4)));
  CHECK_FALSE(fs::exists(s.file + ".1"));  // no uncompressed leftovers
  // Exactly the live file and three rotated ones.
  CHECK(std::distance(fs::directory_iterator(tmp.dir), fs::directory_iterator{}) == 4);
}

TEST_CASE("without compression the rotated files are plain and the count is still bounded", "[logging]") {
  scratch tmp;
  rotation_settings s;
  s.file = (tmp.dir / "rm.log").string();
  s.max_bytes = 1024;
  s.max_files = 2;
  s.compress = false;
  // 35 lines: 10 a file; live 31..35, .1 21..30, .2 11..20; 1..10 dropped.
  auto sink = write_lines(s, 35);
  CHECK(sink->rotated_name(2) == s.file + ".2");
  CHECK(read_plain(s.file) == lines(31, 35));
  CHECK(read_plain(s.file + ".1") == lines(21, 30));
  CHECK(read_plain(s.file + ".2") == lines(11, 20));
  CHECK_FALSE(fs::exists(s.file + ".3"));
}

TEST_CASE("a restarted process appends to its file and counts what is already there", "[logging]") {
  scratch tmp;
  rotation_settings s;
  s.file = (tmp.dir / "rm.log").string();
  s.max_bytes = 1024;
  s.max_files = 2;
  // 6 lines, then 6 more by a second sink: 600 bytes + 400 fit (1000), the 11th line rotates.
  // Live: 11..12; .1.gz: 1..10.
  write_lines(s, 6);
  {
    auto sink = std::make_shared<rotating_sink>(s);
    spdlog::logger log("rotation-restart", sink);
    log.set_pattern("%v");
    for (int i = 7; i <= 12; ++i) log.info(line(i));
    log.flush();
  }
  CHECK(read_plain(s.file) == lines(11, 12));
  CHECK(read_gzip(s.file + ".1.gz") == lines(1, 10));
}

TEST_CASE("gzip_file round-trips a file and fails cleanly on a missing one", "[logging]") {
  scratch tmp;
  const auto plain = (tmp.dir / "a.txt").string();
  std::ofstream{plain} << lines(1, 50);
  REQUIRE(rmbus::logging::gzip_file(plain, plain + ".gz"));
  CHECK(read_gzip(plain + ".gz") == lines(1, 50));
  CHECK_FALSE(rmbus::logging::gzip_file((tmp.dir / "missing").string(), (tmp.dir / "missing.gz").string()));
  CHECK_FALSE(fs::exists(tmp.dir / "missing.gz"));
}

TEST_CASE("an unwritable log file is refused with its name", "[logging]") {
  // spdlog creates missing folders, so the folder here is a plain file: nothing can be created under it.
  scratch tmp;
  const auto not_a_dir = tmp.dir / "plain";
  std::ofstream{not_a_dir} << "x";
  rotation_settings s;
  s.file = (not_a_dir / "rm.log").string();
  CHECK_THROWS_WITH(rotating_sink{s}, Catch::Contains(s.file));
}
