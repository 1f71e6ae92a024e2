// The log file's rotation by size and count, and the compression of the rotated files: enough is written to
// rotate many times, then every file is read back (the rotated ones through zlib) and the lines must be the
// newest ones, in order, none lost within the kept files, none duplicated.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>
#include <algorithm>

#include <stdlib.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <spdlog/logger.h>

#include "logging/rotating_sink.hpp"
#include "tests/support/scratch_folder.hpp"

namespace fs = std::filesystem;
using rmbus::logging::rotating_sink;
using rmbus::logging::rotation_settings;

namespace {

// A scratch folder for the log files; `dir` names it.
struct scratch {
  rmbus::test_support::scratch_folder folder{"rmbus-log"};
  const fs::path& dir = folder.path();
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

// Holds the sink's background thread at its first rotated file until opened, and records every pending
// file the thread is handed, in order. Waits are bounded so that a failing test ends instead of hanging.
struct worker_gate {
  std::promise<void> open_promise;
  std::shared_future<void> opened = open_promise.get_future().share();
  std::promise<void> entered_promise;
  std::shared_future<void> entered = entered_promise.get_future().share();
  std::once_flag entered_once;
  std::once_flag open_once;
  std::mutex seen_mutex;
  std::vector<std::string> seen;
  std::size_t most_pending_seen = 0;  // pending files in the folder, the most the thread found at its calls

  rotating_sink::before_handling_hook hook() {
    return [this](const std::string& pending) {
      std::size_t pending_now = 0;
      std::error_code ec;
      for (fs::directory_iterator it(fs::path(pending).parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
        const auto name = it->path().filename().string();
        if (name.find(".pending-") != std::string::npos && name.find(".gz.part") == std::string::npos) ++pending_now;
      }
      {
        std::lock_guard lock(seen_mutex);
        seen.push_back(fs::path(pending).filename().string());
        most_pending_seen = std::max(most_pending_seen, pending_now);
      }
      std::call_once(entered_once, [this] { entered_promise.set_value(); });
      opened.wait_for(std::chrono::seconds(30));
    };
  }
  bool wait_entered() { return entered.wait_for(std::chrono::seconds(30)) == std::future_status::ready; }
  void open() {
    std::call_once(open_once, [this] { open_promise.set_value(); });
  }
  std::vector<std::string> names_seen() {
    std::lock_guard lock(seen_mutex);
    return seen;
  }
  std::size_t most_pending() {
    std::lock_guard lock(seen_mutex);
    return most_pending_seen;
  }
};

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// Lines 1-30 rotated in tens and compressed: FILE.1.gz the newest ten, FILE.3.gz the oldest.
void check_three_rotated_tens(const std::string& file) {
  CHECK(read_gzip(file + ".1.gz") == lines(21, 30));
  CHECK(read_gzip(file + ".2.gz") == lines(11, 20));
  CHECK(read_gzip(file + ".3.gz") == lines(1, 10));
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

TEST_CASE("logging goes on while the background thread holds a rotated file", "[logging]") {
  scratch tmp;
  worker_gate gate;
  rotation_settings s;
  s.file = (tmp.dir / "rm.log").string();
  s.max_bytes = 1024;
  s.max_files = 5;
  auto sink = std::make_shared<rotating_sink>(s, gate.hook());
  spdlog::logger log("rotation-nonblocking", sink);
  log.set_pattern("%v");
  for (int i = 1; i <= 11; ++i) log.info(line(i));  // the 11th line rotates lines 1..10
  REQUIRE(gate.wait_entered());
  // The thread is now inside its handling of the first rotated file and stays there until the gate opens:
  // were logging to wait for it (as when gzip ran under the sink's lock), these calls would never return.
  for (int i = 12; i <= 35; ++i) log.info(line(i));  // lines 21 and 31 rotate twice more
  log.flush();
  CHECK(read_plain(s.file) == lines(31, 35));
  CHECK(read_plain(s.file + ".pending-000001") == lines(1, 10));
  CHECK(read_plain(s.file + ".pending-000002") == lines(11, 20));
  CHECK(read_plain(s.file + ".pending-000003") == lines(21, 30));
  CHECK_FALSE(fs::exists(s.file + ".1.gz"));
  CHECK_FALSE(sink->wait_idle(std::chrono::milliseconds(0)));  // three files still queued
  gate.open();
  REQUIRE(sink->wait_idle(std::chrono::seconds(30)));
  check_three_rotated_tens(s.file);
  CHECK(names_in(tmp.dir) == std::vector<std::string>{"rm.log", "rm.log.1.gz", "rm.log.2.gz", "rm.log.3.gz"});
}

TEST_CASE("rotations faster than compression keep their order and their count", "[logging]") {
  scratch tmp;
  worker_gate gate;
  rotation_settings s;
  s.file = (tmp.dir / "rm.log").string();
  s.max_bytes = 1024;
  s.max_files = 30;
  s.compress = true;
  auto sink = std::make_shared<rotating_sink>(s, gate.hook());
  spdlog::logger log("rotation-backlog", sink);
  log.set_pattern("%v");
  // With the thread held, every place in the queue fills: rotations at lines 11, 21, ..., 81 are
  // max_pending = 8 pending files (a 9th rotation would wait for room, so line 91 is not reached yet).
  static_assert(rotating_sink::max_pending == 8);
  for (int i = 1; i <= 85; ++i) log.info(line(i));
  REQUIRE(gate.wait_entered());
  int pending = 0;
  for (const auto& name : names_in(tmp.dir)) pending += name.rfind("rm.log.pending-", 0) == 0 ? 1 : 0;
  CHECK(pending == 8);
  gate.open();
  // 400 lines: 39 rotations (lines 11, 21, ..., 391), the last 31 with a backlog behind them.
  for (int i = 86; i <= 400; ++i) log.info(line(i));
  log.flush();
  REQUIRE(sink->wait_idle(std::chrono::seconds(30)));
  // However far the logger ran ahead, it never left more than max_pending rotated files waiting.
  CHECK(gate.most_pending() <= rotating_sink::max_pending);
  // The thread was handed the pending files in rotation order: 1, 2, ..., 39.
  const auto seen = gate.names_seen();
  REQUIRE(seen.size() == 39);
  for (std::size_t k = 0; k < seen.size(); ++k) {
    char expected[64];
    std::snprintf(expected, sizeof expected, "rm.log.pending-%06zu", k + 1);
    CHECK(seen[k] == expected);
  }
  // Live: 391..400. Rotated file n holds the 10 lines before those of n - 1: 391 - 10n .. 400 - 10n, for
  // n = 1 .. 30 (max_files); the 9 oldest rotations (lines 1..90) were dropped.
  CHECK(read_plain(s.file) == lines(391, 400));
  for (int n = 1; n <= 30; ++n) {
    INFO("rotated file " << n);
    CHECK(read_gzip(s.file + "." + std::to_string(n) + ".gz") == lines(391 - 10 * n, 400 - 10 * n));
  }
  CHECK(names_in(tmp.dir).size() == 31);  // the live file and 30 rotated ones, nothing pending
}

TEST_CASE("pending files left by a crashed run are moved in at construction, oldest first", "[logging]") {
  scratch tmp;
  const auto file = (tmp.dir / "rm.log").string();
  const auto gz = [&](int first, int last, const std::string& to) {
    write_file(tmp.dir / "src", lines(first, last));
    REQUIRE(rmbus::logging::gzip_file((tmp.dir / "src").string(), to));
    fs::remove(tmp.dir / "src");
  };
  rotation_settings s;
  s.file = file;
  s.max_bytes = 1024;
  s.max_files = 5;
  s.compress = true;

  SECTION("pending files, one beside an interrupted .gz.part") {
    // The crashed run had moved in 1..10 and rotated 11..20 and 21..30, and was compressing the first.
    gz(1, 10, file + ".1.gz");
    write_file(file + ".pending-000002", lines(11, 20));
    write_file(file + ".pending-000002.gz.part", "\x1f\x8b truncated");
    write_file(file + ".pending-000003", lines(21, 30));
    write_file(file, lines(31, 32));
    worker_gate gate;
    gate.open();
    {
      auto sink = std::make_shared<rotating_sink>(s, gate.hook());
      REQUIRE(sink->wait_idle(std::chrono::seconds(30)));
      check_three_rotated_tens(file);
      // The live file is appended to; the next rotation continues after the highest seq found (3).
      // 200 bytes there + 8 lines = 1000; line 41 rotates.
      spdlog::logger log("rotation-leftovers", sink);
      log.set_pattern("%v");
      for (int i = 33; i <= 41; ++i) log.info(line(i));
      log.flush();
      REQUIRE(sink->wait_idle(std::chrono::seconds(30)));
    }
    CHECK(gate.names_seen() ==
          std::vector<std::string>{"rm.log.pending-000002", "rm.log.pending-000003", "rm.log.pending-000004"});
    CHECK(read_gzip(file + ".1.gz") == lines(31, 40));
    CHECK(read_gzip(file + ".4.gz") == lines(1, 10));
    CHECK(names_in(tmp.dir) ==
          std::vector<std::string>{"rm.log", "rm.log.1.gz", "rm.log.2.gz", "rm.log.3.gz", "rm.log.4.gz"});
  }

  SECTION("a complete .gz.part whose source was already deleted goes in first") {
    // Crashed between deleting pending-000001 and renaming its .gz.part; 11..20 was rotated after it.
    gz(1, 10, file + ".pending-000001.gz.part");
    write_file(file + ".pending-000002", lines(11, 20));
    {
      rotating_sink sink(s);
      REQUIRE(sink.wait_idle(std::chrono::seconds(30)));
    }
    CHECK(read_gzip(file + ".1.gz") == lines(11, 20));
    CHECK(read_gzip(file + ".2.gz") == lines(1, 10));
    CHECK(names_in(tmp.dir) == std::vector<std::string>{"rm.log", "rm.log.1.gz", "rm.log.2.gz"});
  }

  SECTION("without compression they are kept, renamed into place") {
    s.compress = false;
    write_file(file + ".pending-000007", lines(1, 10));
    { rotating_sink sink(s); }  // the destructor lets the thread finish
    CHECK(read_plain(file + ".1") == lines(1, 10));
    CHECK(names_in(tmp.dir) == std::vector<std::string>{"rm.log", "rm.log.1"});
  }
}

TEST_CASE("reconfigure changes max_bytes at once, max_files and compress from the next rotation", "[logging]") {
  scratch tmp;
  rotation_settings s;
  s.file = (tmp.dir / "rm.log").string();
  s.max_bytes = 1024;
  s.max_files = 5;
  s.compress = true;
  auto sink = std::make_shared<rotating_sink>(s);
  spdlog::logger log("rotation-reconfigure", sink);
  log.set_pattern("%v");
  // 60 lines: rotations at 11, 21, 31, 41, 51: .1.gz 41..50 ... .5.gz 1..10, live 51..60.
  for (int i = 1; i <= 60; ++i) log.info(line(i));
  REQUIRE(sink->wait_idle(std::chrono::seconds(30)));
  REQUIRE(read_gzip(s.file + ".5.gz") == lines(1, 10));

  rotation_settings other = s;
  other.file = (tmp.dir / "other.log").string();
  CHECK_THROWS_AS(sink->reconfigure(other), std::invalid_argument);
  rotation_settings zero = s;
  zero.max_files = 0;
  CHECK_THROWS_WITH(sink->reconfigure(zero), Catch::Contains("max_files"));
  CHECK(sink->rotated_name(1) == s.file + ".1.gz");  // unchanged by the refused calls

  rotation_settings next = s;
  next.max_bytes = 2048;
  next.max_files = 2;
  next.compress = false;
  sink->reconfigure(next);
  CHECK(sink->rotated_name(1) == s.file + ".1");
  // Live 51..60 is 1000 bytes; under 2048, lines 61..70 fit (2000) and line 71 rotates (2100 > 2048).
  for (int i = 61; i <= 80; ++i) log.info(line(i));
  log.flush();
  REQUIRE(sink->wait_idle(std::chrono::seconds(30)));
  CHECK(read_plain(s.file) == lines(71, 80));
  // That rotation keeps 2 files: 51..70 uncompressed as .1, the newest before it (41..50) shifted to .2.gz;
  // 1..40 (.2.gz .. .5.gz before the shift) are dropped.
  CHECK(read_plain(s.file + ".1") == lines(51, 70));
  CHECK(read_gzip(s.file + ".2.gz") == lines(41, 50));
  CHECK(names_in(tmp.dir) == std::vector<std::string>{"rm.log", "rm.log.1", "rm.log.2.gz"});
}

TEST_CASE("the destructor lets the background thread finish its queue", "[logging]") {
  scratch tmp;
  worker_gate gate;
  rotation_settings s;
  s.file = (tmp.dir / "rm.log").string();
  s.max_bytes = 1024;
  s.max_files = 5;
  {
    // The last owner opens the gate just before deleting the sink: at that moment the thread still holds
    // the first of three rotated files, so all three are handled within the destructor.
    std::shared_ptr<rotating_sink> sink(new rotating_sink(s, gate.hook()), [&gate](rotating_sink* p) {
      gate.open();
      delete p;
    });
    spdlog::logger log("rotation-drain", sink);
    log.set_pattern("%v");
    for (int i = 1; i <= 35; ++i) log.info(line(i));
    log.flush();
    REQUIRE(gate.wait_entered());
    CHECK(fs::exists(s.file + ".pending-000003"));
  }
  check_three_rotated_tens(s.file);
  CHECK(names_in(tmp.dir) == std::vector<std::string>{"rm.log", "rm.log.1.gz", "rm.log.2.gz", "rm.log.3.gz"});
}

TEST_CASE("a rotated file that cannot be compressed is kept uncompressed in its place", "[logging]") {
  scratch tmp;
  rotation_settings s;
  s.file = (tmp.dir / "rm.log").string();
  s.max_bytes = 1024;
  s.max_files = 5;
  auto sink = std::make_shared<rotating_sink>(s);
  // gzip's output for the first rotated file is a non-empty folder: it can be neither written nor removed.
  fs::create_directories(tmp.dir / "rm.log.pending-000001.gz.part" / "in-the-way");
  spdlog::logger log("rotation-uncompressible", sink);
  log.set_pattern("%v");
  // Rotation at line 11 (pending-000001: compression fails), then at line 21 (pending-000002: works).
  for (int i = 1; i <= 25; ++i) log.info(line(i));
  log.flush();
  REQUIRE(sink->wait_idle(std::chrono::seconds(30)));
  CHECK(read_gzip(s.file + ".1.gz") == lines(11, 20));
  CHECK(read_plain(s.file + ".2") == lines(1, 10));  // shifted along with the compressed ones
  CHECK(read_plain(s.file) == lines(21, 25));
  CHECK_FALSE(fs::exists(s.file + ".pending-000001"));
}
