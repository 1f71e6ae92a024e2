// bench_subscriber: messages per second that one bus::subscriber hands on, through one forwarder or two
// (docs/bus.md, "Several forwarders"), over tcp loopback.
//
//   bench_subscriber [MESSAGES] [RUNS] [CASES]   (defaults 200000, 5, "one,two"; prints each run and the median)
//
// A raw PUB socket sends MESSAGES heartbeats of 10,000 nodes in turn, each node its own stream (its name is
// the envelope's src, seq counting per node), as fast as it can; the subscriber (frame checks, envelope
// decode, sequence accounting, the handler counting) takes them on its own thread. HWMs are raised above
// MESSAGES so nothing is dropped. The figure is the messages handed on divided by the time from the first
// handed on to the last.
//   one: one forwarder, so no copies: what the sequence accounting costs on plain traffic.
//   two: the PUB and the subscriber connected to two forwarders: every message arrives twice and the
//        subscriber drops one copy of each; the figure counts each message once (arrivals are twice it).
// The same source builds against the subscriber before the duplicate window (it has no endpoint lists: run
// it with the case "one"), which is how docs/performance.md compares the two.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bus/forwarder.hpp"
#include "bus/subscriber.hpp"
#include "messages/heartbeat.hpp"

#if __has_include("bus/endpoint_list.hpp")
#define RMBUS_BENCH_HAS_COPIES 1
#endif

using namespace rmbus::bus;
using steady = std::chrono::steady_clock;

namespace {

struct figures {
  double handed_per_s = 0;
  unsigned long long dropped = 0;
};

figures run_once(int forwarders, int messages) {
  zmq::context_t ctx;
  std::vector<std::unique_ptr<forwarder>> fwd;
  std::string pubs, subs;
  for (int i = 0; i < forwarders; ++i) {
    forwarder_options fo;
    fo.pub_endpoint = "tcp://127.0.0.1:0";
    fo.sub_endpoint = "tcp://127.0.0.1:0";
    fo.hwm = messages + 10000;
    fwd.push_back(std::make_unique<forwarder>(ctx, fo));
    fwd.back()->start();
    pubs += (i ? "," : "") + fwd.back()->pub_endpoint();
    subs += (i ? "," : "") + fwd.back()->sub_endpoint();
  }

  std::atomic<int> handed{0};
  std::atomic<bool> warm_seen{false};
  steady::time_point first{}, last{};
  subscriber_options so;
  so.name = "bench";
  so.endpoint = subs;
  so.topics = {"agent."};
  so.rcvhwm = messages + 10000;
  so.poll_interval = std::chrono::milliseconds(20);
  subscriber_handlers h;
  h.on_message = [&](bus_message&& m) {
    if (m.env.src == "warm") {
      warm_seen = true;
      return;
    }
    const auto now = steady::now();
    if (handed.load(std::memory_order_relaxed) == 0) first = now;
    last = now;
    handed.fetch_add(1, std::memory_order_relaxed);
  };
  subscriber sub{ctx, so, h};
  sub.start();

  zmq::socket_t pub{ctx, zmq::socket_type::pub};
  pub.set(zmq::sockopt::sndhwm, messages + 10000);
  pub.set(zmq::sockopt::linger, 0);
  {
    std::stringstream list(pubs);
    for (std::string ep; std::getline(list, ep, ',');) pub.connect(ep);
  }

  const std::string topic = "agent.heartbeat";
  constexpr int nodes = 10000;
  std::vector<std::string> bodies;
  bodies.reserve(static_cast<std::size_t>(messages));
  for (int i = 0; i < messages; ++i) {
    const auto name = "node" + std::to_string(100000 + i % nodes);
    rmbus::messages::envelope env{1, static_cast<std::uint64_t>(i / nodes + 1),
                                  1700000000000 + static_cast<std::uint64_t>(i), name};
    bodies.push_back(rmbus::messages::encode(env, rmbus::messages::heartbeat{name, "10.0.0.1", 65536, 131072, false, 32}));
  }
  // Past the slow-joiner window of every forwarder: markers (src "warm", seq rising so none is a copy of
  // another... except its own copies) until one arrives, then a pause so the second path's copies land too.
  const auto warm_deadline = steady::now() + std::chrono::seconds(20);
  for (std::uint64_t n = 1; !warm_seen && steady::now() < warm_deadline; ++n) {
    rmbus::messages::envelope env{1, n, 1700000000000 + n, "warm"};
    const auto body = rmbus::messages::encode(env, rmbus::messages::heartbeat{"warm", "10.0.0.1", 1, 1, false, 1});
    pub.send(zmq::buffer(topic), zmq::send_flags::sndmore);
    pub.send(zmq::buffer(body), zmq::send_flags::none);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a benchmark's settling pause, not a test wait
#ifdef RMBUS_BENCH_HAS_COPIES
  const auto dropped_before = sub.stats().duplicates + sub.stats().late;
#endif

  for (const auto& b : bodies) {
    pub.send(zmq::buffer(topic), zmq::send_flags::sndmore);
    pub.send(zmq::buffer(b), zmq::send_flags::none);
  }
  const auto deadline = steady::now() + std::chrono::seconds(60);
  while (handed.load() < messages && steady::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  // The last copies (two forwarders) land after the last message handed on; wait for them so the next run
  // starts clean.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  sub.stop();
  pub.close();
  for (auto& f : fwd) f->stop();
  figures out;
#ifdef RMBUS_BENCH_HAS_COPIES
  out.dropped = sub.stats().duplicates + sub.stats().late - dropped_before;
#endif
  if (handed.load() < messages) {
    std::fprintf(stderr, "  only %d of %d messages handed on\n", handed.load(), messages);
    return out;
  }
  const double seconds = std::chrono::duration<double>(last - first).count();
  out.handed_per_s = seconds > 0 ? messages / seconds : 0;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int messages = argc > 1 ? std::atoi(argv[1]) : 200000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string cases = argc > 3 ? argv[3] : "one,two";
  if (messages < 1 || messages > 5'000'000 || runs < 1 || runs > 15 ||
      (cases != "one" && cases != "two" && cases != "one,two")) {
    std::fprintf(stderr, "usage: bench_subscriber [MESSAGES 1..5000000] [RUNS 1..15] [one|two|one,two]\n");
    return 2;
  }
  for (const int forwarders : {1, 2}) {
    if ((forwarders == 1 && cases == "two") || (forwarders == 2 && cases == "one")) continue;
    std::vector<double> rates;
    for (int r = 0; r < runs; ++r) {
      const auto f = run_once(forwarders, messages);
      rates.push_back(f.handed_per_s);
      std::printf("  %d forwarder(s) run %d: %.0f messages/s handed on (%llu copies dropped)\n", forwarders, r + 1,
                  f.handed_per_s, f.dropped);
    }
    std::sort(rates.begin(), rates.end());
    std::printf("%d forwarder(s): median of %d: %.0f messages/s handed on (%d heartbeats of 10,000 nodes, tcp loopback)\n",
                forwarders, runs, rates[rates.size() / 2], messages);
  }
  return 0;
}
