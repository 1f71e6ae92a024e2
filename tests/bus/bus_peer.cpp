// bus_peer: the other process in the two-process bus test (test_processes.cpp). It connects to a forwarder,
// announces itself until the test answers, publishes a numbered series, then echoes requests until told bye.
//
//   bus_peer PUB_ENDPOINT SUB_ENDPOINT COUNT NAME
//
// Topics: it publishes test.from_peer.hello (until any test.to_peer message arrives), test.from_peer.data
// (COUNT rm_event messages with detail n = 1..COUNT), test.from_peer.rep (one per request, same detail n);
// it subscribes to test.to_peer (kinds ping, req, bye).
// Exit codes: 0 done with no gap seen on test.to_peer; 2 deadline passed; 3 gaps seen; 4 bad arguments.

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <zmq.hpp>

#include "bus/publisher.hpp"
#include "bus/subscriber.hpp"
#include "messages/rm_event.hpp"
#include "tests/bus/support.hpp"

using namespace rmbus;
using namespace rmbus::bus::testing;

int main(int argc, char** argv) {
  if (argc != 5) return 4;
  std::uint64_t count = 0;
  try {
    count = std::stoull(argv[3]);
  } catch (const std::exception&) {
    return 4;
  }
  spdlog::set_level(spdlog::level::warn);
  const auto deadline = steady::now() + std::chrono::seconds{30};

  zmq::context_t ctx;
  bus::publisher_options po;
  po.name = argv[4];
  po.endpoint = argv[1];
  bus::publisher pub{ctx, po};
  bus::subscriber_options so;
  so.endpoint = argv[2];
  so.topics = {"test.to_peer"};
  so.poll_interval = std::chrono::milliseconds{20};
  inbox in;
  bus::subscriber sub{ctx, so, in.handlers()};
  sub.start();

  // Announce until the test's first message shows that both directions are connected and subscribed.
  while (!in.wait_count("test.to_peer", 1, 20ms)) {
    if (steady::now() > deadline) return 2;
    pub.publish("test.from_peer.hello", messages::rm_event{"hello", {}});
  }
  for (std::uint64_t n = 1; n <= count; ++n)
    pub.publish("test.from_peer.data", messages::rm_event{"data", {{"n", std::to_string(n)}}});

  std::size_t handled = 0;
  while (steady::now() < deadline) {
    in.wait_count("test.to_peer", handled + 1, 100ms);
    const auto msgs = in.on_topic("test.to_peer");
    for (; handled < msgs.size(); ++handled) {
      auto ev = messages::decode_rm_event(msgs[handled].topic, msgs[handled].body);
      if (!ev) {
        spdlog::error("bus_peer: {}", ev.error().message());
        continue;
      }
      if (ev.value().kind == "req") {
        pub.publish("test.from_peer.rep", messages::rm_event{"rep", ev.value().detail});
      } else if (ev.value().kind == "bye") {
        sub.stop();
        return sub.stats().gaps == 0 ? 0 : 3;
      }
    }
  }
  return 2;
}
