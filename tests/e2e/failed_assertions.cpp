// A Catch2 listener that counts failed assertions (tests/e2e/failed_assertions.hpp). It lives in the fixture
// library's object file that the fixtures call into, so every end-to-end test executable registers it.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include "tests/e2e/failed_assertions.hpp"

#include <atomic>

#include <catch2/catch.hpp>

namespace rmbus::e2e {
namespace {

// Catch2 reports assertions to listeners, which it makes itself: the count is what they can share.
std::atomic<std::uint64_t> failed_count{0};

struct failure_counter : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void assertionStarting(const Catch::AssertionInfo&) override {}
  bool assertionEnded(const Catch::AssertionStats& stats) override {
    if (!stats.assertionResult.isOk()) ++failed_count;
    return true;
  }
};

CATCH_REGISTER_LISTENER(failure_counter)

}  // namespace

std::uint64_t failed_assertions() { return failed_count.load(); }

}  // namespace rmbus::e2e
