// End-to-end: Maui's modules in the real rmbus, seen only through the bus and the files it writes: job
// accounting (a JSON line and a job_done event per finished job), the health report (a health event every
// heartbeat interval) and the configured log file. Waits are on published messages with generous deadlines.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include <csignal>

#include <catch2/catch.hpp>
#include <zlib.h>

#include "messages/rm_event.hpp"
#include "tests/e2e/file_waits.hpp"
#include "tests/e2e/rm_fixture.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::layout;
using rmbus::e2e::eventually;
using rmbus::e2e::read_all;
using rmbus::e2e::rm_fixture;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;
namespace fs = std::filesystem;

namespace {

constexpr auto deadline = 60s;

ts::job_spec job(const std::string& id, const std::string& user, std::uint64_t max_processes = 0,
                 const std::string& cls = "normal") {
  ts::job_spec j;
  j.id = id;
  j.user = user;
  j.class_name = cls;
  j.memory_mb = 1024;
  j.max_processes = max_processes;
  return j;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The raw text of a JSON field's value in a line we wrote (numbers; strings keep their quotes).
std::string field(const std::string& line, const std::string& key) {
  const auto at = line.find("\"" + key + "\":");
  if (at == std::string::npos) return {};
  const auto start = at + key.size() + 3;
  auto end = line.find_first_of(",}", start);
  return line.substr(start, end - start);
}

std::uint64_t number(const std::string& s) { return std::stoull(s); }

// A rotated log file still waiting for the sink's compression thread (logging/rotating_sink.hpp).
bool has_pending(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".pending-") != std::string::npos) return true;
  return false;
}

// `cls` schedules in a pool of `pool_quanta` quanta (alpha: 4 nodes x 8 GB = 32; beta: 2 x 8 = 16); in the split
// layouts beta's scheduler runs in the second process, so its plans reach the accounting over the bus.
void job_accounting_run(layout how, const std::string& cls, std::uint64_t pool_quanta) {
  rm_fixture f{how, {}, "\n[accounting]\nenabled = true\nfile = \"jobs.jsonl\"\n"};
  auto& c = f.cluster();
  c.start();
  const auto started = std::chrono::steady_clock::now();
  c.submit(job("alice-1", "alice", 0, cls));
  // alice's 1 GB processes (order 1) grow to every quantum of the pool.
  REQUIRE(c.wait_state([&](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == pool_quanta; }, deadline));
  c.submit(job("bob-1", "bob", 0, cls));
  // bob arrives: half each, so half of alice's shares are preempted.
  const auto half = pool_quanta / 2;
  REQUIRE(c.wait_state(
      [&](const msg::rm_state& s) {
        const auto* a = ts::find_job(s, "alice-1");
        return a != nullptr && a->shares.size() == half && ts::active_shares(s, "bob-1") == half;
      },
      deadline));
  c.complete("alice-1");  // gone from the orchestrator's map
  auto done = c.wait_event(
      [](const msg::rm_event& e) { return e.kind == "job_done" && e.detail.count("job") && e.detail.at("job") == "alice-1"; },
      deadline);
  REQUIRE(done.has_value());
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const auto& d = done->detail;
  CHECK(d.at("user") == "alice");
  CHECK(d.at("class") == cls);
  CHECK(d.at("group").empty());
  CHECK(d.at("ended") == "gone");
  CHECK(number(d.at("processes")) == pool_quanta);  // every share it was given, once
  CHECK(number(d.at("preemptions")) == half);       // pool_quanta -> half
  CHECK(d.at("evictions") == "0");
  CHECK(d.at("submitted_ms") == "1001000");  // the fake orchestrator's first submission time
  CHECK(d.at("from_start") == "true");         // submitted after the accounting began
  CHECK(number(d.at("started_ms")) > 0);
  CHECK(number(d.at("started_ms")) <= number(d.at("finished_ms")));
  // Quanta-seconds: it held some quanta for some time, never more than the whole pool for the whole run.
  const double qs = std::stod(d.at("quanta_seconds"));
  CHECK(qs > 0);
  CHECK(qs <= double(pool_quanta) * elapsed_s);
  // The preemptions counted are the preempt events published for alice's shares.
  std::size_t preempt_events = 0;
  for (const auto& e : c.events())
    if (e.kind == "preempt" && e.detail.count("job") && e.detail.at("job") == "alice-1") ++preempt_events;
  CHECK(preempt_events == half);

  // The same record, as the one line of the file (written before the event was published).
  const auto lines = lines_of(f.dir() + "/jobs.jsonl");
  REQUIRE(lines.size() == 1);
  const auto& l = lines[0];
  CHECK(field(l, "id") == "\"alice-1\"");
  CHECK(field(l, "user") == "\"alice\"");
  CHECK(field(l, "group") == "\"\"");
  CHECK(field(l, "quanta_seconds") == d.at("quanta_seconds"));
  CHECK(field(l, "processes") == d.at("processes"));
  CHECK(field(l, "preemptions") == d.at("preemptions"));
  CHECK(field(l, "finished_ms") == d.at("finished_ms"));

  // bob still runs: no record for him yet.
  CHECK_FALSE(c.wait_event([](const msg::rm_event& e) {
                 return e.kind == "job_done" && e.detail.count("job") && e.detail.at("job") == "bob-1";
               }, 1s));
}

}  // namespace

TEST_CASE("one process: a finished job leaves one JSON line and one job_done event with what it held", "[e2e][accounting]") {
  job_accounting_run(layout::single, "normal", 32);
}

TEST_CASE("two processes: a job of the second process's pool is accounted by the publisher's process", "[e2e][accounting]") {
  job_accounting_run(layout::split, "beta-normal", 16);
}

TEST_CASE("two processes on rmbus-proxy: a finished job is accounted once", "[e2e][accounting]") {
  job_accounting_run(layout::split_proxy, "normal", 32);
}

// Each process reports on itself: in the split layouts the first process (every role but beta's scheduler)
// and the second (beta's scheduler only) publish health events of their own.
static void health_run(layout how) {
  // disk_warn_percent = 100: any file system with less than all of it free is under the threshold, so the
  // warning path runs on every machine.
  rm_fixture f{how, {}, "\n[health]\nenabled = true\ndisk_warn_percent = 100\n"};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", 4));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 4; }, deadline));
  // A report of the process running the publisher whose probes came back: its main actors named with their
  // mailbox depths.
  auto h = c.wait_event(
      [](const msg::rm_event& e) {
        return e.kind == "health" && e.detail.count("mailbox.scheduler.alpha") && e.detail.count("mailbox.publication");
      },
      deadline);
  REQUIRE(h.has_value());
  const auto& d = h->detail;
  CHECK(d.at("level") == "warn");
  CHECK(d.at("disk_warn_percent") == "100");
  CHECK(d.at("instance").rfind("rmbus.", 0) == 0);
  // Resident memory of a running rmbus: more than 1 MB, less than 8 GB.
  CHECK(number(d.at("rss_bytes")) > (1u << 20));
  CHECK(number(d.at("rss_bytes")) < (8ull << 30));
  // epoch = orchestrator_publish_ms (default 10000) x state_publish_ratio (1).
  CHECK(d.at("epoch_ms") == "10000");
  // Rounds run every 200 ms or so (the fake orchestrator's period): the lag is far below a minute.
  CHECK(number(d.at("round_lag_ms")) < 60000);
  CHECK(number(d.at("disk_free_bytes")) > 0);
  CHECK(number(d.at("disk_free_percent")) < 100);
  std::vector<std::string> actors{"mailbox.router", "mailbox.publication", "mailbox.workmap_diff",
                                  "mailbox.heartbeat_intake", "mailbox.eviction", "mailbox.admin", "mailbox.metrics",
                                  "mailbox.scheduler.alpha"};
  if (how == layout::single) actors.push_back("mailbox.scheduler.beta");
  for (const auto& actor : actors) {
    INFO(actor);
    REQUIRE(d.count(actor) == 1);
    CHECK(number(d.at(actor)) < 100000);
  }
  if (how != layout::single) {
    // The second process: beta's scheduler and its router, under an instance of its own.
    auto b = c.wait_event(
        [](const msg::rm_event& e) { return e.kind == "health" && e.detail.count("mailbox.scheduler.beta"); }, deadline);
    REQUIRE(b.has_value());
    CHECK(b->detail.at("instance") != d.at("instance"));
    CHECK(b->detail.count("mailbox.router") == 1);
    CHECK(b->detail.count("mailbox.publication") == 0);
    CHECK(number(b->detail.at("rss_bytes")) > (1u << 20));
  }
  // Periodic: two more reports follow (one per 300 ms heartbeat interval).
  std::size_t reports = 0;
  REQUIRE(c.wait_event([&](const msg::rm_event& e) { return e.kind == "health" && ++reports >= 3; }, deadline));
  // The warning is in the log too.
  std::ifstream log(f.log_file());
  std::stringstream text;
  text << log.rdbuf();
  CHECK(text.str().find("under the 100% warning threshold") != std::string::npos);
}

TEST_CASE("one process: a health event every heartbeat interval with plausible readings, warning under the threshold",
          "[e2e][health]") {
  health_run(layout::single);
}

TEST_CASE("two processes: each reports its own health", "[e2e][health]") { health_run(layout::split); }

TEST_CASE("two processes on rmbus-proxy: each reports its own health", "[e2e][health]") {
  health_run(layout::split_proxy);
}

TEST_CASE("the configured log file is written and rotated, the older files compressed and bounded", "[e2e][logging]") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  // Restart the RM logging to rm.log (next to its configuration): 1 KiB a file, 2 rotated files kept.
  f.kill_rm(SIGTERM);
  f.wait_rm(15s);
  std::stringstream cfg;
  cfg << std::ifstream(f.config_path()).rdbuf();
  auto text = cfg.str();
  const std::string level = "[log]\nlevel = \"info\"\n";
  REQUIRE(text.find(level) != std::string::npos);
  text.replace(text.find(level), level.size(), level + "file = \"rm.log\"\nmax_bytes = 1024\nmax_files = 2\n");
  std::ofstream(f.config_path()) << text;
  f.start_rm();
  // Every SIGHUP logs "SIGHUP: reconfiguring" and "reconfiguring" (about 130 bytes with spdlog's prefix):
  // 30 of them are about 3.9 KiB, beyond three files of 1 KiB, so the log rotated at least twice.
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  for (int i = 0; i < 30; ++i) {
    f.kill_rm(SIGHUP);
    REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  }
  const std::string log = f.dir() + "/rm.log";
  CHECK(fs::exists(log));
  // Compression runs on the sink's own thread: the rotated files are in place once no pending file is left.
  REQUIRE(eventually([&] { return !has_pending(f.dir()) && fs::exists(log + ".1.gz") && fs::exists(log + ".2.gz"); }, 30s));
  CHECK_FALSE(fs::exists(log + ".3.gz"));  // max_files = 2
  CHECK_FALSE(fs::exists(log + ".1"));     // every rotated file compressed
  // The newest rotated file gunzips to log lines of this RM.
  gzFile in = gzopen((log + ".1.gz").c_str(), "rb");
  REQUIRE(in != nullptr);
  std::string plain;
  char buf[4096];
  for (int n = 0; (n = gzread(in, buf, sizeof buf)) > 0;) plain.append(buf, static_cast<std::size_t>(n));
  gzclose(in);
  CHECK(plain.find("reconfiguring") != std::string::npos);
  CHECK(plain.size() <= 1024);
  // With a log file, nothing goes to stderr.
  std::stringstream err;
  err << std::ifstream(f.log_file()).rdbuf();
  CHECK(err.str().find("SIGHUP") == std::string::npos);

  // A reconfiguration to max_files = 1 applies at the next rotation: .2.gz is deleted, .1.gz stays.
  text.replace(text.find("max_files = 2"), 13, "max_files = 1");
  std::ofstream(f.config_path()) << text;
  for (int i = 0; i < 12; ++i) {  // 12 x about 130 bytes: past 1 KiB, so at least one rotation
    f.kill_rm(SIGHUP);
    REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  }
  REQUIRE(eventually([&] { return !has_pending(f.dir()) && !fs::exists(log + ".2.gz"); }, 30s));
  CHECK(fs::exists(log + ".1.gz"));
}

namespace {

// Rewrites the RM's configuration: the [log] level, then `extra` (whole tables) at the end.
void rewrite_config(rm_fixture& f, const std::string& level, const std::string& extra) {
  auto text = read_all(f.config_path());
  const std::string old_level = "[log]\nlevel = \"";
  const auto at = text.find(old_level);
  REQUIRE(at != std::string::npos);
  const auto end = text.find('"', at + old_level.size());
  text.replace(at + old_level.size(), end - at - old_level.size(), level);
  // The tables this test appends start at the first "\n[health]" or "\n[accounting]" (gone on a rewrite).
  const auto tail = std::min(text.find("\n[health]"), text.find("\n[accounting]"));
  if (tail != std::string::npos) text.erase(tail);
  std::ofstream(f.config_path()) << text << extra;
}

bool eventually_in_file(const std::string& path, const std::string& needle) {
  return eventually([&] { return read_all(path).find(needle) != std::string::npos; }, 30s);
}

std::size_t count_events(const rmbus::test_support::fake_cluster& c, const std::string& kind) {
  std::size_t n = 0;
  for (const auto& e : c.events()) n += e.kind == kind;
  return n;
}

}  // namespace

TEST_CASE("a reconfiguration starts and stops the health report and job accounting and changes the log level",
          "[e2e][reconfigure]") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", 2));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 2; }, deadline));
  CHECK(count_events(c, "health") == 0);

  // Level warn, the health report on: its reports begin, and its info line "health report started" is not
  // logged, because the level changed before it was written.
  rewrite_config(f, "warn", "\n[health]\nenabled = true\n");
  f.kill_rm(SIGHUP);
  REQUIRE(c.wait_event([](const msg::rm_event& e) { return e.kind == "health"; }, deadline));
  CHECK(read_all(f.log_file()).find("health report started") == std::string::npos);

  // Level info, the health report off, accounting on: its start is logged at info again.
  rewrite_config(f, "info", "\n[accounting]\nenabled = true\nfile = \"jobs.jsonl\"\n");
  f.kill_rm(SIGHUP);
  REQUIRE(eventually_in_file(f.log_file(), "job accounting started"));
  REQUIRE(eventually_in_file(f.log_file(), "health report stopped"));
  // No health report after the stop: the heartbeat interval is 300 ms, so 1.5 s would have held about five.
  const auto health_reports = count_events(c, "health");
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
  std::this_thread::sleep_for(1500ms);
  CHECK(count_events(c, "health") == health_reports);

  // A job that ends now is accounted, in the file and as an event.
  c.complete("alice-1");
  auto done = c.wait_event(
      [](const msg::rm_event& e) { return e.kind == "job_done" && e.detail.count("job") && e.detail.at("job") == "alice-1"; },
      deadline);
  REQUIRE(done.has_value());
  const auto lines = lines_of(f.dir() + "/jobs.jsonl");
  REQUIRE(lines.size() == 1);
  CHECK(field(lines[0], "id") == "\"alice-1\"");
  // alice-1 ran before accounting was turned on: its record covers only the time since, and says so.
  CHECK(field(lines[0], "from_start") == "false");
  CHECK(done->detail.at("from_start") == "false");

  // Accounting off again: the next finished job leaves no record.
  rewrite_config(f, "info", "");
  f.kill_rm(SIGHUP);
  REQUIRE(eventually_in_file(f.log_file(), "job accounting stopped"));
  c.submit(job("bob-1", "bob", 1));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "bob-1") == 1; }, deadline));
  c.complete("bob-1");
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::find_job(s, "bob-1") == nullptr; }, deadline));
  CHECK_FALSE(c.wait_event(
      [](const msg::rm_event& e) { return e.kind == "job_done" && e.detail.count("job") && e.detail.at("job") == "bob-1"; },
      1s));
  CHECK(lines_of(f.dir() + "/jobs.jsonl").size() == 1);
}
