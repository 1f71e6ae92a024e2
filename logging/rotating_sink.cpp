#include "logging/rotating_sink.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include <zlib.h>

namespace rmbus::logging {

namespace fs = std::filesystem;

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

rotating_sink::rotating_sink(rotation_settings settings) : settings_(std::move(settings)) {
  file_.open(settings_.file, false);
  size_ = file_.size();
}

std::string rotating_sink::rotated_name(int n) const {
  return settings_.file + "." + std::to_string(n) + (settings_.compress ? ".gz" : "");
}

void rotating_sink::sink_it_(const spdlog::details::log_msg& msg) {
  spdlog::memory_buf_t formatted;
  formatter_->format(msg, formatted);
  if (size_ > 0 && size_ + formatted.size() > settings_.max_bytes) rotate();
  file_.write(formatted);
  size_ += formatted.size();
}

void rotating_sink::flush_() { file_.flush(); }

void rotating_sink::rotate() {
  file_.close();
  std::error_code ec;
  fs::remove(rotated_name(settings_.max_files), ec);
  for (int n = settings_.max_files - 1; n >= 1; --n) {
    if (fs::exists(rotated_name(n), ec)) fs::rename(rotated_name(n), rotated_name(n + 1), ec);
  }
  bool done = false;
  if (settings_.compress) {
    done = gzip_file(settings_.file, rotated_name(1));
    if (done) {
      fs::remove(settings_.file, ec);
    } else {
      std::fprintf(stderr, "rmbus: could not compress %s into %s; kept it uncompressed as %s.1\n",
                   settings_.file.c_str(), rotated_name(1).c_str(), settings_.file.c_str());
    }
  }
  if (!done) fs::rename(settings_.file, settings_.file + ".1", ec);
  file_.reopen(true);
  size_ = 0;
}

}  // namespace rmbus::logging
