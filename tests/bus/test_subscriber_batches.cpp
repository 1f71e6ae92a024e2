// The subscriber's batched topic (bus/subscriber.hpp): its messages handed on in batches, whole and in order,
// the other topics one at a time; a batch held over drains (batch_hold) until it is due, and handed on by
// itself at its deadline; with a socket of its own, that socket read only when the batch is due. Real sockets
// on loopback; every wait has a deadline.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "bus/subscriber.hpp"
#include "tests/bus/raw_frames.hpp"
#include "tests/bus/support.hpp"

using namespace rmbus;
using namespace rmbus::bus;
using namespace rmbus::bus::testing;

TEST_CASE("messages of the batched topic are handed on in batches, whole and in order, other topics one at a time") {
  zmq::context_t ctx;
  inbox in;  // the other topics
  std::mutex mutex;
  std::vector<bus_batch> batches;
  auto handlers = in.handlers();
  handlers.on_batch = [&](bus_batch&& b) {
    std::lock_guard lock{mutex};
    batches.push_back(std::move(b));
  };
  auto opts = sub_at("tcp://127.0.0.1:0", attach::bind, {""});
  opts.batched_topic = "hb.x";
  opts.coalesce = std::chrono::milliseconds(20);  // drains 20 ms apart: messages sent back to back share one
  subscriber sub{ctx, opts, handlers};
  sub.start();
  zmq::socket_t raw{ctx, zmq::socket_type::pub};
  raw.set(zmq::sockopt::linger, 1000);
  raw.connect(sub.endpoint());
  std::uint64_t warm_seq = 0;
  REQUIRE(send_until_arrived([&] { send_raw(raw, {"warm", envelope_body(++warm_seq, "raw")}); },
                             [&](auto t) { return in.wait_count("warm", 1, t); }));
  // 60 on the batched topic with other topics between them, and a marker last (one socket: in order).
  for (std::uint64_t i = 1; i <= 60; ++i) {
    send_raw(raw, {"hb.x", envelope_body(i, "agent")});
    if (i % 20 == 0) send_raw(raw, {"hb.xy", envelope_body(i / 20, "agent")});  // a longer topic: not batched
  }
  send_raw(raw, {"other", envelope_body(1, "raw")});
  REQUIRE(in.wait_count("other", 1, 20s));
  // A drain's batch is handed on when the drain ends, after the marker it may contain: wait for the last.
  const auto until = steady::now() + 20s;
  std::vector<std::uint64_t> seqs;
  std::size_t largest = 0;
  while (steady::now() < until) {
    {
      std::lock_guard lock{mutex};
      seqs.clear();
      largest = 0;
      for (const auto& b : batches) {
        CHECK(b.topic == "hb.x");
        largest = std::max(largest, b.messages.size());
        for (const auto& m : b.messages) {
          CHECK(m.topic == "hb.x");
          seqs.push_back(m.env.seq);
        }
      }
    }
    if (seqs.size() >= 60) break;
    std::this_thread::sleep_for(10ms);
  }
  std::vector<std::uint64_t> expected(60);
  std::iota(expected.begin(), expected.end(), 1);
  CHECK(seqs == expected);                   // every one, once, in the order sent
  CHECK(in.on_topic("hb.x").empty());        // none handed on alone
  CHECK(in.on_topic("hb.xy").size() == 3);   // the other topics as before
  CHECK(largest > 1);                        // the point: one hand-over for several
  CHECK(sub.stats().by_topic.at("hb.x") == 60);  // counted as received like any message
}

namespace {

// A subscriber with a batched topic "hb.x" whose batches are held (batch_hold), and a raw publisher to it.
// `own_socket`: the subscriber connects and names its topics, so "hb.x" gets a socket of its own, read only
// when its batch is due; otherwise it binds and subscribes to everything, one socket for all.
// The messages of the test come from src "agent"; the warm-up's from other sources are left out of seqs().
struct held_batch_rig {
  zmq::context_t ctx;
  inbox in;  // the other topics
  std::mutex mutex;
  std::vector<bus_batch> batches;
  std::optional<zmq::socket_t> raw;
  std::optional<subscriber> sub;

  held_batch_rig(std::chrono::milliseconds hold, std::chrono::milliseconds poll_interval, bool own_socket) {
    auto handlers = in.handlers();
    handlers.on_batch = [this](bus_batch&& b) {
      std::lock_guard lock{mutex};
      batches.push_back(std::move(b));
    };
    raw.emplace(ctx, zmq::socket_type::pub);
    raw->set(zmq::sockopt::linger, 1000);
    raw->set(zmq::sockopt::sndhwm, 0);  // a burst is queued whole, never dropped by the sender
    auto opts = sub_at("tcp://127.0.0.1:0", attach::bind, {""});
    if (own_socket) {
      raw->bind("tcp://127.0.0.1:*");
      opts = sub_at(raw->get(zmq::sockopt::last_endpoint), attach::connect, {"warm", "hb.x", "other"});
    }
    opts.batched_topic = "hb.x";
    opts.batch_hold = hold;
    opts.poll_interval = poll_interval;
    opts.coalesce = std::chrono::milliseconds(1);
    sub.emplace(ctx, opts, handlers);
    sub->start();
    if (!own_socket) raw->connect(sub->endpoint());
    std::uint64_t warm_seq = 0;
    REQUIRE(send_until_arrived([&] { send_raw(*raw, {"warm", envelope_body(++warm_seq, "raw")}); },
                               [&](auto t) { return in.wait_count("warm", 1, t); }));
    // The batched topic's own subscription is another socket's, so it needs its own warm-up: heartbeats
    // from a source of their own, until one is handed on.
    std::uint64_t beat_seq = 0;
    REQUIRE(send_until_arrived([&] { send_raw(*raw, {"hb.x", envelope_body(++beat_seq, "warm-agent")}); },
                               [&](auto t) {
                                 const auto until = steady::now() + t + hold;
                                 while (steady::now() < until && batches_handed_on() == 0)
                                   std::this_thread::sleep_for(5ms);
                                 return batches_handed_on() > 0;
                               }));
    // Until the warm-up's tail is handed on and the subscriber waits for a first arrival again.
    std::this_thread::sleep_for(3 * hold);
  }
  std::size_t batches_handed_on() {
    std::lock_guard lock{mutex};
    return batches.size();
  }
  // Batches holding a message of the test's own source.
  std::size_t batch_count() {
    std::lock_guard lock{mutex};
    return static_cast<std::size_t>(std::count_if(batches.begin(), batches.end(), [](const bus_batch& b) {
      return std::any_of(b.messages.begin(), b.messages.end(), [](const auto& m) { return m.env.src == "agent"; });
    }));
  }
  // The size of the largest batch handed on.
  std::size_t largest_batch() {
    std::lock_guard lock{mutex};
    std::size_t largest = 0;
    for (const auto& b : batches) largest = std::max(largest, b.messages.size());
    return largest;
  }
  // The seqs of the test's own batched messages handed on, in hand-over order.
  std::vector<std::uint64_t> seqs() {
    std::lock_guard lock{mutex};
    std::vector<std::uint64_t> out;
    for (const auto& b : batches)
      for (const auto& m : b.messages)
        if (m.env.src == "agent") out.push_back(m.env.seq);
    return out;
  }
};

}  // namespace

TEST_CASE("a held batch waits while other topics pass, and goes on by itself when due") {
  const bool own_socket = GENERATE(false, true);
  CAPTURE(own_socket);
  // Polls 3 s apart: a batch handed on well before that was handed on at its own deadline.
  held_batch_rig rig{std::chrono::milliseconds(300), std::chrono::milliseconds(3000), own_socket};
  send_raw(*rig.raw, {"hb.x", envelope_body(1, "agent")});
  send_raw(*rig.raw, {"other", envelope_body(1, "raw")});
  REQUIRE(rig.in.wait_count("other", 1, 20s));
  CHECK(rig.batch_count() == 0);  // sent before the other, still held
  const auto until = steady::now() + 2500ms;
  while (steady::now() < until && rig.batch_count() == 0) std::this_thread::sleep_for(5ms);
  CHECK(rig.seqs() == std::vector<std::uint64_t>{1});
}

TEST_CASE("a batched topic with a socket of its own is not read until its batch is due") {
  held_batch_rig rig{std::chrono::milliseconds(300), std::chrono::milliseconds(50), true};
  const auto read_before = rig.sub->stats().by_topic.at("hb.x");
  send_raw(*rig.raw, {"hb.x", envelope_body(1, "agent")});
  send_raw(*rig.raw, {"other", envelope_body(1, "raw")});
  REQUIRE(rig.in.wait_count("other", 1, 20s));
  // Sent first, but still in its socket: not received, so not counted. One socket for all would have read it
  // on the way to the other (its batch held, but counted).
  CHECK(rig.sub->stats().by_topic.at("hb.x") == read_before);
  const auto until = steady::now() + 2500ms;
  while (steady::now() < until && rig.batch_count() == 0) std::this_thread::sleep_for(5ms);
  CHECK(rig.seqs() == std::vector<std::uint64_t>{1});
  CHECK(rig.sub->stats().by_topic.at("hb.x") == read_before + 1);
}

TEST_CASE("a trickle on the batched topic is handed on about once per batch_hold, whole and in order") {
  const bool own_socket = GENERATE(false, true);
  CAPTURE(own_socket);
  held_batch_rig rig{std::chrono::milliseconds(100), std::chrono::milliseconds(50), own_socket};
  const auto start = steady::now();
  for (std::uint64_t i = 1; i <= 30; ++i) {
    send_raw(*rig.raw, {"hb.x", envelope_body(i, "agent")});
    std::this_thread::sleep_for(10ms);
  }
  const auto until = steady::now() + 20s;
  while (steady::now() < until && rig.seqs().size() < 30) std::this_thread::sleep_for(10ms);
  const auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - start).count();
  std::vector<std::uint64_t> expected(30);
  std::iota(expected.begin(), expected.end(), 1);
  CHECK(rig.seqs() == expected);
  // Drains 1 ms apart would hand on some 30 batches; held, one per 100 ms of the trickle (and its tail).
  CHECK(rig.batch_count() <= static_cast<std::size_t>(elapsed_ms / 100 + 2));
  CHECK(rig.in.on_topic("hb.x").empty());
}

TEST_CASE("a burst of several batches on the batched topic goes on whole and in order in batches of at most 1024") {
  const bool own_socket = GENERATE(false, true);
  CAPTURE(own_socket);
  held_batch_rig rig{std::chrono::milliseconds(50), std::chrono::milliseconds(50), own_socket};
  constexpr std::uint64_t burst = 5000;
  for (std::uint64_t i = 1; i <= burst; ++i) send_raw(*rig.raw, {"hb.x", envelope_body(i, "agent")});
  const auto until = steady::now() + 20s;
  while (steady::now() < until && rig.seqs().size() < burst) std::this_thread::sleep_for(10ms);
  std::vector<std::uint64_t> expected(burst);
  std::iota(expected.begin(), expected.end(), 1);
  CHECK(rig.seqs() == expected);
  CHECK(rig.largest_batch() <= 1024);
  CHECK(rig.batch_count() >= burst / 1024);
  CHECK(rig.sub->stats().gaps == 0);
}

TEST_CASE("a batched topic that another subscription overlaps shares its socket and is received once") {
  // "hb" also matches "hb.x", and ZeroMQ cannot leave it out of that subscription: one socket for both.
  zmq::context_t ctx;
  zmq::socket_t raw{ctx, zmq::socket_type::pub};
  raw.set(zmq::sockopt::linger, 1000);
  raw.bind("tcp://127.0.0.1:*");
  inbox in;
  std::mutex mutex;
  std::vector<std::uint64_t> seqs;
  auto handlers = in.handlers();
  handlers.on_batch = [&](bus_batch&& b) {
    std::lock_guard lock{mutex};
    for (const auto& m : b.messages) seqs.push_back(m.env.seq);
  };
  auto opts = sub_at(raw.get(zmq::sockopt::last_endpoint), attach::connect, {"hb", "hb.x"});
  opts.batched_topic = "hb.x";
  opts.batch_hold = std::chrono::milliseconds(50);
  subscriber sub{ctx, opts, handlers};
  sub.start();
  std::uint64_t warm_seq = 0;
  REQUIRE(send_until_arrived([&] { send_raw(raw, {"hb.warm", envelope_body(++warm_seq, "raw")}); },
                             [&](auto t) { return in.wait_count("hb.warm", 1, t); }));
  for (std::uint64_t i = 1; i <= 20; ++i) send_raw(raw, {"hb.x", envelope_body(i, "agent")});
  send_raw(raw, {"hb.end", envelope_body(1, "raw")});
  REQUIRE(in.wait_count("hb.end", 1, 20s));
  const auto until = steady::now() + 5s;
  auto handed_on = [&] {
    std::lock_guard lock{mutex};
    return seqs.size();
  };
  while (steady::now() < until && handed_on() < 20) std::this_thread::sleep_for(5ms);
  std::this_thread::sleep_for(100ms);  // a second copy, were there one, would be handed on by now
  std::vector<std::uint64_t> expected(20);
  std::iota(expected.begin(), expected.end(), 1);
  std::lock_guard lock{mutex};
  CHECK(seqs == expected);
  const auto stats = sub.stats();
  CHECK(stats.restarts == 0);
  CHECK(stats.by_topic.at("hb.x") == 20);
}

TEST_CASE("a batched topic without a batch handler is refused when the subscriber is made") {
  zmq::context_t ctx;
  inbox in;
  auto opts = sub_at("tcp://127.0.0.1:0", attach::bind, {""});
  opts.batched_topic = "hb.x";
  CHECK_THROWS_WITH(subscriber(ctx, opts, in.handlers()), Catch::Contains("on_batch"));
}
