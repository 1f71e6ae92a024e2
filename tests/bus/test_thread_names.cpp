// The bus's threads carry names (bus/thread_name.hpp), as /proc/PID/task/*/comm shows them to top -H, ps -L
// and perf: a forwarder's and a subscriber's threads are found by name while they run and are gone once
// stopped; a name longer than the kernel keeps is cut, not refused.

#include <catch2/catch.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bus/forwarder.hpp"
#include "bus/subscriber.hpp"
#include "bus/thread_name.hpp"

using namespace rmbus;

namespace {

// The names of this process's threads, one per thread.
std::vector<std::string> thread_names() {
  std::vector<std::string> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    out.push_back(name);
  }
  return out;
}

long count_named(const std::string& name) {
  const auto names = thread_names();
  return std::count(names.begin(), names.end(), name);
}

}  // namespace

TEST_CASE("a forwarder's and a subscriber's threads are named while they run and gone once stopped") {
  zmq::context_t ctx;
  bus::forwarder_options fo;
  fo.pub_endpoint = "tcp://127.0.0.1:0";
  fo.sub_endpoint = "tcp://127.0.0.1:0";
  bus::forwarder fwd(ctx, fo);
  bus::subscriber_options so;
  so.endpoint = fwd.sub_endpoint();
  bus::subscriber sub(ctx, so, {[](bus::bus_message&&) {}, {}, {}});
  REQUIRE(count_named("rmbus-fwd") == 0);
  REQUIRE(count_named("rmbus-sub") == 0);

  fwd.start();
  sub.start();
  // The name is set by the thread itself as it starts: wait for it, bounded.
  for (int i = 0; i < 200 && (count_named("rmbus-fwd") == 0 || count_named("rmbus-sub") == 0); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(count_named("rmbus-fwd") == 1);
  CHECK(count_named("rmbus-sub") == 1);

  sub.stop();
  fwd.stop();
  CHECK(count_named("rmbus-fwd") == 0);
  CHECK(count_named("rmbus-sub") == 0);
}

TEST_CASE("a thread name longer than the kernel keeps is cut to 15 bytes") {
  std::string seen;
  std::thread t([&] {
    bus::name_this_thread("rmbus-a-very-long-thread-name");
    std::ifstream comm("/proc/thread-self/comm");
    std::getline(comm, seen);
  });
  t.join();
  CHECK(seen == "rmbus-a-very-lo");
}
