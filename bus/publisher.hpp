#pragma once
// The sending end of the bus: one ZeroMQ XPUB socket that stamps every message's envelope itself.
//
// Each message is two frames [topic, body]. The publisher owns the envelope: `src` is its name, `seq` counts
// per topic from 1 (+1 per message, so subscribers can count what they missed), `ts_ms` is the wall clock.
// Callers hand over an encoder that turns the stamped envelope into the body (every messages:: type has
// `encode(const envelope&, const T&)`; publish(topic, msg) calls it).
//
// Never blocking the caller: a PUB socket never waits for subscribers. When a subscriber (or the forwarder)
// is slow or gone and its queue holds sndhwm messages, further messages FOR THAT PEER are dropped silently by
// ZeroMQ; other peers are unaffected, and the publisher cannot see the drop. The receiver sees it: its seq
// for that (src, topic) jumps, and its subscriber counts the gap (subscriber_stats::gaps / missing). Messages
// published before any subscriber has connected and subscribed are dropped too (the slow-joiner effect);
// topics that are state snapshots are republished, so a late joiner is whole after one round.
// On close, unsent messages get at most `linger` to leave; then they are dropped, so shutdown is bounded.
//
// Topics no one subscribes to are not encoded: the socket is an XPUB (it sends exactly as a PUB does), and the
// publisher reads the subscriptions ZeroMQ hands it (each topic prefix once, however many subscribers or
// forwarders hold it; its unsubscription when the last one goes) just before each message. A message whose
// topic matches none would be dropped by ZeroMQ's own filter for every peer anyway; encoding a 20 MB schedule
// only to drop it cost an RM at 50,000 nodes tens of milliseconds a round. Its seq is still consumed, as for
// any dropped message, and it is counted in `unwanted`.
//
// Thread-safety: none. A ZeroMQ socket has one owner; use the publisher from one thread at a time (in the
// actor system, the detached publisher actor of bus/bridge.hpp owns it).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "bus/curve.hpp"
#include "bus/endpoints.hpp"
#include "messages/envelope.hpp"

namespace zmq {
class context_t;
}

namespace rmbus::bus {

struct publisher_options {
  std::string name;                            // envelope `src`; REQUIRES: non-empty
  // The forwarder's XSUB side, or where to bind; several forwarders separated by commas (bus/endpoint_list.hpp):
  // each message is then sent through every one of them.
  std::string endpoint{default_pub_endpoint};
  attach mode = attach::connect;
  std::optional<curve_client> curve;  // CURVE client keys (docs/bus.md "Security"); none: CURVE off
  int sndhwm = 10000;                     // messages queued per peer before drops start
  std::chrono::milliseconds linger{500};  // bound on close; never 0 (drops what is queued)
};

struct publisher_stats {
  std::uint64_t published = 0;                    // messages handed to ZeroMQ
  std::uint64_t refused = 0;                      // sends ZeroMQ refused outright (should stay 0)
  std::uint64_t unwanted = 0;                     // not encoded: no subscriber's prefix matched the topic
  std::uint64_t handed_over = 0;                  // of those published, bodies given to ZeroMQ without a copy
  std::map<std::string, std::uint64_t> last_seq;  // topic -> last seq stamped
};

// Bodies of at least this many bytes are handed to ZeroMQ without being copied
// (publisher_stats::handed_over).
inline constexpr std::size_t hand_over_bytes = 64 * 1024;

class publisher {
 public:
  using encoder = std::function<std::string(const messages::envelope&)>;

  // Creates the socket and connects or binds it; throws zmq::error_t if the endpoint is invalid or cannot be
  // bound, std::invalid_argument if the name is empty or the endpoint list malformed.
  publisher(zmq::context_t& ctx, publisher_options options);
  ~publisher();
  publisher(publisher&&) noexcept;
  publisher& operator=(publisher&&) noexcept;

  // Stamps the next envelope for `topic`, encodes the body with `encode` and sends [topic, body] without
  // blocking. Returns the envelope used. Its seq is consumed even when ZeroMQ drops the message (a dropped
  // message must show up as a gap downstream); if `encode` throws, nothing is sent or consumed and the
  // exception propagates.
  // A topic no subscriber wants (wanted() false) is not encoded or sent; its seq is consumed all the same.
  messages::envelope publish_with(std::string_view topic, const encoder& encode);

  // Whether some subscriber (directly or through a forwarder) holds a prefix of `topic`, after reading the
  // subscriptions that arrived since the last call.
  bool wanted(std::string_view topic);

  // publish(topic, msg) for any messages:: type T with `encode(const envelope&, const T&)`.
  template <class T>
  messages::envelope publish(std::string_view topic, const T& msg) {
    return publish_with(topic, [&msg](const messages::envelope& env) { return encode(env, msg); });
  }

  // The endpoint actually connected or bound (with the real port after binding tcp://...:0); a list joined by
  // commas.
  const std::string& endpoint() const;
  const std::string& name() const;
  publisher_stats stats() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// Milliseconds since the Unix epoch, as stamped into ts_ms.
std::uint64_t wall_clock_ms();

}  // namespace rmbus::bus
