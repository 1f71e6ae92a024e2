#pragma once
// What the CURVE end-to-end tests share: making keys with the real rmbus-keygen, and (tests/e2e/file_waits.hpp)
// reading a log file whole and waiting (bounded) for a condition on a log or on what the cluster observed.

#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/e2e/file_waits.hpp"
#include "tests/support/child_process.hpp"

#ifndef RMBUS_KEYGEN_BIN
#error "RMBUS_KEYGEN_BIN must name the rmbus-keygen executable"
#endif

namespace rmbus::e2e {

// Runs rmbus-keygen with `args`; the test stops unless it succeeds.
inline void keygen(const std::vector<std::string>& args) {
  const auto r = test_support::run_to_end(RMBUS_KEYGEN_BIN, args, std::chrono::seconds(30));
  INFO(r.output);
  REQUIRE(r.status == std::optional<int>{0});
}

}  // namespace rmbus::e2e
