#include "actors/health_report.hpp"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/statvfs.h>
#include <unistd.h>

namespace rmbus::actors {

std::optional<std::uint64_t> resident_bytes_of_statm(std::string_view statm, std::uint64_t page_size) {
  // "size resident shared text lib data dt": the second number.
  std::uint64_t numbers[2] = {0, 0};
  std::size_t pos = 0;
  for (auto& n : numbers) {
    while (pos < statm.size() && statm[pos] == ' ') ++pos;
    const auto* begin = statm.data() + pos;
    const auto* end = statm.data() + statm.size();
    auto [p, ec] = std::from_chars(begin, end, n);
    if (ec != std::errc{} || p == begin) return std::nullopt;
    pos = static_cast<std::size_t>(p - statm.data());
  }
  return numbers[1] * page_size;
}

std::uint64_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  std::string text;
  std::getline(in, text);
  const long page = ::sysconf(_SC_PAGESIZE);
  return resident_bytes_of_statm(text, page > 0 ? static_cast<std::uint64_t>(page) : 4096).value_or(0);
}

std::optional<disk_space> disk_space_of(const std::string& dir) {
  struct statvfs v {};
  if (::statvfs(dir.c_str(), &v) != 0) return std::nullopt;
  return disk_space{static_cast<std::uint64_t>(v.f_bavail) * v.f_frsize,
                    static_cast<std::uint64_t>(v.f_blocks) * v.f_frsize};
}

std::string log_dir_of(const std::string& log_file) {
  std::error_code ec;
  if (log_file.empty()) return std::filesystem::current_path(ec).string();
  auto dir = std::filesystem::absolute(std::filesystem::path(log_file), ec).parent_path();
  return dir.string();
}

int free_percent(const disk_space& d) {
  if (d.total_bytes == 0) return 100;
  // Bytes of a disk fit 64 bits; x100 could overflow only past 184 PB, so divide first there.
  if (d.free_bytes > UINT64_MAX / 100) return static_cast<int>(d.free_bytes / (d.total_bytes / 100));
  return static_cast<int>(d.free_bytes * 100 / d.total_bytes);
}

bool disk_low(const disk_space& d, int warn_percent) { return warn_percent > 0 && free_percent(d) < warn_percent; }

messages::rm_event to_event(const health_sample& s, int warn_percent) {
  messages::rm_event e{std::string{messages::event_kinds::health}, {}};
  auto& d = e.detail;
  d["instance"] = s.instance;
  d["level"] = (s.disk && disk_low(*s.disk, warn_percent)) || !s.scheduler_timeouts.empty() ? "warn" : "info";
  d["rss_bytes"] = std::to_string(s.rss_bytes);
  d["round_lag_ms"] = std::to_string(s.round_lag_ms);
  d["epoch_ms"] = std::to_string(s.epoch_ms);
  d["log_dir"] = s.log_dir;
  if (s.disk) {
    d["disk_free_bytes"] = std::to_string(s.disk->free_bytes);
    d["disk_free_percent"] = std::to_string(free_percent(*s.disk));
  }
  d["disk_warn_percent"] = std::to_string(warn_percent);
  for (const auto& [actor, depth] : s.mailboxes) d["mailbox." + actor] = std::to_string(depth);
  for (const auto& [pool, ms] : s.scheduler_timeouts) d["scheduler_timeout_ms." + pool] = std::to_string(ms);
  return e;
}

}  // namespace rmbus::actors
