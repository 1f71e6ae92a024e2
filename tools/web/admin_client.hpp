#pragma once
// rmbus-web's side of the RM's admin endpoint (docs/protocol.md section 5): one request, one reply, each a
// MessagePack map, over a ZeroMQ REQ socket. The web monitor only ever asks `explain` (read-only); this class
// asks whatever it is given and leaves the choice of commands to its caller.
//
// A fresh REQ socket per request: a REQ socket whose reply never came cannot send again, and a request every
// few seconds makes the connection cost nothing worth keeping. Requests are taken one at a time (a mutex), so
// a page clicking fast never opens many sockets. With CURVE, a refused handshake is told apart from silence
// (the RM admits only keys listed with the admin role).
//
// Thread-safety: request() may be called from any thread.

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "bus/curve.hpp"
#include "messages/admin.hpp"

namespace zmq {
class context_t;
}

namespace rmbus::web {

struct admin_client_options {
  std::string endpoint;
  std::optional<bus::curve_client> curve;
  std::chrono::milliseconds timeout{5000};
};

// The reply, or what went wrong before one came (no answer, refused key, unreadable reply).
struct admin_outcome {
  std::optional<messages::admin_reply> reply;
  std::string error;
};

class admin_client {
 public:
  admin_client(zmq::context_t& ctx, admin_client_options options);
  ~admin_client();
  admin_client(const admin_client&) = delete;
  admin_client& operator=(const admin_client&) = delete;

  // Asks the endpoint given at construction, or `endpoint` (with the same CURVE keys and timeout).
  admin_outcome request(const messages::admin_request& req);
  admin_outcome request(const messages::admin_request& req, const std::string& endpoint);
  const std::string& endpoint() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace rmbus::web
