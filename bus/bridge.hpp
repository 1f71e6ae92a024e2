#pragma once
// The bridge between the bus and CAF 0.17 actors.
//
// Inbound: a subscriber thread (bus/subscriber.hpp) owns the SUB socket and `caf::anon_send`s every accepted
// message to a target actor as a `bus_message`, and every rejected one as a `bad_message`. Outbound: a
// detached actor owns the PUB socket (bus/publisher.hpp); actors publish by sending it an outbound_message,
// it stamps the envelope (src, per-topic seq, ts_ms) and sends without blocking. Its socket is closed on the
// actor's own thread when it exits. ZeroMQ sockets are not thread-safe, hence exactly one owner each.
//
// Start/stop order (deps.md trap 5; docs/bus.md):
//   zmq::context_t ctx;            // declared FIRST: its destructor waits for every socket to close
//   caf::actor_system sys{cfg};    // scheduler.max-threads set explicitly
//   [bus::forwarder fwd{ctx, ...}; fwd.start();]   // when this process embeds the forwarder
//   bus::bridge br{ctx, sys, opts, target};
//   ...
//   br.stop();                     // joins the subscriber thread, then the publisher actor exits (bounded)
//   [other actors quit]; sys is destroyed; fwd stops; ctx is destroyed last.
//
// Bad messages: besides delivering bad_message to the target, the bridge can publish the rm.events
// `bad_message` event itself (rate-limited, so a flood of garbage cannot become a flood of events).
//
// Only caf/fwd.hpp is included here: CAF headers are expensive on 2 cores, and actor code that merely holds
// a handle should not pay for them.
//
// Thread-safety: construct and stop() from one thread; publisher_actor() and inbound_stats() from any.

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "bus/bus_message.hpp"
#include "bus/publisher.hpp"
#include "bus/subscriber.hpp"

namespace rmbus::bus {

// An actor's request to publish. It carries an encoder rather than bytes, because the envelope is stamped
// by the publisher actor at the moment of sending. Never leaves the process (CAF remoting is not used), so
// it is an "unsafe" (non-serialisable) message type on purpose.
struct outbound_message {
  std::string topic;
  publisher::encoder encode;
  // Optional: called by the publisher actor once it has handled the message, whether it was sent or not (a
  // topic no subscriber wants is never encoded), so that a marker can tell what was queued before it is out.
  std::function<void()> handled{};
};

// outbound_message for any messages:: type T with `encode(const envelope&, const T&)`; `msg` is copied in.
template <class T>
outbound_message make_outbound(std::string_view topic, T msg) {
  return {std::string{topic}, [m = std::move(msg)](const messages::envelope& env) { return encode(env, m); }};
}

// Spawns the detached actor that owns `pub` and publishes every outbound_message it receives. The socket
// is closed on the actor's thread when the actor exits (send it an exit message to stop it).
caf::actor spawn_publisher_actor(caf::actor_system& sys, publisher pub);

// Subscriber handlers that anon_send each bus_message and bad_message to `target`.
subscriber_handlers deliver_to(const caf::actor& target);

struct bridge_options {
  publisher_options publish;  // name = this process's src on the bus
  subscriber_options subscribe;
  bool publish_bad_message_events = true;  // rm.events kind bad_message, through the publisher actor
  int max_bad_message_events_per_s = 10;   // beyond this, bad messages are still counted but not published
};

class bridge {
 public:
  // Connects (or binds) both sockets, spawns the publisher actor and starts the subscriber thread.
  // Throws zmq::error_t on a bad endpoint. `inbound_target` receives bus_message and bad_message.
  bridge(zmq::context_t& ctx, caf::actor_system& sys, bridge_options options,
         const caf::actor& inbound_target);
  ~bridge();  // stop()
  bridge(const bridge&) = delete;
  bridge& operator=(const bridge&) = delete;

  // Send outbound_message here.
  const caf::actor& publisher_actor() const;
  const std::string& publish_endpoint() const;
  const std::string& subscribe_endpoint() const;
  subscriber_stats inbound_stats() const;

  // Stops the subscriber thread (joined), then makes the publisher actor exit and waits for it up to
  // `timeout` (returns false if it did not go in time). Idempotent.
  bool stop(std::chrono::milliseconds timeout = std::chrono::seconds{5});

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace rmbus::bus

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(rmbus::bus::outbound_message)
