#pragma once
// A spdlog sink writing one log file, rotated by size and count, the older files optionally gzip-compressed
// (Maui's Logger module).
//
// Rotation: when a record would take the live file past `max_bytes` (and the file is not empty), the live
// file FILE is renamed to FILE.pending-<seq> and a new, empty FILE is opened: that is all a logging thread
// waits for. A record longer than max_bytes is still written whole, into a file of its own.
//
// One background thread owned by the sink (started by the constructor) then takes the pending files in the order they were rotated
// (FIFO) and, for each: with `compress`, gzips it into FILE.pending-<seq>.gz.part; shifts the rotated files
// up one place (FILE.1 -> FILE.2 ..., deleting what would land past FILE.<max_files>); and moves the result
// in as FILE.1.gz (FILE.1 without `compress`). FILE.1[.gz] is thus always the newest rotated file and
// FILE.<max_files>[.gz] the oldest kept, however far compression lags behind rotation. Place n is taken by
// FILE.n or FILE.n.gz, whichever exists, so files rotated before a change of `compress` keep their place.
// The shift fills the first free place (a gap left by a crash is not pushed along), and deletes every
// FILE.n[.gz] beyond max_files, so lowering max_files drops the excess oldest files at the next rotation.
// The settings a file is handled with (compress, max_files) are the ones in force when it was rotated.
//
// At most `max_pending` rotated files wait for the thread (the one being handled included); a rotation
// finding them all taken waits for one to be done, so a logger outrunning gzip for that long is slowed to
// gzip's pace rather than filling the disk with pending files.
//
// Should compression fail (disk full), the file is moved in uncompressed as FILE.1, rather than lost, and
// the failure is reported on stderr: a sink cannot log through its own logger. Should the live file not
// be renamable, writing goes on in it (past max_bytes) and stderr says so; should a handled file not be
// renamable into place, it stays under its pending name (picked up at the next start) and stderr says so.
//
// Names and crashes: `FILE.pending-<seq>` (seq: a decimal counter, zero-padded to 6 digits) and
// `FILE.pending-<seq>.gz.part` are never a finished rotated file, which is always exactly FILE.<n> or
// FILE.<n>.gz. The source is deleted only after its .gz.part is complete and the shift is done, and the
// .gz.part becomes FILE.1.gz by one rename. So after a crash the folder may hold pending files (each
// possibly beside its .gz.part, complete or not) and at most one complete .gz.part whose pending file is
// gone (older than every pending file, as the thread handles one file at a time). The
// constructor picks these up, the lone complete .gz.part first, then the pending files by seq (oldest
// first); it deletes the .gz.part of a pending file that still exists (it is redone from the source) and
// queues everything else for the thread as if just rotated, with the current settings: nothing is
// deleted that holds the only copy of a record. New rotations continue the seq after the highest found.
//
// Thread-safety: spdlog's base_sink<std::mutex> serialises every call; `reconfigure`, `rotated_name` and
// `wait_idle` may be called from any thread. The destructor lets the thread finish its queue, then joins.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

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
  // Rotated files waiting for the background thread, at most (the one being handled included).
  static constexpr std::size_t max_pending = 8;

  // Called on the background thread with a pending file's path before it is handled: a seam for tests,
  // which hold it to show that logging goes on while a file waits or is being compressed.
  using before_handling_hook = std::function<void(const std::string& pending_file)>;

  // Opens (appends to) settings.file and queues any pending leftovers of a crashed run; throws
  // spdlog::spdlog_ex naming the file when it cannot be opened, std::invalid_argument on max_files below 1.
  explicit rotating_sink(rotation_settings settings, before_handling_hook hook = {});
  ~rotating_sink() override;
  rotating_sink(const rotating_sink&) = delete;
  rotating_sink& operator=(const rotating_sink&) = delete;

  // The name of rotated file `n` (1 = the newest) under the current settings: FILE.n, or FILE.n.gz when
  // compressing.
  std::string rotated_name(int n) const;

  // Applies new max_bytes, max_files and compress to the live sink: max_bytes from the next record, the
  // others from the next rotation (files already pending keep the settings they were rotated with).
  // Throws std::invalid_argument, changing nothing, if settings.file is not this sink's file (reopening is
  // another sink's job) or max_files is below 1.
  void reconfigure(const rotation_settings& settings);

  // Waits until every rotated file has been handled, at most `timeout`; true if they all were.
  bool wait_idle(std::chrono::milliseconds timeout);

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override;

 private:
  // One rotated file for the background thread: `source` is a pending file, or (crash leftover) an
  // already complete .gz.part; compress and max_files as at its rotation.
  struct job {
    std::string source;
    bool compress;
    int max_files;
  };

  void rotate();
  void queue_leftovers();
  void run_worker();
  void handle(const job& j);

  const std::string file_name_;
  const before_handling_hook hook_;

  // Guarded by base_sink's mutex_ (writers also hold settings_mutex_, so rotated_name needs only that).
  rotation_settings settings_;
  mutable std::mutex settings_mutex_;
  spdlog::details::file_helper file_;
  std::uint64_t size_ = 0;
  std::uint64_t next_seq_ = 1;

  // The background thread's queue; the front job stays queued while it is handled.
  std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::deque<job> queue_;
  bool stopping_ = false;
  std::thread worker_;
};

// Compresses `from` into the gzip file `to` (replaced if present). False, with `to` removed, on any failure.
bool gzip_file(const std::string& from, const std::string& to);

}  // namespace rmbus::logging
