#pragma once
// The bus's meeting point: an XSUB socket that publishers connect to and an XPUB socket that subscribers
// connect to, joined by a poll loop of our own on a thread of its own. Subscriptions flow upstream (XPUB ->
// XSUB -> publishers, so publishers filter at the source), messages flow downstream.
//
// The RM process embeds one (start/stop below); `rmbus-proxy` runs one alone when actors are spread over
// hosts. Stop is explicit and bounded: stop() sends TERMINATE on an inproc PAIR control socket, the loop
// returns, and the thread closes its sockets before it ends (plain zmq::proxy would only return when the
// context terminates, which in turn waits for these very sockets).
//
// Drop policy: the XPUB side keeps at most `hwm` messages per subscriber; past that, messages for that
// subscriber are dropped (ZeroMQ's PUB semantics), which the subscriber sees as seq gaps. A slow subscriber
// therefore never slows the forwarder, the publishers, or the other subscribers.
//
// Shedding repeats (options.shed set; docs/bus.md "Shedding repeats"): on one topic, a key (taken from a
// message's body by the caller's key_of) may pass `burst` messages back to back, then one per min_gap; the
// others are dropped here and counted (shed()), before it can take a place in the queue toward a slow subscriber. The XSUB side fair-queues between
// publishers' connections, so while the forwarder keeps up reading, a flooding publisher overflows only its own
// pipe; the queue that overflowed toward the RM was the XPUB side, indiscriminately. The table of recent keys
// has a fixed size (bus/repeat_filter.hpp); a message whose key cannot be read is forwarded. Sheds are logged
// at most once every 10 s (count, topic, an example key).
//
// CURVE (options.curve set; docs/bus.md "Security"): both sides are CURVE servers in ZAP domain rmbus.bus, so
// only listed keys connect (a bus::zap_handler must run on the same context). Each message's first frame
// carries its connection's User-Id (the sender's roles, set by the ZAP handler), and a message whose topic
// those roles may not publish (bus::may_publish) is dropped, counted (refused()) and reported to on_refused.
// Subscriptions flow upstream unchecked: every listed key may subscribe.
//
// The proxy is a poll loop of our own (not zmq::proxy_steerable), so that it can look at messages: the role
// check with CURVE, the shedding with or without it. With neither configured it forwards every frame as it is.
//
// Thread-safety: start/stop from one controlling thread (or serialised by the caller); endpoints() any time
// after construction; refused(), shed() and set_shed_gap() from any thread.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "bus/curve.hpp"
#include "bus/endpoints.hpp"

namespace zmq {
class context_t;
}

namespace rmbus::bus {

// Which repeats the forwarder sheds: on `topic` (the first frame, exactly), a key's messages beyond `burst` back
// to back and then one per min_gap (bus/repeat_filter.hpp). The caller knows the message; the bus only holds
// the table.
struct repeat_shedding {
  std::string topic;
  // The key in a body (the message's second and last frame), or nullopt to forward the message unexamined.
  // Runs on the forwarder's thread for every message on `topic`: a cheap peek, not a full decode.
  std::function<std::optional<std::string_view>(std::string_view body)> key_of;
  std::chrono::milliseconds min_gap{0};  // 0: nothing is shed (and set_shed_gap can turn it on later)
  int burst = 2;                         // 1 to 64
  std::size_t slots = 4096;              // a power of two; 4096 x 24 bytes = 96 KiB
};

struct forwarder_options {
  std::string pub_endpoint{default_pub_endpoint};  // XSUB side, bound; publishers connect here
  std::string sub_endpoint{default_sub_endpoint};  // XPUB side, bound; subscribers connect here
  int hwm = 10000;                                 // per peer, both directions
  std::optional<curve_keypair> curve;              // CURVE server key pair; none: CURVE off
  std::optional<repeat_shedding> shed;             // none: no shedding
  // Further endpoints of the same two sides for clients in this very process (inproc://...), so that their
  // messages do not cross loopback TCP into the process and out again; empty: none. Without CURVE only:
  // the roles of a sender come from its CURVE key, which an inproc connection does not carry.
  std::string local_pub_endpoint;
  std::string local_sub_endpoint;
};

// A message the forwarder dropped because its sender may not publish its topic.
struct refused_publish {
  std::string sender;  // "NAME (ROLES)" from the connection's User-Id
  std::string topic;   // at most 256 bytes of it
};

class forwarder {
 public:
  // Binds both sides on the calling thread, so a busy port or a bad endpoint throws zmq::error_t here.
  // on_refused (optional) runs on the forwarder's thread for every refused message: keep it short.
  forwarder(zmq::context_t& ctx, forwarder_options options,
            std::function<void(const refused_publish&)> on_refused = {});
  ~forwarder();  // stop()
  forwarder(const forwarder&) = delete;
  forwarder& operator=(const forwarder&) = delete;

  void start();  // REQUIRES: not started before
  void stop();   // TERMINATE, join; idempotent

  // Bound endpoints, with real ports when the options said :0.
  const std::string& pub_endpoint() const;
  const std::string& sub_endpoint() const;
  // Messages dropped because the sender's roles may not publish the topic (CURVE only).
  std::uint64_t refused() const;
  // Messages dropped as repeats (options.shed).
  std::uint64_t shed() const;
  // A new min_gap for options.shed (a reconfigured heartbeat interval); ignored when options.shed is unset.
  void set_shed_gap(std::chrono::milliseconds min_gap);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace rmbus::bus
