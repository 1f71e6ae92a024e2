// Publisher and subscriber over real sockets on loopback (ephemeral ports): late joiners, slow subscribers,
// bad bytes and publisher restarts. Every wait has a deadline; the slow-joiner window is crossed by
// publishing until the first message arrives, never by sleeping.

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <msgpack.hpp>
#include <mutex>
#include <functional>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "bus/publisher.hpp"
#include "bus/subscriber.hpp"
#include "messages/envelope.hpp"
#include "messages/rm_event.hpp"
#include "tests/bus/raw_frames.hpp"
#include "tests/bus/support.hpp"

using namespace rmbus;
using namespace rmbus::bus;
using namespace rmbus::bus::testing;

namespace {

messages::rm_event numbered(std::string kind, std::uint64_t n, std::string pad = {}) {
  messages::rm_event e{std::move(kind), {{"n", std::to_string(n)}}};
  if (!pad.empty()) e.detail["pad"] = std::move(pad);
  return e;
}

std::uint64_t n_of(const bus_message& m) {
  auto e = messages::decode_rm_event(m.topic, m.body);
  REQUIRE(e.ok());
  return std::stoull(e.value().detail.at("n"));
}

publisher_options pub_at(std::string name, std::string endpoint, attach mode) {
  publisher_options o;
  o.name = std::move(name);
  o.endpoint = std::move(endpoint);
  o.mode = mode;
  return o;
}

}  // namespace

TEST_CASE("a subscriber that joins late gets what follows, and is not charged a gap for what came before") {
  zmq::context_t ctx;
  publisher pub{ctx, pub_at("late-pub", "tcp://127.0.0.1:0", attach::bind)};
  inbox early_in;
  subscriber early{ctx, sub_at(pub.endpoint(), attach::connect, {"late."}), early_in.handlers()};
  early.start();
  REQUIRE(send_until_arrived([&] { pub.publish("late.warm", numbered("warm", 0)); },
                             [&](auto t) { return early_in.wait_count("late.warm", 1, t); }));

  // Ten messages before the late subscriber exists: seqs 1..10 on late.data.
  for (std::uint64_t n = 1; n <= 10; ++n) pub.publish("late.data", numbered("data", n));
  REQUIRE(early_in.wait_count("late.data", 10, 20s));

  inbox late_in;
  subscriber late{ctx, sub_at(pub.endpoint(), attach::connect, {"late."}), late_in.handlers()};
  late.start();
  std::uint64_t published = 10;
  REQUIRE(send_until_arrived([&] { pub.publish("late.data", numbered("data", ++published)); },
                             [&](auto t) { return late_in.wait_count("late.data", 1, t); }));
  for (int i = 0; i < 5; ++i) pub.publish("late.data", numbered("data", ++published));
  REQUIRE(early_in.wait_count("late.data", published, 20s));
  REQUIRE(late_in.wait_for(
      [&](const auto& msgs, const auto&) {
        return !msgs.empty() && msgs.back().topic == "late.data" && msgs.back().env.seq == published;
      },
      20s));

  const auto seen = late_in.on_topic("late.data");
  const std::uint64_t first = seen.front().env.seq;
  // It joined after seq 10 had been published, so the first seq it saw is above 10 (and therefore above 1).
  CHECK(first > 10);
  // Gaps are counted only between messages seen: first..published arrived whole, nothing before counts.
  CHECK(seen.size() == published - first + 1);
  for (std::size_t i = 0; i < seen.size(); ++i) CHECK(seen[i].env.seq == first + i);
  const auto late_stats = late.stats();
  CHECK(late_stats.gaps == 0);
  CHECK(late_stats.missing == 0);
  CHECK(late_stats.restarts == 0);
  CHECK(late_stats.by_topic.at("late.data") == seen.size());
  // The early subscriber saw every one: seq 1..published, in order.
  const auto all = early_in.on_topic("late.data");
  REQUIRE(all.size() == published);
  for (std::size_t i = 0; i < all.size(); ++i) {
    CHECK(all[i].env.seq == i + 1);
    CHECK(n_of(all[i]) == i + 1);
    CHECK(all[i].env.src == "late-pub");
  }
  CHECK(early.stats().gaps == 0);
}

TEST_CASE("a slow subscriber does not block the publisher, and a reader notices the loss as gaps") {
  zmq::context_t ctx;
  auto opts = pub_at("fast-pub", "tcp://127.0.0.1:0", attach::bind);
  opts.sndhwm = 100;
  publisher pub{ctx, opts};

  // A subscriber that never reads once warmed up.
  zmq::socket_t stuck{ctx, zmq::socket_type::sub};
  stuck.set(zmq::sockopt::rcvhwm, 100);
  stuck.set(zmq::sockopt::linger, 0);
  stuck.set(zmq::sockopt::subscribe, "slow.");
  stuck.connect(pub.endpoint());

  // A reader whose handler is held on the first data message while the burst goes out, so its queues
  // overflow too; released afterwards, it must see the loss as gaps.
  std::mutex gate_mutex;
  std::condition_variable gate_cv;
  bool gate_open = false;
  inbox in;
  auto handlers = in.handlers();
  auto store = handlers.on_message;
  handlers.on_message = [&, store](bus_message&& m) {
    const bool hold = m.topic == "slow.data";
    store(std::move(m));
    if (hold) {
      std::unique_lock lock{gate_mutex};
      gate_cv.wait_for(lock, 60s, [&] { return gate_open; });  // bounded even if the test fails early
    }
  };
  auto sopts = sub_at(pub.endpoint(), attach::connect, {"slow."});
  sopts.rcvhwm = 100;
  subscriber reader{ctx, sopts, handlers};
  reader.start();

  zmq::pollitem_t stuck_item[] = {{stuck.handle(), 0, ZMQ_POLLIN, 0}};
  bool stuck_warm = false;
  REQUIRE(send_until_arrived([&] { pub.publish("slow.warm", numbered("warm", 0)); },
                             [&](auto t) {
                               if (!stuck_warm && zmq::poll(stuck_item, 1, t) > 0) stuck_warm = true;
                               return stuck_warm && in.wait_count("slow.warm", 1, t);
                             }));
  const auto warm_published = pub.stats().published;

  // 200,000 messages of ~120 bytes (~24 MB) against HWMs of 100 on each side and kernel socket buffers of a
  // few MB: far more than both subscribers can hold. If the publisher blocked, this loop would never end
  // (ctest's timeout would fail the test).
  constexpr std::uint64_t burst = 200'000;
  const std::string pad(80, 'x');
  const auto t0 = steady::now();
  for (std::uint64_t n = 1; n <= burst; ++n) pub.publish("slow.data", numbered("data", n, pad));
  const auto burst_ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t0).count();
  WARN("published " << burst << " messages past a stuck subscriber in " << burst_ms << " ms");
  const auto stats_after = pub.stats();
  // Every publish was handed to ZeroMQ (drops happen silently inside it, per peer).
  CHECK(stats_after.published == warm_published + burst);
  CHECK(stats_after.refused == 0);
  CHECK(stats_after.last_seq.at("slow.data") == burst);

  {
    std::lock_guard lock{gate_mutex};
    gate_open = true;
  }
  gate_cv.notify_all();
  // A tail message after the burst: seq > burst shows the reader the stream continued past what it lost.
  std::uint64_t next = burst;
  REQUIRE(send_until_arrived(
      [&] { pub.publish("slow.data", numbered("data", ++next)); },
      [&](auto t) {
        return in.wait_for(
            [&](const auto& msgs, const auto&) { return !msgs.empty() && msgs.back().env.seq > burst; }, t);
      }));

  const auto seen = in.on_topic("slow.data");
  const auto st = reader.stats();
  const std::uint64_t first = seen.front().env.seq;
  const std::uint64_t last = seen.back().env.seq;
  CHECK(st.gaps >= 1);
  CHECK(st.missing >= 1);
  // Every seq from the first seen to the last seen either arrived or was counted missing:
  // received + missing == last - first + 1.
  CHECK(seen.size() + st.missing == last - first + 1);
  for (std::size_t i = 1; i < seen.size(); ++i) CHECK(seen[i].env.seq > seen[i - 1].env.seq);
  CHECK(st.restarts == 0);
  reader.stop();
}

TEST_CASE(
    "bytes that are not a valid bus message are counted and reported, and the next good one is still "
    "delivered") {
  zmq::context_t ctx;
  inbox in;
  subscriber sub{ctx, sub_at("tcp://127.0.0.1:0", attach::bind, {""}), in.handlers()};
  sub.start();
  zmq::socket_t raw{ctx, zmq::socket_type::pub};
  raw.set(zmq::sockopt::linger, 1000);
  raw.connect(sub.endpoint());
  std::uint64_t warm_seq = 0;
  REQUIRE(send_until_arrived(
      [&] {
        send_raw(raw, {"bad.warm", envelope_body(++warm_seq, "raw")});
      },
      [&](auto t) { return in.wait_count("bad.warm", 1, t); }));

  // A body whose seq is a string instead of an unsigned integer.
  msgpack::sbuffer wrong_type;
  {
    msgpack::packer<msgpack::sbuffer> pk{wrong_type};
    pk.pack_map(4);
    pk.pack(std::string{"v"});
    pk.pack(1u);
    pk.pack(std::string{"seq"});
    pk.pack(std::string{"seven"});
    pk.pack(std::string{"ts_ms"});
    pk.pack(1u);
    pk.pack(std::string{"src"});
    pk.pack(std::string{"raw"});
  }
  send_raw(raw, {"bad.x", "\xc1 this is not MessagePack"});                     // 1
  send_raw(raw, {"bad.x", std::string{wrong_type.data(), wrong_type.size()}});  // 2
  send_raw(raw, {"bad.x", envelope_body(1, "raw"), "a third frame"});           // 3
  send_raw(raw, {"bad.lonely"});                                                // 4
  send_raw(raw, {"bad.\xff", envelope_body(1, "raw")});                         // 5
  send_raw(raw, {"bad.x", envelope_body(0, "raw")});                            // 6
  send_raw(raw, {"bad.x", envelope_body(1, "raw")});                            // the good one

  REQUIRE(in.wait_count("bad.x", 1, 20s));
  const auto bad = in.bad();
  REQUIRE(bad.size() == 6);
  // 1: not MessagePack at all; the whole body is at fault, so no field.
  CHECK(bad[0].error.topic == "bad.x");
  CHECK(bad[0].error.field.empty());
  CHECK_FALSE(bad[0].error.what.empty());
  // 2: the envelope key seq has the wrong type; the error names the field.
  CHECK(bad[1].error.topic == "bad.x");
  CHECK(bad[1].error.field == "seq");
  CHECK_THAT(bad[1].error.what, Catch::Contains("string"));
  // 3: three frames.
  CHECK(bad[2].error.topic == "bad.x");
  CHECK(bad[2].frames == 3);
  CHECK(bad[2].error.what == "expected 2 frames [topic, body], got 3");
  // 4: a lone frame.
  CHECK(bad[3].error.topic == "bad.lonely");
  CHECK(bad[3].frames == 1);
  // 5: a topic that is not UTF-8, reported printably.
  CHECK(bad[4].error.topic == "bad.\\xff");
  CHECK(bad[4].error.what == "topic is not valid UTF-8");
  // 6: seq 0 (sequences start at 1).
  CHECK(bad[5].error.field == "seq");

  const auto good = in.on_topic("bad.x");
  REQUIRE(good.size() == 1);
  CHECK(good[0].env.src == "raw");
  CHECK(good[0].env.seq == 1);
  const auto st = sub.stats();
  CHECK(st.bad_messages == 6);
  // The warm-up messages that arrived and the one good bad.x message were delivered; nothing else.
  CHECK(st.received == in.on_topic("bad.warm").size() + 1);
  CHECK(st.by_topic.at("bad.x") == 1);
  CHECK(st.by_topic.count("bad.lonely") == 0);
}

TEST_CASE("a publisher that restarts under the same name counts as a restart, not as a gap") {
  zmq::context_t ctx;
  inbox in;
  subscriber sub{ctx, sub_at("tcp://127.0.0.1:0", attach::bind, {"rs."}), in.handlers()};
  sub.start();
  {
    publisher first_run{ctx, pub_at("svc", sub.endpoint(), attach::connect)};
    // Warm-up on a topic of its own, so the data topic's seq starts at 1 once the connection is up.
    REQUIRE(send_until_arrived([&] { first_run.publish("rs.warm.a", numbered("warm", 0)); },
                               [&](auto t) { return in.wait_count("rs.warm.a", 1, t); }));
    for (std::uint64_t n = 1; n <= 5; ++n) first_run.publish("rs.data", numbered("data", n));
    REQUIRE(in.wait_count("rs.data", 5, 20s));
  }  // the first run ends: its socket closes
  publisher second_run{ctx, pub_at("svc", sub.endpoint(), attach::connect)};
  REQUIRE(send_until_arrived([&] { second_run.publish("rs.warm.b", numbered("warm", 0)); },
                             [&](auto t) { return in.wait_count("rs.warm.b", 1, t); }));
  for (std::uint64_t n = 1; n <= 3; ++n) second_run.publish("rs.data", numbered("data", n));
  REQUIRE(in.wait_count("rs.data", 8, 20s));

  const auto data = in.on_topic("rs.data");
  // Seen on rs.data from src "svc": 1 2 3 4 5 | 1 2 3. The drop from 5 to 1 is one restart; no gap, nothing
  // missing, and every message delivered.
  const std::uint64_t expected[] = {1, 2, 3, 4, 5, 1, 2, 3};
  for (std::size_t i = 0; i < 8; ++i) CHECK(data[i].env.seq == expected[i]);
  const auto st = sub.stats();
  CHECK(st.restarts == 1);
  CHECK(st.gaps == 0);
  CHECK(st.missing == 0);
  CHECK(st.by_topic.at("rs.data") == 8);
}

TEST_CASE("per-stream and per-topic tables stay bounded whatever topics and names senders choose") {
  zmq::context_t ctx;
  inbox in;
  auto so = sub_at("tcp://127.0.0.1:0", attach::bind, {"tb."});
  so.max_streams = 2;
  subscriber sub{ctx, so, in.handlers()};
  sub.start();
  publisher pub{ctx, pub_at("many-topics", sub.endpoint(), attach::connect)};
  REQUIRE(send_until_arrived([&] { pub.publish("tb.a", numbered("warm", 0)); },
                             [&](auto t) { return in.wait_count("tb.a", 1, t); }));
  // Streams ("many-topics", tb.a) and (.., tb.b) fill the table of 2; tb.c and tb.d are beyond it.
  pub.publish("tb.b", numbered("x", 1));
  pub.publish("tb.c", numbered("x", 1));
  pub.publish("tb.d", numbered("x", 1));
  pub.publish("tb.c", numbered("x", 2));
  REQUIRE(in.wait_for(
      [](const auto& msgs, const auto&) { return msgs.size() >= 5 && msgs.back().topic == "tb.c"; }, 20s));
  const auto st = sub.stats();
  const auto a_seen = in.on_topic("tb.a").size();
  // Still delivered, all of them: tb.a (a_seen) + tb.b + tb.c twice + tb.d.
  CHECK(st.received == a_seen + 4);
  // Beyond the bound: tb.c x2 and tb.d are neither seq-checked nor given a by_topic entry.
  CHECK(st.untracked == 3);
  CHECK(st.other_topics == 3);
  CHECK(st.by_topic.size() == 2);
  CHECK(st.by_topic.at("tb.b") == 1);
}

namespace {

// A subscriber made with `opts`, and a raw PUB socket connected to it and warmed up (its subscription has
// arrived): for the tests that send what a publisher would never write.
struct raw_rig {
  explicit raw_rig(subscriber_options opts) : sub(ctx, std::move(opts), in.handlers()) {
    sub.start();
    raw.set(zmq::sockopt::linger, 1000);
    raw.connect(sub.endpoint());
    std::uint64_t warm_seq = 0;
    REQUIRE(send_until_arrived([&] { send_raw(raw, {"warm", envelope_body(++warm_seq, "raw")}); },
                               [&](auto t) { return in.wait_count("warm", 1, t); }));
  }

  zmq::context_t ctx;
  inbox in;
  subscriber sub;
  zmq::socket_t raw{ctx, zmq::socket_type::pub};
};

}  // namespace

TEST_CASE("a body beyond max_body_bytes is refused on its size, naming it and the limit, and the next one is delivered") {
  auto opts = sub_at("tcp://127.0.0.1:0", attach::bind, {""});
  opts.limits.max_body_bytes = 1024;
  raw_rig rig{opts};
  auto& in = rig.in;
  auto& sub = rig.sub;
  auto& raw = rig.raw;
  // A valid envelope followed by 2,000 bytes of padding: 1 byte too many is enough, the size alone decides.
  auto padded = envelope_body(1, "raw");
  padded.append(2000, 'x');
  send_raw(raw, {"big.x", padded});
  send_raw(raw, {"big.x", envelope_body(1, "raw")});
  REQUIRE(in.wait_count("big.x", 1, 20s));
  const auto bad = in.bad();
  REQUIRE(bad.size() == 1);
  CHECK(bad[0].error.topic == "big.x");
  CHECK(bad[0].frames == 2);
  CHECK(bad[0].error.what ==
        "body of " + std::to_string(padded.size()) + " bytes exceeds max_body_bytes (1024)");
  CHECK(sub.stats().bad_messages == 1);
  CHECK(in.on_topic("big.x").size() == 1);
}

TEST_CASE("on the unread-tail topic the last value of a body is left to its consumer while its head is checked and other topics are read whole") {
  auto opts = sub_at("tcp://127.0.0.1:0", attach::bind, {""});
  opts.unread_tail_topic = "map.full";
  opts.unread_tail_key = "work";
  raw_rig rig{opts};
  auto& in = rig.in;
  auto& sub = rig.sub;
  auto& raw = rig.raw;
  // The envelope, then `work` holding bytes that are not MessagePack (0xc1 never is).
  const auto with_junk_work = [](std::uint64_t seq, const std::string& src) {
    auto body = envelope_body(seq, src);
    body[0] = static_cast<char>(static_cast<unsigned char>(body[0]) + 1);  // fixmap: one entry more
    return body + "\xa4work\x92\xc1\xc1";
  };
  send_raw(raw, {"map.full", with_junk_work(1, "orch")});    // handed on: its consumer reads `work`
  send_raw(raw, {"map.other", with_junk_work(1, "orch")});   // another topic: read whole, refused
  auto bad_head = with_junk_work(2, "orch");
  bad_head.replace(bad_head.find("\xa3seq") + 4, 1, "\xa1x");  // seq 2 -> "x"
  send_raw(raw, {"map.full", bad_head});                     // the head is still checked: refused
  send_raw(raw, {"map.full", with_junk_work(3, "orch")});
  REQUIRE(in.wait_count("map.full", 2, 20s));
  const auto got = in.on_topic("map.full");
  CHECK(got[0].body == with_junk_work(1, "orch"));
  CHECK(got[1].body == with_junk_work(3, "orch"));
  const auto bad = in.bad();
  REQUIRE(bad.size() == 2);
  CHECK(bad[0].error.topic == "map.other");
  CHECK(bad[1].error.topic == "map.full");
  CHECK(bad[1].error.field == "seq");
  CHECK(sub.stats().bad_messages == 2);
}

namespace {

// A raw rig whose subscriber has an in-flight bound on topic "hb.", for the bound's tests.
struct bounded_rig : raw_rig {
  explicit bounded_rig(std::shared_ptr<in_flight_bound> b,
                       std::function<std::optional<std::string_view>(std::string_view)> key = {})
      : raw_rig(options(b, std::move(key))), bound(std::move(b)) {}
  static subscriber_options options(std::shared_ptr<in_flight_bound> bound,
                                    std::function<std::optional<std::string_view>(std::string_view)> key) {
    auto opts = sub_at("tcp://127.0.0.1:0", attach::bind, {""});
    opts.bound = std::move(bound);
    opts.bounded_topic = "hb.";
    opts.bound_key = std::move(key);
    return opts;
  }

  std::shared_ptr<in_flight_bound> bound;
};

}  // namespace

TEST_CASE("an in-flight bound hands on at most its limit on the bounded topic, sheds the rest, and admits again as the consumer takes them") {
  bounded_rig rig{std::make_shared<in_flight_bound>(3)};
  auto& in = rig.in;
  auto& bound = rig.bound;
  auto& sub = rig.sub;
  auto& raw = rig.raw;
  // 10 on the bounded topic while the consumer takes none, then a marker on another topic (one socket: in
  // order). Limit 3: 3 handed on, 10 - 3 = 7 shed; the other topic is never bounded.
  for (std::uint64_t i = 1; i <= 10; ++i) send_raw(raw, {"hb.x", envelope_body(i, "raw")});
  for (std::uint64_t i = 1; i <= 5; ++i) send_raw(raw, {"other", envelope_body(i, "raw")});
  REQUIRE(in.wait_count("other", 5, 20s));
  CHECK(in.on_topic("hb.x").size() == 3);
  CHECK(sub.stats().shed == 7);
  CHECK(bound->shed() == 7);
  CHECK(bound->in_flight() == 3);
  // The consumer takes two: two more are admitted, the third of the next three is shed again.
  bound->leave();
  bound->leave();
  for (std::uint64_t i = 11; i <= 13; ++i) send_raw(raw, {"hb.x", envelope_body(i, "raw")});
  send_raw(raw, {"other", envelope_body(6, "raw")});
  REQUIRE(in.wait_count("other", 6, 20s));
  CHECK(in.on_topic("hb.x").size() == 5);
  CHECK(sub.stats().shed == 8);
  // leave() never goes below zero.
  for (int i = 0; i < 10; ++i) bound->leave();
  CHECK(bound->in_flight() == 0);
}

TEST_CASE("at the in-flight bound a key handed on within the known window still passes, a first-heard key is shed") {
  auto limit_2 = std::make_shared<in_flight_bound>(2);
  limit_2->set_known_window(std::chrono::minutes(10));  // longer than the test: what was heard stays known
  // The key is the body's envelope source here (a heartbeat's node name in rmbus): "real", or "stormN", a
  // new name each time as in a storm of invented names.
  bounded_rig rig{limit_2, [](std::string_view body) -> std::optional<std::string_view> {
                    if (body.find("real") != std::string_view::npos) return std::string_view{"real"};
                    if (const auto at = body.find("storm"); at != std::string_view::npos) return body.substr(at, 6);
                    return std::nullopt;
                  }};
  auto& in = rig.in;
  auto& bound = rig.bound;
  auto& sub = rig.sub;
  auto& raw = rig.raw;
  // "real" is heard once while there is room: 1 in flight, and it is known from now on.
  send_raw(raw, {"hb.x", envelope_body(1, "real")});
  // The storm fills the bound (1 more) and is shed beyond it: 5 sent, 1 passes, 4 shed.
  for (std::uint64_t i = 1; i <= 5; ++i) send_raw(raw, {"hb.x", envelope_body(1, "storm" + std::to_string(i))});
  // At the bound, "real" passes each time; the storm's next one does not.
  for (std::uint64_t i = 2; i <= 4; ++i) send_raw(raw, {"hb.x", envelope_body(i, "real")});
  send_raw(raw, {"hb.x", envelope_body(1, "storm6")});
  send_raw(raw, {"other", envelope_body(1, "raw")});
  REQUIRE(in.wait_count("other", 1, 20s));
  CHECK(in.on_topic("hb.x").size() == 1 + 1 + 3);
  CHECK(sub.stats().shed == 4 + 1);
  // Known keys are counted in flight too: 5 handed on, none taken.
  CHECK(bound->in_flight() == 5);
}

TEST_CASE("without a key function or with a zero window every bounded message counts alike") {
  bounded_rig rig{std::make_shared<in_flight_bound>(1),  // known window 0 by default
                  [](std::string_view) -> std::optional<std::string_view> { return std::string_view{"real"}; }};
  auto& in = rig.in;
  auto& sub = rig.sub;
  auto& raw = rig.raw;
  for (std::uint64_t i = 1; i <= 4; ++i) send_raw(raw, {"hb.x", envelope_body(i, "raw")});
  send_raw(raw, {"other", envelope_body(1, "raw")});
  REQUIRE(in.wait_count("other", 1, 20s));
  CHECK(in.on_topic("hb.x").size() == 1);
  CHECK(sub.stats().shed == 3);
}

TEST_CASE("a body of hand_over_bytes or more is handed to ZeroMQ without a copy and arrives whole as small ones do") {
  zmq::context_t ctx;
  publisher pub{ctx, pub_at("large-pub", "tcp://127.0.0.1:0", attach::bind)};
  inbox in;
  subscriber sub{ctx, sub_at(pub.endpoint(), attach::connect, {"large."}), in.handlers()};
  sub.start();
  REQUIRE(send_until_arrived([&] { pub.publish("large.warm", numbered("warm", 0)); },
                             [&](auto t) { return in.wait_count("large.warm", 1, t); }));
  const auto before = pub.stats();
  CHECK(before.handed_over == 0);  // the warm-up messages are small

  // Pads of distinct bytes around the threshold: each must arrive byte for byte, whichever path it took. A
  // value may hold at most 64 KiB (decode_limits::max_string_bytes), so a pad goes out in parts of 48 KiB.
  const std::size_t part = 48 * 1024;
  std::vector<std::string> pads;
  for (std::size_t size : {std::size_t{100}, hand_over_bytes - 1, hand_over_bytes, std::size_t{3} << 20}) {
    std::string pad(size, '\0');
    for (std::size_t i = 0; i < size; ++i) pad[i] = static_cast<char>('a' + (i * 7 + size) % 26);
    pads.push_back(std::move(pad));
  }
  for (std::uint64_t n = 0; n < pads.size(); ++n) {
    auto e = numbered("data", n);
    for (std::size_t at = 0; at < pads[n].size(); at += part)
      e.detail["pad" + std::to_string(at / part)] = pads[n].substr(at, part);
    pub.publish("large.data", e);
  }
  REQUIRE(in.wait_count("large.data", pads.size(), 20s));

  const auto seen = in.on_topic("large.data");
  REQUIRE(seen.size() == pads.size());
  for (std::size_t i = 0; i < seen.size(); ++i) {
    auto e = messages::decode_rm_event(seen[i].topic, seen[i].body);
    REQUIRE(e.ok());
    CHECK(e.value().detail.at("n") == std::to_string(i));
    std::string pad;
    for (std::size_t k = 0; k * part < pads[i].size(); ++k)
      pad += e.value().detail.at("pad" + std::to_string(k));
    CHECK(pad == pads[i]);
  }
  const auto after = pub.stats();
  CHECK(after.published - before.published == pads.size());
  // The body holds its envelope and key names besides the pad: the last three bodies are at or above the
  // threshold, the first (100 bytes of pad) far below.
  CHECK(after.handed_over == 3);
  CHECK(sub.stats().gaps == 0);
}
