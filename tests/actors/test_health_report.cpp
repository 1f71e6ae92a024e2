// The health report's readings and arithmetic (actors/health_report.hpp): resident memory from statm, free
// space and its percent, the warning threshold, and the event's fields.
#include <catch2/catch.hpp>

#include "actors/health_report.hpp"

using namespace rmbus::actors;

TEST_CASE("resident memory is the second field of statm times the page size", "[actors][health]") {
  // 250 resident pages x 4096 bytes = 1 024 000.
  CHECK(resident_bytes_of_statm("1000 250 30 4 0 80 0\n", 4096) == std::optional<std::uint64_t>{1024000});
  CHECK_FALSE(resident_bytes_of_statm("", 4096).has_value());
  CHECK_FALSE(resident_bytes_of_statm("1000", 4096).has_value());
  CHECK_FALSE(resident_bytes_of_statm("x 1", 4096).has_value());
  // This very process is resident somewhere between one page and a terabyte.
  CHECK(resident_bytes() > 4096);
  CHECK(resident_bytes() < (1ull << 40));
}

TEST_CASE("free space: percent rounds down, the threshold warns strictly below it, 0 never warns", "[actors][health]") {
  // 5 of 100 free = 5%; 999 of 10000 = 9.99% -> 9.
  CHECK(free_percent({5, 100}) == 5);
  CHECK(free_percent({999, 10000}) == 9);
  CHECK(free_percent({0, 0}) == 100);
  CHECK(disk_low({999, 10000}, 10));       // 9 < 10
  CHECK_FALSE(disk_low({1000, 10000}, 10));  // 10 is not under 10
  CHECK_FALSE(disk_low({0, 10000}, 0));      // 0: never
  const auto tmp = disk_space_of("/tmp");
  REQUIRE(tmp.has_value());
  CHECK(tmp->total_bytes > 0);
  CHECK(tmp->free_bytes <= tmp->total_bytes);
  CHECK_FALSE(disk_space_of("/nonexistent/rmbus/dir").has_value());
  CHECK(log_dir_of("/var/log/rmbus/rm.log") == "/var/log/rmbus");
  CHECK_FALSE(log_dir_of("").empty());  // the working directory
}

TEST_CASE("the health event carries every reading, and its level says warn under the threshold", "[actors][health]") {
  health_sample s;
  s.instance = "rmbus.1.x";
  s.rss_bytes = 123;
  s.round_lag_ms = 450;
  s.epoch_ms = 10000;
  s.log_dir = "/var/log";
  s.disk = disk_space{50, 1000};  // 5%
  s.mailboxes = {{"router", 0}, {"scheduler.alpha", 7}};
  auto e = to_event(s, 10);
  CHECK(e.kind == "health");
  CHECK(e.detail.at("level") == "warn");  // 5 < 10
  CHECK(e.detail.at("rss_bytes") == "123");
  CHECK(e.detail.at("round_lag_ms") == "450");
  CHECK(e.detail.at("epoch_ms") == "10000");
  CHECK(e.detail.at("disk_free_bytes") == "50");
  CHECK(e.detail.at("disk_free_percent") == "5");
  CHECK(e.detail.at("disk_warn_percent") == "10");
  CHECK(e.detail.at("mailbox.scheduler.alpha") == "7");
  CHECK(e.detail.at("instance") == "rmbus.1.x");
  CHECK(to_event(s, 5).detail.at("level") == "info");  // 5 is not under 5
  s.disk.reset();  // statvfs failed: no disk fields, never a warning
  auto none = to_event(s, 10);
  CHECK(none.detail.count("disk_free_bytes") == 0);
  CHECK(none.detail.at("level") == "info");
}
