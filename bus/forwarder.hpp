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
// Thread-safety: start/stop from one controlling thread (or serialised by the caller); endpoints() any time
// after construction.

#include <memory>
#include <string>

#include "bus/endpoints.hpp"

namespace zmq {
class context_t;
}

namespace rmbus::bus {

struct forwarder_options {
  std::string pub_endpoint{default_pub_endpoint};  // XSUB side, bound; publishers connect here
  std::string sub_endpoint{default_sub_endpoint};  // XPUB side, bound; subscribers connect here
  int hwm = 10000;                                 // per peer, both directions
};

class forwarder {
 public:
  // Binds both sides on the calling thread, so a busy port or a bad endpoint throws zmq::error_t here.
  forwarder(zmq::context_t& ctx, forwarder_options options);
  ~forwarder();  // stop()
  forwarder(const forwarder&) = delete;
  forwarder& operator=(const forwarder&) = delete;

  void start();  // REQUIRES: not started before
  void stop();   // TERMINATE, join; idempotent

  // Bound endpoints, with real ports when the options said :0.
  const std::string& pub_endpoint() const;
  const std::string& sub_endpoint() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace rmbus::bus
