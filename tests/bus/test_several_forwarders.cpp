// Several forwarders (docs/bus.md, "Several forwarders"): endpoint lists as the command lines and the
// configuration give them, and real sockets on loopback: a publisher connected to two forwarders sends
// through both, a subscriber connected to both hands each message on once, in order, and carries on when one
// forwarder stops.
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bus/endpoint_list.hpp"
#include "bus/forwarder.hpp"
#include "bus/publisher.hpp"
#include "bus/subscriber.hpp"
#include "messages/rm_event.hpp"
#include "tests/bus/support.hpp"

using namespace rmbus;
using namespace rmbus::bus;
using namespace rmbus::bus::testing;

namespace {

messages::rm_event numbered(std::uint64_t n) { return {"test", {{"n", std::to_string(n)}}}; }

std::uint64_t n_of(const bus_message& m) {
  auto e = messages::decode_rm_event(m.topic, m.body);
  REQUIRE(e.ok());
  return std::stoull(e.value().detail.at("n"));
}

std::unique_ptr<forwarder> loopback_forwarder(zmq::context_t& ctx) {
  forwarder_options o;
  o.pub_endpoint = "tcp://127.0.0.1:0";
  o.sub_endpoint = "tcp://127.0.0.1:0";
  auto f = std::make_unique<forwarder>(ctx, o);
  f->start();
  return f;
}

// Dropped copies wake nobody (nothing is handed on), so their count is read until it holds or the deadline
// passes: bounded in time and in reads.
bool eventually(const std::function<bool()>& holds, std::chrono::milliseconds timeout) {
  const auto deadline = steady::now() + timeout;
  for (int reads = 0; reads < 100000 && steady::now() < deadline; ++reads) {
    if (holds()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return holds();
}

// A subscriber of `topics` at `endpoint`, started, delivering to `in`.
std::unique_ptr<subscriber> started_subscriber(zmq::context_t& ctx, std::string name, std::string endpoint,
                                               std::vector<std::string> topics, inbox& in) {
  subscriber_options o;
  o.name = std::move(name);
  o.endpoint = std::move(endpoint);
  o.topics = std::move(topics);
  auto s = std::make_unique<subscriber>(ctx, o, in.handlers());
  s->start();
  return s;
}

std::string what_of(std::string_view list) {
  try {
    split_endpoints(list);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("an endpoint list: one endpoint is a list of one, several are split at commas, blanks ignored") {
  CHECK(split_endpoints("tcp://127.0.0.1:5560") == std::vector<std::string>{"tcp://127.0.0.1:5560"});
  CHECK(split_endpoints("tcp://h1:5560, tcp://h2:5560") == std::vector<std::string>{"tcp://h1:5560", "tcp://h2:5560"});
  CHECK(join_endpoints({"tcp://h1:5560", "ipc:///tmp/x"}) == "tcp://h1:5560,ipc:///tmp/x");
  CHECK_FALSE(endpoint_list_error("tcp://h1:1,tcp://h2:1").has_value());
}

TEST_CASE("a malformed endpoint list is refused with what is wrong") {
  CHECK(what_of("") == "no endpoint given");
  CHECK(what_of("  ") == "no endpoint given");
  CHECK(what_of("tcp://h1:1,") == "empty endpoint in the list 'tcp://h1:1,'");
  CHECK(what_of(",tcp://h1:1") == "empty endpoint in the list ',tcp://h1:1'");
  CHECK(what_of("tcp://h1:1, tcp://h1:1") == "endpoint 'tcp://h1:1' is listed twice");
  std::string seventeen;
  for (int i = 0; i < 17; ++i) seventeen += (i ? "," : "") + std::string{"tcp://h:"} + std::to_string(1000 + i);
  CHECK(what_of(seventeen) == "more than 16 endpoints in one list");
  CHECK(endpoint_list_error("tcp://h1:1,,tcp://h2:1").value() == "empty endpoint in the list 'tcp://h1:1,,tcp://h2:1'");
  // The sockets refuse the same lists before connecting anything.
  zmq::context_t ctx;
  publisher_options po;
  po.name = "p";
  po.endpoint = "tcp://127.0.0.1:1,";
  CHECK_THROWS_AS(publisher(ctx, po), std::invalid_argument);
  subscriber_options so;
  so.endpoint = "tcp://127.0.0.1:1,tcp://127.0.0.1:1";
  inbox in;
  CHECK_THROWS_AS(subscriber(ctx, so, in.handlers()), std::invalid_argument);
}

TEST_CASE("connected to two forwarders: each message handed on once and in order, and when one forwarder stops the other carries on") {
  zmq::context_t ctx;
  auto first = loopback_forwarder(ctx);
  auto second = loopback_forwarder(ctx);
  const auto pubs = first->pub_endpoint() + "," + second->pub_endpoint();
  const auto subs = first->sub_endpoint() + "," + second->sub_endpoint();

  inbox in;
  subscriber_options so;
  so.endpoint = subs;
  so.topics = {"two."};
  so.poll_interval = std::chrono::milliseconds{20};
  subscriber sub{ctx, so, in.handlers()};
  CHECK(sub.endpoint() == subs);
  sub.start();
  publisher_options po;
  po.name = "svc";
  po.endpoint = pubs;
  publisher pub{ctx, po};
  CHECK(pub.endpoint() == pubs);

  // Warm up until a copy has come through the second path too: both forwarders carry our subscription.
  const auto both_paths = [&](std::chrono::milliseconds t) {
    return in.wait_for([&](const auto&, const auto&) { return sub.stats().duplicates > 0; }, t);
  };
  std::uint64_t warm_sent = 0;
  REQUIRE(send_until_arrived([&] { pub.publish("two.warm", numbered(++warm_sent)); }, both_paths));
  const auto warm = sub.stats();

  for (std::uint64_t n = 1; n <= 1000; ++n) pub.publish("two.data", numbered(n));
  REQUIRE(in.wait_count("two.data", 1000, 20s));
  // Every copy of the 1000 arrives: wait for them too (they are counted, not handed on). In a burst one
  // path may run more than the 64-seq window ahead of the other: its copies are then dropped as late.
  const auto dropped = [&] { return sub.stats().duplicates + sub.stats().late; };
  REQUIRE(eventually([&] { return dropped() >= warm.duplicates + warm.late + 1000; }, 20s));
  {
    const auto data = in.on_topic("two.data");
    REQUIRE(data.size() == 1000);
    for (std::uint64_t i = 0; i < 1000; ++i) {
      CHECK(data[i].env.seq == i + 1);
      CHECK(n_of(data[i]) == i + 1);
    }
    const auto st = sub.stats();
    CHECK(st.by_topic.at("two.data") == 1000);
    // The data's 1000 copies, and at most the warm-up's copies still on their way when `warm` was read.
    CHECK(st.duplicates + st.late >= warm.duplicates + warm.late + 1000);
    CHECK(st.duplicates + st.late <= warm.duplicates + warm.late + 1000 + 2 * warm_sent);
    CHECK(st.restarts == 0);
    CHECK(st.gaps == 0);
  }

  // The first forwarder goes (its sockets close): the publisher and the subscriber keep the second path.
  first->stop();
  first.reset();
  for (std::uint64_t n = 1001; n <= 2000; ++n) pub.publish("two.data", numbered(n));
  REQUIRE(in.wait_count("two.data", 2000, 20s));
  const auto data = in.on_topic("two.data");
  REQUIRE(data.size() == 2000);
  for (std::uint64_t i = 1000; i < 2000; ++i) CHECK(data[i].env.seq == i + 1);
  const auto st = sub.stats();
  CHECK(st.restarts == 0);
  CHECK(st.gaps == 0);
  CHECK(st.missing == 0);
  CHECK(st.by_topic.at("two.data") == 2000);
}

TEST_CASE("a topic is encoded only while a subscriber holds a prefix of it, through any forwarder, as they come and go") {
  zmq::context_t ctx;
  auto f1 = loopback_forwarder(ctx);
  auto f2 = loopback_forwarder(ctx);
  publisher_options po;
  po.name = "interest-pub";
  po.endpoint = join_endpoints({f1->pub_endpoint(), f2->pub_endpoint()});
  publisher pub{ctx, po};
  int encoded = 0;
  std::uint64_t n = 0;
  auto publish_state = [&] {
    pub.publish_with("rm.state", [&](const messages::envelope& env) {
      ++encoded;
      return messages::encode(env, numbered(++n));
    });
  };

  // Nobody subscribed: nothing is encoded, and the seqs are consumed all the same.
  for (int i = 0; i < 20; ++i) publish_state();
  CHECK(encoded == 0);
  CHECK(pub.stats().unwanted == 20);
  CHECK(pub.stats().published == 0);
  CHECK(pub.stats().last_seq.at("rm.state") == 20);

  // A subscriber of a prefix, on the first forwarder only.
  inbox in_a;
  auto a = started_subscriber(ctx, "a", f1->sub_endpoint(), {"rm.s"}, in_a);
  REQUIRE(send_until_arrived(publish_state, [&](auto t) { return in_a.wait_count("rm.state", 1, t); }));
  CHECK(encoded > 0);
  CHECK(in_a.on_topic("rm.state").front().env.seq > 20);  // the stream went on while nobody listened
  CHECK(pub.wanted("rm.state"));
  CHECK_FALSE(pub.wanted("rm.nodes"));
  CHECK_FALSE(pub.wanted("rm."));  // a topic shorter than every subscription matches none

  // A subscriber of everything, on the second forwarder: every topic is wanted while it stays.
  inbox in_b;
  auto b = started_subscriber(ctx, "b", f2->sub_endpoint(), {""}, in_b);
  REQUIRE(eventually([&] { return pub.wanted("rm.nodes"); }, 20s));
  b.reset();
  REQUIRE(eventually([&] { return !pub.wanted("rm.nodes"); }, 20s));
  CHECK(pub.wanted("rm.state"));  // the first subscriber still holds its prefix

  a.reset();
  REQUIRE(eventually([&] { return !pub.wanted("rm.state"); }, 20s));
  const int before = encoded;
  publish_state();
  CHECK(encoded == before);
}

TEST_CASE("a forwarder's local inproc endpoints carry messages both ways between clients in its process and over tcp") {
  zmq::context_t ctx;
  forwarder_options fo;
  fo.pub_endpoint = "tcp://127.0.0.1:0";
  fo.sub_endpoint = "tcp://127.0.0.1:0";
  fo.local_pub_endpoint = "inproc://test.forwarder.pub";
  fo.local_sub_endpoint = "inproc://test.forwarder.sub";
  forwarder f{ctx, fo};
  f.start();
  inbox over_tcp, in_memory;
  auto tcp_sub = started_subscriber(ctx, "tcp", f.sub_endpoint(), {"t."}, over_tcp);
  auto local_sub = started_subscriber(ctx, "local", fo.local_sub_endpoint, {"t."}, in_memory);
  publisher_options po;
  po.name = "local-pub";
  po.endpoint = fo.local_pub_endpoint;
  publisher local_pub{ctx, po};
  po.name = "tcp-pub";
  po.endpoint = f.pub_endpoint();
  publisher tcp_pub{ctx, po};
  std::uint64_t n = 0;
  // In memory -> over tcp, and over tcp -> in memory; each side also hears the other.
  REQUIRE(send_until_arrived([&] { local_pub.publish("t.local", numbered(++n)); },
                             [&](auto t) { return over_tcp.wait_count("t.local", 1, t); }));
  REQUIRE(send_until_arrived([&] { tcp_pub.publish("t.tcp", numbered(++n)); },
                             [&](auto t) { return in_memory.wait_count("t.tcp", 1, t); }));
  CHECK(in_memory.wait_count("t.local", 1, 5s));
  CHECK(over_tcp.wait_count("t.tcp", 1, 5s));
  // The local publisher learns of subscriptions made over tcp, as any publisher does.
  CHECK(local_pub.wanted("t.anything"));
  CHECK_FALSE(local_pub.wanted("u.other"));
}

TEST_CASE("a forwarder with CURVE refuses local endpoints, which would carry no key") {
  zmq::context_t ctx;
  forwarder_options fo;
  fo.pub_endpoint = "tcp://127.0.0.1:0";
  fo.sub_endpoint = "tcp://127.0.0.1:0";
  fo.curve = make_curve_keypair();
  fo.local_sub_endpoint = "inproc://test.forwarder.curve.sub";
  CHECK_THROWS_AS(forwarder(ctx, fo), std::invalid_argument);
}
