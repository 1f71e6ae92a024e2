#pragma once
// The health report (Maui's SystemProfiler): what one rmbus process says of itself every heartbeat
// interval, as an rm.events `health` event. The arithmetic and the readings behind the health actor
// (actors/health.cpp), without CAF.
//
// Decides:
//  - resident memory: the second field of /proc/self/statm (resident pages) x the page size;
//  - free space where the process logs: statvfs of the log file's folder (the working directory when it logs
//    to stderr); free = blocks available to unprivileged users x fragment size, and
//      disk_free_percent = floor(100 x free / total);
//  - the level: `warn` when disk_free_percent < disk_warn_percent (0 never warns), else `info`;
//  - round lag: milliseconds since the last round this process saw published (or since it started), shown
//    beside the epoch (orchestrator period x publish ratio) it should be compared with;
//  - mailbox depths: messages waiting in each main actor's mailbox when it answered the probe.
//
// Thread-safety: free functions; the readings touch the file system only.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "messages/rm_event.hpp"

namespace rmbus::actors {

struct disk_space {
  std::uint64_t free_bytes = 0;
  std::uint64_t total_bytes = 0;
};

struct health_sample {
  std::string instance;
  std::uint64_t rss_bytes = 0;
  std::int64_t round_lag_ms = 0;
  std::int64_t epoch_ms = 0;
  std::string log_dir;
  std::optional<disk_space> disk;  // absent when statvfs failed
  std::map<std::string, std::uint64_t> mailboxes;  // actor -> depth
  // Pools whose round timeout is backed off after replacements (overload): pool -> timeout ms now. Warns.
  std::map<std::string, std::int64_t> scheduler_timeouts;
};

// Resident bytes from the text of /proc/self/statm, or nothing when it is not "size resident ...".
std::optional<std::uint64_t> resident_bytes_of_statm(std::string_view statm, std::uint64_t page_size);
// This process's resident memory (0 when /proc cannot be read).
std::uint64_t resident_bytes();
// statvfs of `dir`.
std::optional<disk_space> disk_space_of(const std::string& dir);
// The folder holding `log_file`, absolute; the working directory for an empty name.
std::string log_dir_of(const std::string& log_file);
// floor(100 x free / total); 100 for a total of 0 (nothing to fill).
int free_percent(const disk_space& d);
// Whether free space is under the warning threshold.
bool disk_low(const disk_space& d, int warn_percent);

messages::rm_event to_event(const health_sample& s, int warn_percent);

}  // namespace rmbus::actors
