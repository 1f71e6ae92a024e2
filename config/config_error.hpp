#pragma once
// How configuration problems are reported. A file that came from outside is never trusted: every problem found
// while reading it becomes a config_issue naming the file, the line (1-based; 0 when the problem concerns the
// file as a whole, such as "cannot be read") and what is wrong, in words a site administrator can act on.
//
// Readers do not stop at the first problem: they collect every issue they can find into an error_list and
// throw one config_error holding all of them at the end, so `rmbus --check-config` shows a site everything that
// needs fixing in one run. what() joins the issues one per line as "file:line: message".
//
// Thread-safety: plain values; an error_list is used by one reader at a time.

#include <stdexcept>
#include <string>
#include <vector>

namespace rmbus::config {

// Where something was written: the file as it was named to the reader, and the 1-based line (0 = whole file).
struct source_loc {
  std::string file;
  int line = 0;

  bool operator==(const source_loc&) const = default;
};

struct config_issue {
  std::string file;
  int line = 0;
  std::string message;

  // "file:line: message", or "file: message" when line is 0.
  std::string to_string() const;
  bool operator==(const config_issue&) const = default;
};

class config_error : public std::runtime_error {
 public:
  // REQUIRES: !issues.empty()
  explicit config_error(std::vector<config_issue> issues);

  const std::vector<config_issue>& issues() const { return issues_; }
  // The first issue, for callers that report one problem at a time.
  const std::string& file() const { return issues_.front().file; }
  int line() const { return issues_.front().line; }
  const std::string& message() const { return issues_.front().message; }

 private:
  std::vector<config_issue> issues_;
};

// Collects issues while a reader keeps going, then throws them together.
class error_list {
 public:
  void add(const source_loc& where, std::string message);
  void add(std::string file, int line, std::string message);
  bool empty() const { return issues_.empty(); }
  std::size_t size() const { return issues_.size(); }
  const std::vector<config_issue>& issues() const { return issues_; }
  // Throws config_error holding every collected issue, if there is any.
  void throw_if_any() const;

 private:
  std::vector<config_issue> issues_;
};

}  // namespace rmbus::config
