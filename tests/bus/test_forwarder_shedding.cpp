// The forwarder's repeat shedding over real sockets on loopback (bus/forwarder.hpp, options.shed): one key's
// repeats on the shed topic are dropped and counted; other keys, other topics, bodies without a readable key
// and messages of more than two frames pass untouched; a gap of 0 set while running turns it off.

#include <catch2/catch.hpp>
#include <chrono>
#include <iterator>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "bus/curve.hpp"
#include "bus/forwarder.hpp"
#include "bus/zap_handler.hpp"
#include "messages/heartbeat.hpp"

using namespace rmbus;
using namespace std::chrono_literals;

namespace {

std::string heartbeat_of(const std::string& node, std::uint64_t seq) {
  messages::heartbeat hb;
  hb.node = node;
  hb.ip = "10.0.0.1";
  hb.memory_mb = 1024;
  return messages::encode(messages::envelope{1, seq, 1700000000000, "agents"}, hb);
}

// Keys for the CURVE variant: the forwarder's, an agent's (may publish agent.*) and a monitor's (subscribes only).
struct curve_keys {
  bus::curve_keypair server = bus::make_curve_keypair();
  bus::curve_keypair agent = bus::make_curve_keypair();
  bus::curve_keypair monitor = bus::make_curve_keypair();
};

struct bench_bus {
  zmq::context_t ctx;
  std::optional<curve_keys> keys;
  std::optional<bus::zap_handler> zap;
  std::optional<bus::forwarder> fwd_slot;
  bus::forwarder& fwd;
  zmq::socket_t pub{ctx, zmq::socket_type::pub};
  zmq::socket_t sub{ctx, zmq::socket_type::sub};

  explicit bench_bus(std::chrono::milliseconds gap, bool curve = false) : fwd(start(gap, curve)) {
    if (keys) {
      bus::apply_curve_client(pub, {keys->server.public_key, keys->agent});
      bus::apply_curve_client(sub, {keys->server.public_key, keys->monitor});
    }
    pub.set(zmq::sockopt::sndhwm, 100000);
    sub.set(zmq::sockopt::rcvhwm, 100000);
    sub.set(zmq::sockopt::subscribe, "");
    sub.connect(fwd.sub_endpoint());
    pub.connect(fwd.pub_endpoint());
    // Past the slow-joiner window: a marker until one arrives, then drain.
    // Markers are heartbeats of names used once (with CURVE the agent key may publish nothing else).
    for (auto [deadline, n] = std::pair{std::chrono::steady_clock::now() + 10s, 0};; ++n) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      send({"agent.heartbeat", heartbeat_of("warm-" + std::to_string(n), 1)});
      zmq::pollitem_t items[] = {{sub.handle(), 0, ZMQ_POLLIN, 0}};
      if (zmq::poll(items, 1, 20ms) > 0) break;
    }
    receive_until("", 100ms);
  }
  ~bench_bus() {
    pub.close();
    sub.close();
    fwd.stop();
    if (zap) zap->stop();
  }

  bus::forwarder& start(std::chrono::milliseconds gap, bool curve) {
    auto o = options(gap);
    if (curve) {
      keys.emplace();
      zap.emplace(ctx, std::vector<bus::allowed_key>{{keys->agent.public_key, "agents", bus::roles::agent},
                                                     {keys->monitor.public_key, "monitor", bus::roles::monitor}});
      zap->start();
      o.curve = keys->server;
    }
    fwd_slot.emplace(ctx, o);
    fwd_slot->start();
    return *fwd_slot;
  }

  static bus::forwarder_options options(std::chrono::milliseconds gap) {
    bus::forwarder_options o;
    o.pub_endpoint = "tcp://127.0.0.1:0";
    o.sub_endpoint = "tcp://127.0.0.1:0";
    o.shed = bus::repeat_shedding{"agent.heartbeat",
                                  [](std::string_view body) { return messages::peek_heartbeat_node(body); }, gap};
    return o;
  }

  void send(const std::vector<std::string>& frames) {
    for (std::size_t i = 0; i < frames.size(); ++i)
      pub.send(zmq::buffer(frames[i]), i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }

  // Sends an end marker: a heartbeat of a name used once.
  std::string send_end() {
    const std::string name = "end-" + std::to_string(++ends_);
    send({"agent.heartbeat", heartbeat_of(name, 1)});
    return "agent.heartbeat|" + name;
  }

  // Received messages as "topic|key" (or "topic|N frames"), counted, until `end` arrives (or, when `end` is
  // empty, until nothing arrives for `quiet`).
  std::map<std::string, int> receive_until(const std::string& end, std::chrono::milliseconds quiet) {
    std::map<std::string, int> seen;
    for (;;) {
      zmq::pollitem_t items[] = {{sub.handle(), 0, ZMQ_POLLIN, 0}};
      if (zmq::poll(items, 1, end.empty() ? quiet : 10000ms) == 0) {
        if (!end.empty()) FAIL("no end marker within 10 s");
        return seen;
      }
      std::vector<zmq::message_t> frames;
      (void)zmq::recv_multipart(sub, std::back_inserter(frames));
      std::string what = std::to_string(frames.size()) + " frames";
      if (frames.size() == 2)
        what = messages::peek_heartbeat_node(frames[1].to_string_view()).value_or(std::string_view{"(no key)"});
      const std::string entry = frames[0].to_string() + "|" + what;
      if (entry == end) return seen;
      ++seen[entry];
    }
  }
  int ends_ = 0;
};

}  // namespace

TEST_CASE("forwarder sheds one key's repeats on the shed topic and passes everything else") {
  bench_bus b{60s};  // far longer than the test: every message of a key after its burst of 2 is shed
  const std::vector<std::string> nodes{"a1", "a2", "a3", "a4", "b1", "b2"};
  std::uint64_t seq = 0;
  for (int i = 0; i < 600; ++i) {
    b.send({"agent.heartbeat", heartbeat_of("x1", ++seq)});
    if (i % 100 == 50) b.send({"agent.heartbeat", heartbeat_of(nodes[static_cast<std::size_t>(i / 100)], ++seq)});
  }
  for (int i = 0; i < 10; ++i) {
    b.send({"agent.heartbeat", "\xc1junk"});                // no readable key: forwarded unexamined
    b.send({"agent.other", heartbeat_of("x1", ++seq)});     // another topic: never shed
  }
  b.send({"agent.heartbeat", heartbeat_of("x1", ++seq), "third"});  // not [topic, body]: forwarded as it is
  const auto seen = b.receive_until(b.send_end(), 0ms);
  // 600 of x1 offered, the first two forwarded (burst 2, as rmbus uses): 598 shed.
  CHECK(seen.at("agent.heartbeat|x1") == 2);
  for (const auto& n : nodes) CHECK(seen.at("agent.heartbeat|" + n) == 1);
  CHECK(seen.at("agent.heartbeat|(no key)") == 10);
  CHECK(seen.at("agent.other|x1") == 10);
  CHECK(seen.at("agent.heartbeat|3 frames") == 1);
  CHECK(b.fwd.shed() == 598);
}

TEST_CASE("forwarder with CURVE sheds repeats too, after the role check") {
  bench_bus b{60s, true};
  std::uint64_t seq = 0;
  for (int i = 0; i < 100; ++i) b.send({"agent.heartbeat", heartbeat_of("x1", ++seq)});
  b.send({"agent.heartbeat", heartbeat_of("a1", ++seq)});
  b.send({"rm.state", heartbeat_of("x1", ++seq)});  // not the agent role's topic: refused, not shed
  const auto seen = b.receive_until(b.send_end(), 0ms);
  // 100 of x1 offered, the first two forwarded: 98 shed; a1 forwarded; rm.state refused.
  CHECK(seen.at("agent.heartbeat|x1") == 2);
  CHECK(seen.at("agent.heartbeat|a1") == 1);
  CHECK(seen.count("rm.state|x1") == 0);
  CHECK(b.fwd.shed() == 98);
  CHECK(b.fwd.refused() == 1);
}

TEST_CASE("forwarder shedding follows set_shed_gap: 0 turns it off while running") {
  bench_bus b{60s};
  std::uint64_t seq = 0;
  for (int i = 0; i < 50; ++i) b.send({"agent.heartbeat", heartbeat_of("x1", ++seq)});
  auto seen = b.receive_until(b.send_end(), 0ms);
  CHECK(seen.at("agent.heartbeat|x1") == 2);  // the burst of 2; 48 shed
  CHECK(b.fwd.shed() == 48);

  b.fwd.set_shed_gap(0ms);
  for (int i = 0; i < 50; ++i) b.send({"agent.heartbeat", heartbeat_of("x1", ++seq)});
  seen = b.receive_until(b.send_end(), 0ms);
  CHECK(seen.at("agent.heartbeat|x1") == 50);  // every one forwarded
  CHECK(b.fwd.shed() == 48);                   // no more shed
}

TEST_CASE("forwarder options: shedding without key_of is refused, set_shed_gap without shedding does nothing") {
  zmq::context_t ctx;
  bus::forwarder_options o;
  o.pub_endpoint = "tcp://127.0.0.1:0";
  o.sub_endpoint = "tcp://127.0.0.1:0";
  bus::forwarder fwd{ctx, o};
  CHECK(fwd.shed() == 0);
  fwd.set_shed_gap(10ms);  // ignored: no shedding configured
  CHECK(fwd.shed() == 0);
  CHECK_THROWS_AS((bus::forwarder{ctx, [] {
                                     bus::forwarder_options bad;
                                     bad.pub_endpoint = "tcp://127.0.0.1:0";
                                     bad.sub_endpoint = "tcp://127.0.0.1:0";
                                     bad.shed = bus::repeat_shedding{"agent.heartbeat", {}, 10ms};
                                     return bad;
                                   }()}),
                  std::invalid_argument);
}
