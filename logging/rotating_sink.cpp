#include "logging/rotating_sink.hpp"

#include <cstdio>
#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <zlib.h>

namespace rmbus::logging {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view pending_infix = ".pending-";
constexpr std::string_view part_suffix = ".gz.part";

std::string pending_name(const std::string& file, std::uint64_t seq) {
  char digits[24];
  std::snprintf(digits, sizeof digits, "%06llu", static_cast<unsigned long long>(seq));
  return file + std::string(pending_infix) + digits;
}

std::string slot_name(const std::string& file, int n, bool gz) {
  return file + "." + std::to_string(n) + (gz ? ".gz" : "");
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// A non-empty run of at most `max_digits` decimal digits, as a number.
std::optional<std::uint64_t> parse_number(std::string_view s, std::size_t max_digits) {
  if (s.empty() || s.size() > max_digits) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

// What sits beside the live file FILE: rotated places (FILE.n, FILE.n.gz), pending files and .gz.parts.
struct folder_listing {
  std::map<int, std::vector<std::string>> places;  // n -> the forms present
  std::map<std::uint64_t, std::string> pending;    // seq -> FILE.pending-<seq>
  std::map<std::uint64_t, std::string> parts;      // seq -> FILE.pending-<seq>.gz.part
};

folder_listing list_folder(const std::string& file) {
  folder_listing out;
  const fs::path live(file);
  const fs::path folder = live.has_parent_path() ? live.parent_path() : fs::path(".");
  const std::string prefix = live.filename().string() + ".";
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    std::string_view rest = std::string_view(name).substr(prefix.size());
    const std::string path = (folder / name).string();
    const std::string_view pending_word = pending_infix.substr(1);  // "pending-"
    if (rest.substr(0, pending_word.size()) == pending_word) {
      rest.remove_prefix(pending_word.size());
      const bool part = ends_with(rest, part_suffix);
      if (part) rest.remove_suffix(part_suffix.size());
      if (const auto seq = parse_number(rest, 18)) (part ? out.parts : out.pending)[*seq] = path;
      continue;
    }
    if (ends_with(rest, ".gz")) rest.remove_suffix(3);
    // 9 digits at most: no int overflow, and far beyond max_files' bound of 1000.
    if (const auto n = parse_number(rest, 9); n && *n >= 1) out.places[static_cast<int>(*n)].push_back(path);
  }
  return out;
}

// Frees place 1 for a new rotated file: shifts FILE.1 .. up to the first free place (or up to FILE.<max>,
// deleting FILE.<max>, when none is free) and deletes every place beyond max_files.
void make_room(const std::string& file, int max_files) {
  auto listing = list_folder(file);
  auto& places = listing.places;
  std::error_code ec;
  int free = 0;
  for (int k = 1; k <= max_files && free == 0; ++k) {
    if (places.count(k) == 0) free = k;
  }
  if (free == 0) {
    free = max_files;
    for (const auto& p : places[max_files]) fs::remove(p, ec);
  }
  for (int n = free - 1; n >= 1; --n) {
    for (const auto& p : places[n]) fs::rename(p, slot_name(file, n + 1, ends_with(p, ".gz")), ec);
  }
  for (auto it = places.upper_bound(max_files); it != places.end(); ++it) {
    for (const auto& p : it->second) fs::remove(p, ec);
  }
}

}  // namespace

bool gzip_file(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) return false;
  gzFile out = gzopen(to.c_str(), "wb");
  if (out == nullptr) return false;
  std::vector<char> buf(64 * 1024);
  bool ok = true;
  while (ok && in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = in.gcount();
    if (n > 0) ok = gzwrite(out, buf.data(), static_cast<unsigned>(n)) == static_cast<int>(n);
  }
  ok = ok && !in.bad();
  ok = (gzclose(out) == Z_OK) && ok;
  if (!ok) {
    std::error_code ec;
    fs::remove(to, ec);
  }
  return ok;
}

rotating_sink::rotating_sink(rotation_settings settings, before_handling_hook hook)
    : file_name_(settings.file), hook_(std::move(hook)), settings_(std::move(settings)) {
  if (settings_.max_files < 1) {
    throw std::invalid_argument("log file " + file_name_ + ": max_files = " + std::to_string(settings_.max_files) +
                                " is below 1");
  }
  file_.open(file_name_, false);
  size_ = file_.size();
  queue_leftovers();
  worker_ = std::thread([this] { run_worker(); });
}

rotating_sink::~rotating_sink() {
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  queue_changed_.notify_all();
  if (worker_.joinable()) worker_.join();
}

std::string rotating_sink::rotated_name(int n) const {
  std::lock_guard lock(settings_mutex_);
  return slot_name(file_name_, n, settings_.compress);
}

void rotating_sink::reconfigure(const rotation_settings& settings) {
  if (settings.file != file_name_) {
    throw std::invalid_argument("log sink of " + file_name_ + " cannot switch to " + settings.file +
                                ": a new file needs a new sink");
  }
  if (settings.max_files < 1) {
    throw std::invalid_argument("log file " + file_name_ + ": max_files = " + std::to_string(settings.max_files) +
                                " is below 1");
  }
  std::lock_guard sink_lock(mutex_);
  std::lock_guard settings_lock(settings_mutex_);
  settings_.max_bytes = settings.max_bytes;
  settings_.max_files = settings.max_files;
  settings_.compress = settings.compress;
}

bool rotating_sink::wait_idle(std::chrono::milliseconds timeout) {
  std::unique_lock lock(queue_mutex_);
  return queue_changed_.wait_for(lock, timeout, [this] { return queue_.empty(); });
}

void rotating_sink::sink_it_(const spdlog::details::log_msg& msg) {
  spdlog::memory_buf_t formatted;
  formatter_->format(msg, formatted);
  if (size_ > 0 && size_ + formatted.size() > settings_.max_bytes) rotate();
  file_.write(formatted);
  size_ += formatted.size();
}

void rotating_sink::flush_() { file_.flush(); }

// Under the sink's lock: only renames and reopens; the background thread does the rest.
void rotating_sink::rotate() {
  {
    std::unique_lock lock(queue_mutex_);
    queue_changed_.wait(lock, [this] { return queue_.size() < max_pending; });
  }
  file_.close();
  const std::string pending = pending_name(file_name_, next_seq_);
  std::error_code ec;
  fs::rename(file_name_, pending, ec);
  if (ec) {
    std::fprintf(stderr, "rmbus: could not rename %s to %s (%s); writing on in it, next try after max_bytes more\n",
                 file_name_.c_str(), pending.c_str(), ec.message().c_str());
    file_.reopen(false);
    size_ = 0;
    return;
  }
  ++next_seq_;
  {
    std::lock_guard lock(queue_mutex_);
    queue_.push_back(job{pending, settings_.compress, settings_.max_files});
  }
  queue_changed_.notify_all();
  file_.reopen(true);  // after queueing: should it throw, the rotated file is handled all the same
  size_ = 0;
}

void rotating_sink::queue_leftovers() {
  const auto listing = list_folder(file_name_);
  std::error_code ec;
  std::size_t found = 0;
  // A .gz.part without its pending file is complete (the source is deleted only after it): it is the
  // oldest, as the thread handles one file at a time.
  for (const auto& [seq, part] : listing.parts) {
    if (listing.pending.count(seq) != 0) {
      fs::remove(part, ec);  // incomplete, or complete but not yet moved in: redone from its source
    } else {
      queue_.push_back(job{part, true, settings_.max_files});
      ++found;
    }
    next_seq_ = std::max(next_seq_, seq + 1);
  }
  for (const auto& [seq, pending] : listing.pending) {
    queue_.push_back(job{pending, settings_.compress, settings_.max_files});
    ++found;
    next_seq_ = std::max(next_seq_, seq + 1);
  }
  if (found > 0) {
    std::fprintf(stderr, "rmbus: %zu rotated file(s) of %s left by an earlier run are being moved in now\n", found,
                 file_name_.c_str());
  }
}

void rotating_sink::run_worker() {
  std::unique_lock lock(queue_mutex_);
  for (;;) {
    queue_changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to do
    const job next = queue_.front();
    lock.unlock();
    try {
      handle(next);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rmbus: rotating %s failed (%s); it stays as it is\n", next.source.c_str(), e.what());
    }
    lock.lock();
    queue_.pop_front();
    queue_changed_.notify_all();
  }
}

void rotating_sink::handle(const job& j) {
  if (hook_) hook_(j.source);
  const bool complete_part = ends_with(j.source, part_suffix);
  std::string result = j.source;
  bool gz = complete_part;
  bool compress_failed = false;
  if (!complete_part && j.compress) {
    const std::string part = j.source + std::string(part_suffix);
    if (gzip_file(j.source, part)) {
      result = part;
      gz = true;
    } else {
      compress_failed = true;
    }
  }
  make_room(file_name_, j.max_files);
  std::error_code ec;
  if (result != j.source) fs::remove(j.source, ec);
  const std::string target = slot_name(file_name_, 1, gz);
  fs::rename(result, target, ec);
  if (ec) {
    std::fprintf(stderr, "rmbus: could not rename %s to %s (%s); it stays as it is\n", result.c_str(), target.c_str(),
                 ec.message().c_str());
  } else if (compress_failed) {
    std::fprintf(stderr, "rmbus: could not compress %s into %s; kept it uncompressed as %s\n", j.source.c_str(),
                 slot_name(file_name_, 1, true).c_str(), target.c_str());
  }
}

}  // namespace rmbus::logging
