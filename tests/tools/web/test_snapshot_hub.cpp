// The hand-over from rmbus-web's snapshot builder to its event streams: a stream gets the newest snapshot
// (skipping any it missed), a health tick only when no newer snapshot is waiting, and nothing blocks past its
// timeout or past close().
#include <catch2/catch.hpp>

#include <thread>

#include "tools/web/snapshot_hub.hpp"

using rmbus::web::snapshot_hub;
using namespace std::chrono_literals;

namespace {
snapshot_hub::text text(const char* s) { return std::make_shared<const std::string>(s); }
}  // namespace

TEST_CASE("snapshot_hub: a stream gets the newest snapshot and skips the ones it missed", "[web][hub]") {
  snapshot_hub hub;
  snapshot_hub::cursor seen;
  CHECK(hub.wait(seen, 1ms).body == nullptr);  // nothing yet: the timeout passes
  hub.publish_snapshot(text("s1"));
  hub.publish_snapshot(text("s2"));
  auto n = hub.wait(seen, 1ms);
  REQUIRE(n.body);
  CHECK(*n.body == "s2");
  CHECK(n.snapshot);
  CHECK(hub.wait(seen, 1ms).body == nullptr);  // nothing newer
  CHECK(*hub.latest_snapshot() == "s2");
}

TEST_CASE("snapshot_hub: a health tick goes out only when no newer snapshot carries it", "[web][hub]") {
  snapshot_hub hub;
  snapshot_hub::cursor seen;
  hub.publish_health(text("h1"));
  hub.publish_snapshot(text("s1"));
  auto n = hub.wait(seen, 1ms);
  CHECK(*n.body == "s1");  // the snapshot has the health in it: h1 is not sent after it
  CHECK(hub.wait(seen, 1ms).body == nullptr);
  hub.publish_health(text("h2"));
  n = hub.wait(seen, 1ms);
  REQUIRE(n.body);
  CHECK(*n.body == "h2");
  CHECK_FALSE(n.snapshot);
}

TEST_CASE("snapshot_hub: close wakes a waiting stream at once", "[web][hub]") {
  snapshot_hub hub;
  snapshot_hub::cursor seen;
  std::thread closer([&] {
    std::this_thread::sleep_for(50ms);  // the waiter is then (almost surely) inside wait()
    hub.close();
  });
  // Ten minutes: if close() did not wake the waiter, the test's ctest timeout (30 s) fails it.
  const auto n = hub.wait(seen, 600s);
  closer.join();
  CHECK(n.closed);
  CHECK(n.body == nullptr);
}
