#pragma once
// The bus's meeting point: an XSUB socket that publishers connect to and an XPUB socket that subscribers
// connect to, joined by zmq::proxy_steerable on a thread of its own. Subscriptions flow upstream (XPUB ->
// XSUB -> publishers, so publishers filter at the source), messages flow downstream.
//
// The RM process embeds one (start/stop below); `rmbus-proxy` runs one alone when actors are spread over
// hosts. Stop is explicit and bounded: stop() sends TERMINATE on an inproc PAIR control socket, the proxy
// returns, and the thread closes its sockets before it ends (plain zmq::proxy would only return when the
// context terminates, which in turn waits for these very sockets).
//
// Drop policy: the XPUB side keeps at most `hwm` messages per subscriber; past that, messages for that
// subscriber are dropped (ZeroMQ's PUB semantics), which the subscriber sees as seq gaps. A slow subscriber
// therefore never slows the forwarder, the publishers, or the other subscribers.
//
// CURVE (options.curve set; docs/bus.md "Security"): both sides are CURVE servers in ZAP domain rmbus.bus, so
// only listed keys connect (a bus::zap_handler must run on the same context). The proxy is then a poll loop of
// our own instead of zmq::proxy_steerable: each message's first frame carries its connection's User-Id (the
// sender's roles, set by the ZAP handler), and a message whose topic those roles may not publish
// (bus::may_publish) is dropped, counted (refused()) and reported to on_refused. Subscriptions flow upstream
// unchecked: every listed key may subscribe. Without CURVE nothing of this runs: proxy_steerable as before.
//
// Thread-safety: start/stop from one controlling thread (or serialised by the caller); endpoints() any time
// after construction; refused() from any thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "bus/curve.hpp"
#include "bus/endpoints.hpp"

namespace zmq {
class context_t;
}

namespace rmbus::bus {

struct forwarder_options {
  std::string pub_endpoint{default_pub_endpoint};  // XSUB side, bound; publishers connect here
  std::string sub_endpoint{default_sub_endpoint};  // XPUB side, bound; subscribers connect here
  int hwm = 10000;                                 // per peer, both directions
  std::optional<curve_keypair> curve;              // CURVE server key pair; none: CURVE off
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

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace rmbus::bus
