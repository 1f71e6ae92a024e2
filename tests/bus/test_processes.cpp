// The bus across real processes over tcp loopback: a peer process talking through an embedded forwarder,
// and the standalone rmbus-proxy executable, started, used and stopped by SIGTERM.

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <zmq.hpp>

#include "bus/curve.hpp"
#include "bus/forwarder.hpp"
#include "bus/publisher.hpp"
#include "bus/subscriber.hpp"
#include "messages/rm_event.hpp"
#include "tests/bus/support.hpp"

using namespace rmbus;
using namespace rmbus::bus;
using namespace rmbus::bus::testing;

namespace {

messages::rm_event numbered(std::string kind, std::uint64_t n) {
  return messages::rm_event{std::move(kind), {{"n", std::to_string(n)}}};
}

std::uint64_t n_of(const bus_message& m) {
  auto e = messages::decode_rm_event(m.topic, m.body);
  REQUIRE(e.ok());
  return std::stoull(e.value().detail.at("n"));
}

}  // namespace

TEST_CASE("two processes exchange messages over tcp loopback through the forwarder") {
  zmq::context_t ctx;
  forwarder_options fo;
  fo.pub_endpoint = "tcp://127.0.0.1:0";
  fo.sub_endpoint = "tcp://127.0.0.1:0";
  forwarder fwd{ctx, fo};
  fwd.start();

  inbox in;
  subscriber_options so;
  so.endpoint = fwd.sub_endpoint();
  so.topics = {"test.from_peer."};
  so.poll_interval = 20ms;
  subscriber sub{ctx, so, in.handlers()};
  sub.start();
  publisher_options po;
  po.name = "test-parent";
  po.endpoint = fwd.pub_endpoint();
  publisher pub{ctx, po};

  constexpr std::uint64_t count = 500;
  child_process peer{
      {BUS_PEER_PATH, fwd.pub_endpoint(), fwd.sub_endpoint(), std::to_string(count), "peer-1"}};

  // The peer says hello until it hears from us: then our subscription has reached it through the forwarder.
  REQUIRE(in.wait_count("test.from_peer.hello", 1, 20s));
  // We ping until its data starts: then our publications reach it too.
  REQUIRE(send_until_arrived(
      [&] {
        pub.publish("test.to_peer", messages::rm_event{"ping", {}});
      },
      [&](auto t) { return in.wait_count("test.from_peer.data", 1, t); }));
  REQUIRE(in.wait_count("test.from_peer.data", count, 20s));

  // The whole series, in order: payload n and envelope seq both 1..count, from the peer's name.
  const auto data = in.on_topic("test.from_peer.data");
  REQUIRE(data.size() == count);
  for (std::size_t i = 0; i < data.size(); ++i) {
    CHECK(data[i].env.seq == i + 1);
    CHECK(n_of(data[i]) == i + 1);
    CHECK(data[i].env.src == "peer-1");
  }

  // Requests one way, echoes the other.
  constexpr std::uint64_t requests = 50;
  for (std::uint64_t n = 1; n <= requests; ++n) pub.publish("test.to_peer", numbered("req", n));
  REQUIRE(in.wait_count("test.from_peer.rep", requests, 20s));
  const auto reps = in.on_topic("test.from_peer.rep");
  for (std::size_t i = 0; i < reps.size(); ++i) {
    CHECK(reps[i].env.seq == i + 1);
    CHECK(n_of(reps[i]) == i + 1);
  }

  pub.publish("test.to_peer", messages::rm_event{"bye", {}});
  // The peer exits 0 only if it saw no gap on test.to_peer.
  const auto code = peer.wait_exit(20s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);

  const auto st = sub.stats();
  CHECK(st.gaps == 0);
  CHECK(st.missing == 0);
  CHECK(st.restarts == 0);
  CHECK(st.bad_messages == 0);
  CHECK(st.by_topic.at("test.from_peer.data") == count);
  CHECK(st.by_topic.at("test.from_peer.rep") == requests);
}

TEST_CASE("rmbus-proxy forwards between processes and exits 0 on SIGTERM") {
  zmq::context_t ctx;
  // The ports are free a moment before the proxy binds them; if another process takes one meanwhile the
  // proxy exits at once and we try again with new ports.
  for (int attempt = 1; attempt <= 3; ++attempt) {
    const int pub_port = free_loopback_port();
    int sub_port = free_loopback_port();
    if (sub_port == pub_port) sub_port = free_loopback_port();
    const std::string pub_ep = "tcp://127.0.0.1:" + std::to_string(pub_port);
    const std::string sub_ep = "tcp://127.0.0.1:" + std::to_string(sub_port);
    child_process proxy{{RMBUS_PROXY_PATH, "--bus-pub", pub_ep, "--bus-sub", sub_ep, "--log-level", "warn"}};

    inbox in;
    subscriber_options so;
    so.endpoint = sub_ep;
    so.topics = {"proxy."};
    so.poll_interval = 20ms;
    subscriber sub{ctx, so, in.handlers()};
    sub.start();
    publisher_options po;
    po.name = "proxy-test";
    po.endpoint = pub_ep;
    publisher pub{ctx, po};

    bool proxy_died = false;
    const bool warm = send_until_arrived([&] { pub.publish("proxy.warm", numbered("warm", 0)); },
                                         [&](auto t) {
                                           if (proxy.wait_exit(0ms).has_value()) {
                                             proxy_died = true;
                                             return true;  // stop waiting: it could not bind
                                           }
                                           return in.wait_count("proxy.warm", 1, t);
                                         });
    if (proxy_died) {
      WARN("rmbus-proxy exited early (port taken?), attempt " << attempt);
      continue;
    }
    REQUIRE(warm);

    constexpr std::uint64_t count = 100;
    for (std::uint64_t n = 1; n <= count; ++n) pub.publish("proxy.data", numbered("data", n));
    REQUIRE(in.wait_count("proxy.data", count, 20s));
    const auto data = in.on_topic("proxy.data");
    for (std::size_t i = 0; i < data.size(); ++i) {
      CHECK(data[i].env.seq == i + 1);
      CHECK(n_of(data[i]) == i + 1);
    }
    CHECK(sub.stats().gaps == 0);

    proxy.send_signal(SIGTERM);
    const auto code = proxy.wait_exit(20s);
    REQUIRE(code.has_value());
    CHECK(*code == 0);
    return;
  }
  FAIL("rmbus-proxy could not bind free ports in 3 attempts");
}

TEST_CASE("rmbus-proxy refuses an unknown log level instead of silently logging nothing") {
  child_process proxy{{RMBUS_PROXY_PATH, "--bus-pub", "tcp://127.0.0.1:0", "--bus-sub", "tcp://127.0.0.1:0",
                       "--log-level", "LOUD"}};
  const auto code = proxy.wait_exit(20s);
  REQUIRE(code.has_value());
  CHECK(*code != 0);
  CHECK(*code < 128);  // an orderly exit with an error, not a crash
}

TEST_CASE("rmbus-proxy refuses a list of endpoints: it is one forwarder") {
  child_process proxy{{RMBUS_PROXY_PATH, "--bus-pub", "tcp://127.0.0.1:0,tcp://127.0.0.1:0", "--bus-sub",
                       "tcp://127.0.0.1:0"}};
  const auto code = proxy.wait_exit(20s);
  REQUIRE(code.has_value());
  CHECK(*code != 0);
  CHECK(*code < 128);  // a usage error, not a crash
}

TEST_CASE("a forwarder reports a busy endpoint at construction, and stop is safe in any state") {
  zmq::context_t ctx;
  forwarder_options fo;
  fo.pub_endpoint = "tcp://127.0.0.1:0";
  fo.sub_endpoint = "tcp://127.0.0.1:0";
  forwarder first{ctx, fo};
  first.start();
  // A second forwarder on the first one's publish side cannot bind it: the error comes out of the
  // constructor, on the caller's thread, not from a background thread later.
  forwarder_options clash;
  clash.pub_endpoint = first.pub_endpoint();
  clash.sub_endpoint = "tcp://127.0.0.1:0";
  CHECK_THROWS_AS(forwarder(ctx, clash), zmq::error_t);
  // ...naming the endpoint it could not bind, for the operator (issue 17).
  CHECK_THROWS_WITH(forwarder(ctx, clash), Catch::Contains("bus pub endpoint " + first.pub_endpoint() +
                                                           ": cannot bind: Address already in use"));
  first.stop();
  first.stop();  // idempotent
  forwarder never_started{ctx, fo};
  never_started.stop();  // closes its sockets without a thread; the context can then be destroyed

  publisher_options nameless;
  nameless.endpoint = "tcp://127.0.0.1:0";
  nameless.mode = attach::bind;
  CHECK_THROWS_AS(publisher(ctx, nameless), std::invalid_argument);
}

TEST_CASE("rmbus-proxy with --key and --keys forwards a listed key's topics only") {
  zmq::context_t ctx;
  const auto dir = std::filesystem::temp_directory_path() / ("rmbus-proxy-curve-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto server = make_curve_keypair();
  const auto agent = make_curve_keypair();
  const auto monitor = make_curve_keypair();
  const auto stranger = make_curve_keypair();
  write_key_file(dir / "proxy.key", server, true);
  std::ofstream(dir / "keys") << keys_file_line({agent.public_key, "node01", roles::agent})
                              << keys_file_line({monitor.public_key, "top", roles::monitor});
  for (int attempt = 1; attempt <= 3; ++attempt) {
    const std::string pub_ep = "tcp://127.0.0.1:" + std::to_string(free_loopback_port());
    const std::string sub_ep = "tcp://127.0.0.1:" + std::to_string(free_loopback_port());
    child_process proxy{{RMBUS_PROXY_PATH, "--bus-pub", pub_ep, "--bus-sub", sub_ep, "--log-level", "warn", "--key",
                         (dir / "proxy.key").string(), "--keys", (dir / "keys").string()}};
    inbox in;
    subscriber_options so;
    so.endpoint = sub_ep;
    so.poll_interval = 20ms;
    so.curve = curve_client{server.public_key, monitor};
    subscriber sub{ctx, so, in.handlers()};
    sub.start();
    auto pub_with = [&](const std::string& name, const curve_keypair& own) {
      publisher_options po;
      po.name = name;
      po.endpoint = pub_ep;
      po.curve = curve_client{server.public_key, own};
      return publisher{ctx, po};
    };
    publisher good = pub_with("good", agent);
    publisher forger = pub_with("forger", agent);
    publisher unknown = pub_with("unknown", stranger);
    bool proxy_died = false;
    const bool warm = send_until_arrived([&] { good.publish("agent.heartbeat", numbered("warm", 0)); },
                                         [&](auto t) {
                                           if (proxy.wait_exit(0ms).has_value()) {
                                             proxy_died = true;
                                             return true;
                                           }
                                           return in.wait_count("agent.heartbeat", 1, t);
                                         });
    if (proxy_died) {
      WARN("rmbus-proxy exited early (port taken?), attempt " << attempt);
      continue;
    }
    REQUIRE(warm);
    // The forger's connection is up once one of its heartbeats arrives; then its forged map is refused.
    REQUIRE(send_until_arrived([&] { forger.publish("agent.heartbeat", numbered("forger-up", 0)); },
                               [&](auto t) {
                                 return in.wait_for([](const auto& msgs, const auto&) {
                                   for (const auto& m : msgs)
                                     if (m.env.src == "forger") return true;
                                   return false;
                                 }, t);
                               }));
    for (std::uint64_t n = 1; n <= 10; ++n) {
      forger.publish("orchestrator.workmap", numbered("forged", n));
      unknown.publish("agent.heartbeat", numbered("unknown", n));
    }
    const auto before = in.on_topic("agent.heartbeat").size();
    good.publish("agent.heartbeat", numbered("last", 1));
    REQUIRE(in.wait_count("agent.heartbeat", before + 1, 20s));
    CHECK(in.on_topic("orchestrator.workmap").empty());
    for (const auto& m : in.on_topic("agent.heartbeat")) CHECK(m.env.src != "unknown");
    sub.stop();
    proxy.send_signal(SIGTERM);
    const auto code = proxy.wait_exit(20s);
    REQUIRE(code.has_value());
    CHECK(*code == 0);
    std::filesystem::remove_all(dir);
    return;
  }
  FAIL("rmbus-proxy could not bind free ports in 3 attempts");
}

TEST_CASE("rmbus-proxy refuses --key without --keys, and a bad keys file with its line") {
  const auto dir = std::filesystem::temp_directory_path() / ("rmbus-proxy-badkeys-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  write_key_file(dir / "proxy.key", make_curve_keypair(), true);
  std::ofstream(dir / "keys") << "agent node01 not-a-key\n";
  child_process alone{{RMBUS_PROXY_PATH, "--bus-pub", "tcp://127.0.0.1:0", "--bus-sub", "tcp://127.0.0.1:0", "--key",
                       (dir / "proxy.key").string()}};
  const auto alone_code = alone.wait_exit(20s);
  REQUIRE(alone_code.has_value());
  CHECK(*alone_code != 0);
  child_process bad{{RMBUS_PROXY_PATH, "--bus-pub", "tcp://127.0.0.1:0", "--bus-sub", "tcp://127.0.0.1:0", "--key",
                     (dir / "proxy.key").string(), "--keys", (dir / "keys").string()}};
  const auto bad_code = bad.wait_exit(20s);
  REQUIRE(bad_code.has_value());
  CHECK(*bad_code == 2);
  std::filesystem::remove_all(dir);
}
