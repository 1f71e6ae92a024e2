#pragma once
// What the CURVE end-to-end tests share: making keys with the real rmbus-keygen, reading a log file whole, and
// waiting (bounded) for a condition on a log or on what the cluster observed.

#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/child_process.hpp"

#ifndef RMBUS_KEYGEN_BIN
#error "RMBUS_KEYGEN_BIN must name the rmbus-keygen executable"
#endif

namespace rmbus::e2e {

inline std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs rmbus-keygen with `args`; the test stops unless it succeeds.
inline void keygen(const std::vector<std::string>& args) {
  const auto r = test_support::run_to_end(RMBUS_KEYGEN_BIN, args, std::chrono::seconds(30));
  INFO(r.output);
  REQUIRE(r.status == std::optional<int>{0});
}

// Polls `pred` every 100 ms until it holds or `timeout` passes.
inline bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

}  // namespace rmbus::e2e
