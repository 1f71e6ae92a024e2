// The bridge into CAF 0.17: a stateful actor receives bus messages from the inbound subscriber thread, an
// actor publishes through the detached publisher actor, bad bytes reach the actor and become an rm.events
// bad_message event, and the whole thing shuts down in the documented order without hanging.

#include <caf/all.hpp>
#include <catch2/catch.hpp>
#include <msgpack.hpp>
#include <zmq.hpp>

#include "bus/bridge.hpp"
#include "bus/forwarder.hpp"
#include "messages/rm_event.hpp"
#include "messages/topics.hpp"
#include "tests/bus/support.hpp"

using namespace rmbus;
using namespace rmbus::bus;
using namespace std::chrono_literals;

namespace {

using publish_atom = caf::atom_constant<caf::atom("publish")>;
using bad_atom = caf::atom_constant<caf::atom("bad")>;

// Keeps everything it receives (its state is what the test inspects at the end) and tells the observer.
struct collector_state {
  std::vector<bus_message> received;
  std::vector<bad_message> bad;
  static inline const char* name = "test.collector";
};

caf::behavior collector(caf::stateful_actor<collector_state>* self, caf::actor observer) {
  return {
      [=](const bus_message& m) {
        self->state.received.push_back(m);
        self->send(observer, m);
      },
      [=](const bad_message& b) {
        self->state.bad.push_back(b);
        self->send(observer, b);
      },
      [=](caf::get_atom) { return self->state.received; },
      [=](caf::get_atom, bad_atom) { return self->state.bad; },
  };
}

// An ordinary actor that publishes by messaging the publisher actor.
caf::behavior producer(caf::event_based_actor*, caf::actor publisher_actor) {
  return {
      [=](publish_atom, const std::string& topic, std::uint64_t n) {
        caf::anon_send(publisher_actor,
                       make_outbound(topic, messages::rm_event{"data", {{"n", std::to_string(n)}}}));
      },
  };
}

std::uint64_t n_of(const bus_message& m) {
  auto e = messages::decode_rm_event(m.topic, m.body);
  REQUIRE(e.ok());
  return std::stoull(e.value().detail.at("n"));
}

}  // namespace

TEST_CASE("actors receive bus messages through the bridge and publish through the detached publisher actor") {
  // Declaration order is the shutdown order reversed: context first (destroyed last), then the forwarder,
  // then the actor system (destroyed first, after the bridge has stopped).
  zmq::context_t ctx;
  forwarder_options fo;
  fo.pub_endpoint = "tcp://127.0.0.1:0";
  fo.sub_endpoint = "tcp://127.0.0.1:0";
  forwarder fwd{ctx, fo};
  fwd.start();

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  {
    caf::scoped_actor self{sys};
    auto coll = sys.spawn(collector, caf::actor{self});

    bridge_options bo;
    bo.publish.name = "bridge-test";
    bo.publish.endpoint = fwd.pub_endpoint();
    bo.subscribe.endpoint = fwd.sub_endpoint();
    bo.subscribe.topics = {"caf.", std::string{messages::topics::rm_events}};
    bo.subscribe.poll_interval = 20ms;
    bridge br{ctx, sys, bo, coll};
    auto prod = sys.spawn(producer, br.publisher_actor());

    // Warm-up: publish on caf.warm until the collector has one (the subscription must cross the forwarder).
    std::size_t warm_seen = 0;
    const auto deadline = testing::steady::now() + 20s;
    for (int i = 0; i < 1000 && warm_seen == 0 && testing::steady::now() < deadline; ++i) {
      self->send(prod, publish_atom::value, std::string{"caf.warm"}, std::uint64_t{0});
      self->receive([&](const bus_message& m) { warm_seen += m.topic == "caf.warm" ? 1 : 0; },
                    [&](const bad_message&) {}, caf::after(20ms) >> [] {});
    }
    REQUIRE(warm_seen > 0);

    constexpr std::uint64_t count = 200;
    for (std::uint64_t n = 1; n <= count; ++n)
      self->send(prod, publish_atom::value, std::string{"caf.data"}, n);
    std::uint64_t data_seen = 0;
    const auto data_deadline = testing::steady::now() + 20s;
    for (int i = 0; i < 100000 && data_seen < count && testing::steady::now() < data_deadline; ++i) {
      self->receive([&](const bus_message& m) { data_seen += m.topic == "caf.data" ? 1 : 0; },
                    [&](const bad_message&) {}, caf::after(100ms) >> [] {});
    }
    REQUIRE(data_seen == count);

    // Garbage on a topic from a raw socket (warmed up with valid messages first), then one more good one.
    zmq::socket_t raw{ctx, zmq::socket_type::pub};
    raw.set(zmq::sockopt::linger, 1000);
    raw.connect(fwd.pub_endpoint());
    std::uint64_t raw_seq = 0;
    bool raw_warm = false;
    for (int i = 0; i < 1000 && !raw_warm && testing::steady::now() < deadline + 20s; ++i) {
      messages::envelope env;
      env.seq = ++raw_seq;
      env.src = "raw";
      const std::string body = messages::encode(env);
      REQUIRE(raw.send(zmq::str_buffer("caf.rawwarm"), zmq::send_flags::sndmore));
      REQUIRE(raw.send(zmq::buffer(body), zmq::send_flags::none));
      self->receive([&](const bus_message& m) { raw_warm = raw_warm || m.topic == "caf.rawwarm"; },
                    [&](const bad_message&) {}, caf::after(20ms) >> [] {});
    }
    REQUIRE(raw_warm);
    REQUIRE(raw.send(zmq::str_buffer("caf.bad"), zmq::send_flags::sndmore));
    REQUIRE(raw.send(zmq::str_buffer("\x93 truncated array"), zmq::send_flags::none));

    // The collector gets a bad_message, and the bridge publishes the rm.events bad_message event, which the
    // collector receives too (it subscribed to rm.events).
    bool got_bad = false;
    std::optional<messages::rm_event> event;
    const auto bad_deadline = testing::steady::now() + 20s;
    for (int i = 0; i < 100000 && !(got_bad && event) && testing::steady::now() < bad_deadline; ++i) {
      self->receive(
          [&](const bus_message& m) {
            if (m.topic != messages::topics::rm_events) return;
            auto ev = messages::decode_rm_event(m.topic, m.body);
            REQUIRE(ev.ok());
            event = ev.value();
            CHECK(m.env.src == "bridge-test");
          },
          [&](const bad_message& b) {
            got_bad = true;
            CHECK(b.error.topic == "caf.bad");
          },
          caf::after(100ms) >> [] {});
    }
    REQUIRE(got_bad);
    REQUIRE(event.has_value());
    CHECK(event->kind == "bad_message");
    CHECK(event->detail.at("topic") == "caf.bad");
    CHECK_FALSE(event->detail.at("error").empty());

    // The collector's own state: every caf.data message, in order, seq 1..count, from our publisher's name.
    std::vector<bus_message> kept;
    self->request(coll, 10s, caf::get_atom::value)
        .receive([&](std::vector<bus_message> v) { kept = std::move(v); },
                 [&](const caf::error& e) { FAIL("collector did not answer: " << sys.render(e)); });
    std::vector<bus_message> data;
    for (auto& m : kept)
      if (m.topic == "caf.data") data.push_back(m);
    REQUIRE(data.size() == count);
    for (std::size_t i = 0; i < data.size(); ++i) {
      CHECK(data[i].env.seq == i + 1);
      CHECK(n_of(data[i]) == i + 1);
      CHECK(data[i].env.src == "bridge-test");
    }
    std::vector<bad_message> bad;
    self->request(coll, 10s, caf::get_atom::value, bad_atom::value)
        .receive([&](std::vector<bad_message> v) { bad = std::move(v); },
                 [&](const caf::error& e) { FAIL("collector did not answer: " << sys.render(e)); });
    REQUIRE(bad.size() == 1);
    CHECK(bad[0].error.topic == "caf.bad");

    const auto st = br.inbound_stats();
    CHECK(st.gaps == 0);
    CHECK(st.bad_messages == 1);
    CHECK(st.by_topic.at("caf.data") == count);

    // Clean shutdown, in order: bridge threads and the publisher actor first (bounded), then our actors.
    CHECK(br.stop(10s));
    caf::anon_send_exit(prod, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(coll, caf::exit_reason::user_shutdown);
  }
  // Leaving the scope above destroyed the scoped actor; the actor system's destructor now waits for the
  // remaining actors (ctest's timeout bounds it), then the forwarder stops, then the context goes.
}
