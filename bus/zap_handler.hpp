#pragma once
// The ZAP handler (ZeroMQ RFC 27): ZeroMQ asks it, on inproc://zeromq.zap.01, whether to admit each CURVE
// connection to a server socket of this context, and it answers from the list of allowed keys:
//   domain rmbus.bus   (the forwarder's two sides): any listed key;
//   domain rmbus.admin (the admin endpoint):         listed keys with the admin role only;
//   anything else (an unknown key, another mechanism or domain): refused (400), counted and logged.
// An admitted connection's User-Id is "ROLES:NAME:PUBLIC_KEY" (bus/curve.hpp), which every message received
// on it carries.
//
// One handler per ZeroMQ context (the inproc name is per context); it must be started before any CURVE server
// socket of the context takes connections, or libzmq admits them unchecked. rmbus runs one for its forwarder
// and its admin endpoint together; rmbus-proxy one for its forwarder.
//
// The list can be replaced while the handler runs (replace_allowed: rmbus on reconfiguration, rmbus-proxy on
// SIGHUP). ZAP runs once per connection, at its handshake: the new list decides every connection made from
// then on; a connection admitted before stays until it is closed or reconnects.
//
// Thread-safety: construct, start and stop from one thread; stats() and replace_allowed() from any.

#include <cstdint>
#include <memory>
#include <vector>

#include "bus/curve.hpp"

namespace zmq {
class context_t;
}

namespace rmbus::bus {

struct zap_stats {
  std::uint64_t admitted = 0;
  std::uint64_t refused = 0;  // unknown keys, and non-admin keys at the admin endpoint
};

class zap_handler {
 public:
  // Binds inproc://zeromq.zap.01 on the calling thread (throws zmq::error_t if this context has one already).
  zap_handler(zmq::context_t& ctx, std::vector<allowed_key> allowed);
  ~zap_handler();  // stop()
  zap_handler(const zap_handler&) = delete;
  zap_handler& operator=(const zap_handler&) = delete;

  void start();  // REQUIRES: not started before
  void stop();   // joins the thread (within about 100 ms); idempotent
  // Swaps in a new list of allowed keys for the connections from now on; throws curve_error (and keeps the
  // list in force) when a key is not a CURVE public key.
  void replace_allowed(std::vector<allowed_key> allowed);
  zap_stats stats() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace rmbus::bus
