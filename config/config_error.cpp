#include "config/config_error.hpp"

#include <utility>

namespace rmbus::config {

namespace {

std::string join_issues(const std::vector<config_issue>& issues) {
  std::string text;
  for (const auto& issue : issues) {
    if (!text.empty()) text += '\n';
    text += issue.to_string();
  }
  return text;
}

}  // namespace

std::string config_issue::to_string() const {
  if (line > 0) return file + ":" + std::to_string(line) + ": " + message;
  return file + ": " + message;
}

config_error::config_error(std::vector<config_issue> issues)
    : std::runtime_error(join_issues(issues)), issues_(std::move(issues)) {}

void error_list::add(const source_loc& where, std::string message) {
  issues_.push_back({where.file, where.line, std::move(message)});
}

void error_list::add(std::string file, int line, std::string message) {
  issues_.push_back({std::move(file), line, std::move(message)});
}

void error_list::throw_if_any() const {
  if (!issues_.empty()) throw config_error(issues_);
}

}  // namespace rmbus::config
