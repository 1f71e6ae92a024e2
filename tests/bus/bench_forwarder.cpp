// bench_forwarder: messages per second through bus::forwarder over tcp loopback, CURVE off and on, and with
// heartbeat shedding on.
//
//   bench_forwarder [MESSAGES] [RUNS]     (defaults 200000 and 3; prints each run and the median)
//
// One raw PUB socket sends MESSAGES two-frame messages (topic agent.heartbeat, 200-byte body) as fast as it
// can into the forwarder's XSUB side; one SUB socket on its XPUB side counts them. The HWMs are raised above
// MESSAGES so nothing is dropped and every message is timed: the figure is MESSAGES divided by the time from
// the first message received to the last. With CURVE, every socket encrypts and the forwarder checks each
// message's topic against its sender's roles (the agent key may publish agent.heartbeat).
// With shedding (as rmbus configures it: the node name peeked from each heartbeat, a gap of 1 ms), the bodies
// are real heartbeats of 10,000 nodes in turn, so every message is peeked and looked up and none is a repeat
// (a node's next heartbeat comes 10,000 messages later): the cost of the check on messages that all pass.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bus/curve.hpp"
#include "bus/forwarder.hpp"
#include "bus/zap_handler.hpp"
#include "messages/heartbeat.hpp"

using namespace rmbus::bus;
using steady = std::chrono::steady_clock;

namespace {

enum class mode { plain, curve, shed };

double run_once(mode m_, int messages) {
  const bool curve = m_ == mode::curve;
  zmq::context_t ctx;
  const auto server = make_curve_keypair();
  const auto agent = make_curve_keypair();
  const auto monitor = make_curve_keypair();
  std::optional<zap_handler> zap;
  if (curve) {
    zap.emplace(ctx, std::vector<allowed_key>{{agent.public_key, "agent", roles::agent},
                                              {monitor.public_key, "monitor", roles::monitor}});
    zap->start();
  }
  forwarder_options fo;
  fo.pub_endpoint = "tcp://127.0.0.1:0";
  fo.sub_endpoint = "tcp://127.0.0.1:0";
  fo.hwm = messages + 10000;
  if (curve) fo.curve = server;
  if (m_ == mode::shed)
    fo.shed = repeat_shedding{"agent.heartbeat",
                              [](std::string_view body) { return rmbus::messages::peek_heartbeat_node(body); },
                              std::chrono::milliseconds(1)};
  forwarder fwd{ctx, fo};
  fwd.start();

  zmq::socket_t sub{ctx, zmq::socket_type::sub};
  zmq::socket_t pub{ctx, zmq::socket_type::pub};
  sub.set(zmq::sockopt::rcvhwm, messages + 10000);
  pub.set(zmq::sockopt::sndhwm, messages + 10000);
  sub.set(zmq::sockopt::linger, 0);
  pub.set(zmq::sockopt::linger, 0);
  if (curve) {
    apply_curve_client(sub, {server.public_key, monitor});
    apply_curve_client(pub, {server.public_key, agent});
  }
  sub.set(zmq::sockopt::subscribe, "agent.");
  sub.connect(fwd.sub_endpoint());
  pub.connect(fwd.pub_endpoint());

  const std::string topic = "agent.heartbeat";
  std::vector<std::string> bodies;
  if (m_ == mode::shed) {
    rmbus::messages::envelope env{1, 1, 1700000000000, "bench-agents"};
    for (int n = 0; n < 10000; ++n) {
      rmbus::messages::heartbeat hb{"node" + std::to_string(100000 + n), "10.0.0.1", 65536, 131072, false, 32};
      ++env.seq;
      bodies.push_back(rmbus::messages::encode(env, hb));
    }
  } else {
    bodies.emplace_back(200, 'x');
  }
  const std::string warm = "warm";
  // Past the slow-joiner window: send a marker until one arrives.
  for (bool arrived = false; !arrived;) {
    pub.send(zmq::buffer(topic), zmq::send_flags::sndmore);
    pub.send(zmq::buffer(warm), zmq::send_flags::none);
    zmq::pollitem_t items[] = {{sub.handle(), 0, ZMQ_POLLIN, 0}};
    if (zmq::poll(items, 1, std::chrono::milliseconds(20)) > 0) arrived = true;
  }
  // Drain the markers.
  for (;;) {
    zmq::message_t m;
    if (!sub.recv(m, zmq::recv_flags::dontwait)) {
      zmq::pollitem_t items[] = {{sub.handle(), 0, ZMQ_POLLIN, 0}};
      if (zmq::poll(items, 1, std::chrono::milliseconds(50)) == 0) break;
    }
  }

  steady::time_point first{};
  steady::time_point last{};
  int received = 0;
  std::thread receiver([&] {
    zmq::message_t m;
    const auto deadline = steady::now() + std::chrono::seconds(30);
    while (received < messages && steady::now() < deadline) {
      zmq::pollitem_t items[] = {{sub.handle(), 0, ZMQ_POLLIN, 0}};
      if (zmq::poll(items, 1, std::chrono::milliseconds(100)) == 0) continue;
      while (sub.recv(m, zmq::recv_flags::dontwait)) {
        if (m.more()) continue;                 // count whole messages at their last frame
        if (m.size() == warm.size()) continue;  // a late marker
        if (received == 0) first = steady::now();
        ++received;
        last = steady::now();
      }
    }
  });
  for (int i = 0; i < messages; ++i) {
    pub.send(zmq::buffer(topic), zmq::send_flags::sndmore);
    pub.send(zmq::buffer(bodies[static_cast<std::size_t>(i) % bodies.size()]), zmq::send_flags::none);
  }
  receiver.join();
  pub.close();
  sub.close();
  fwd.stop();
  if (zap) zap->stop();
  if (fwd.shed() > 0) std::fprintf(stderr, "  %llu messages shed\n", static_cast<unsigned long long>(fwd.shed()));
  if (received < messages) {
    std::fprintf(stderr, "  only %d of %d messages arrived\n", received, messages);
    return 0;
  }
  const double seconds = std::chrono::duration<double>(last - first).count();
  return seconds > 0 ? messages / seconds : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int messages = argc > 1 ? std::atoi(argv[1]) : 200000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  if (messages < 1 || messages > 5'000'000 || runs < 1 || runs > 15) {
    std::fprintf(stderr, "usage: bench_forwarder [MESSAGES 1..5000000] [RUNS 1..15]\n");
    return 2;
  }
  for (const mode m : {mode::plain, mode::shed, mode::curve}) {
    const char* name = m == mode::plain ? "CURVE off" : m == mode::shed ? "CURVE off, shedding on" : "CURVE on";
    std::vector<double> rates;
    for (int r = 0; r < runs; ++r) {
      rates.push_back(run_once(m, messages));
      std::printf("  %s run %d: %.0f messages/s\n", name, r + 1, rates.back());
    }
    std::sort(rates.begin(), rates.end());
    std::printf("%s median of %d: %.0f messages/s (%d messages, %s, tcp loopback)\n", name, runs,
                rates[rates.size() / 2], messages, m == mode::shed ? "heartbeats of 10,000 nodes" : "200-byte bodies");
  }
  return 0;
}
