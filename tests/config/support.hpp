#pragma once
// Helpers shared by the configuration tests: where the fixtures live, a scratch directory for files a test
// writes itself, and a matcher-like check that a config_error holds an issue at a given file and line whose
// message contains a given phrase.

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "config/config_error.hpp"
#include "tests/support/scratch_folder.hpp"

namespace rmbus::config::test {

inline std::filesystem::path data_dir() { return std::filesystem::path(RMBUS_CONFIG_TEST_DATA); }

// A fresh directory under the system temp dir, removed with its contents when the object dies.
class scratch_dir {
 public:
  const std::filesystem::path& path() const { return folder_.path(); }
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    auto p = path() / name;
    std::ofstream(p) << text;
    return p;
  }

 private:
  rmbus::test_support::scratch_folder folder_{"rmbus-config"};
};

// True when `e` holds an issue in a file whose name ends with `file`, at `line`, whose message contains
// `phrase`. On failure the whole error is printed by the caller's INFO.
inline bool has_issue(const config_error& e, const std::string& file, int line, const std::string& phrase) {
  for (const auto& issue : e.issues()) {
    if (issue.file.ends_with(file) && issue.line == line && issue.message.find(phrase) != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace rmbus::config::test

// Runs `expr`, requires it to throw config_error, and checks the issue (file suffix, line, phrase).
#define RMBUS_CHECK_CONFIG_ERROR(expr, file, line, phrase)                                  \
  do {                                                                                      \
    bool rmbus_thrown_ = false;                                                             \
    try {                                                                                   \
      (void)(expr);                                                                         \
    } catch (const ::rmbus::config::config_error& rmbus_e_) {                               \
      rmbus_thrown_ = true;                                                                 \
      INFO("config_error was:\n" << rmbus_e_.what());                                       \
      CHECK(::rmbus::config::test::has_issue(rmbus_e_, (file), (line), (phrase)));          \
    }                                                                                       \
    if (!rmbus_thrown_) FAIL_CHECK("expected a config_error from " #expr);                 \
  } while (false)
