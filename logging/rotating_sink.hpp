#pragma once
// A spdlog sink writing one log file, rotated by size and count, the older files optionally gzip-compressed
// (Maui's Logger module).
//
// Rotation: when a record would take the live file past `max_bytes` (and the file is not empty), the live
// file becomes FILE.1, FILE.1 becomes FILE.2, ..., and FILE.<max_files> is dropped; with `compress` the
// rotated files are FILE.1.gz ... and the live file is gzip-compressed into FILE.1.gz as it is rotated
// (synchronously, under the sink's lock: logging waits for it, so a 64 MB file costs well under a second of
// log latency once per 64 MB logged). A record longer than max_bytes is still written whole, into a file of
// its own. Should compression fail (disk full), the file is rotated uncompressed (FILE.1) rather than lost,
// and the failure is reported on stderr: a sink cannot log through its own logger.
//
// Thread-safety: spdlog's base_sink<std::mutex> serialises every call.

#include <cstdint>
#include <mutex>
#include <string>

#include <spdlog/details/file_helper.h>
#include <spdlog/sinks/base_sink.h>

namespace rmbus::logging {

struct rotation_settings {
  std::string file;
  std::uint64_t max_bytes = 64u * 1024u * 1024u;
  int max_files = 5;  // REQUIRES: >= 1
  bool compress = true;
};

class rotating_sink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  // Opens (appends to) settings.file; throws spdlog::spdlog_ex naming the file when it cannot be opened.
  explicit rotating_sink(rotation_settings settings);

  // The name of rotated file `n` (1 = the newest): FILE.n, or FILE.n.gz when compressing.
  std::string rotated_name(int n) const;

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override;

 private:
  void rotate();

  rotation_settings settings_;
  spdlog::details::file_helper file_;
  std::uint64_t size_ = 0;
};

// Compresses `from` into the gzip file `to` (replaced if present). False, with `to` removed, on any failure.
bool gzip_file(const std::string& from, const std::string& to);

}  // namespace rmbus::logging
