#pragma once
// The HTTP endpoint Prometheus scrapes: `GET /metrics` answers with the text a callback renders
// (Content-Type `text/plain; version=0.0.4; charset=utf-8`), `GET /` with a small page linking to it, anything
// else 404. Served by cpp-httplib (Debian's libcpp-httplib-dev) on a thread of its own.
//
// Binding happens in the constructor, on the caller's thread, so a busy port or a bad host fails at once with
// an exception naming the address (rmbus then exits 1, as for its other endpoints) and before the caller has
// started anything else. The socket is bound with SO_REUSEADDR only: cpp-httplib's default also sets
// SO_REUSEPORT, which would let a second process bind the same port and silently take half of the scrapes.
//
// Serving: one listening thread and two workers. Connections are closed after each response and a client
// that sends nothing is dropped after a second, so stop() returns promptly even while a scraper is connected.
// The render callback is called by one scrape at a time.
//
// No httplib header here (pimpl): it pulls in OpenSSL, zlib and brotli declarations.
//
// Thread-safety: construct, start() and stop() from one owner thread; the callback runs on a worker thread.

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace rmbus::metrics {

class metrics_http {
 public:
  using render_fn = std::function<std::string()>;

  // Binds `address`: HOST:PORT, HOST a name, an IPv4 address, [IPv6] or * (every IPv4 interface); PORT 0
  // binds a free port (see port()). Throws std::runtime_error("metrics endpoint HOST:PORT: ...") when the
  // address is malformed or cannot be bound. REQUIRES: render set.
  metrics_http(std::string_view address, render_fn render);
  ~metrics_http();  // stop(); closes the socket also when never started
  metrics_http(const metrics_http&) = delete;
  metrics_http& operator=(const metrics_http&) = delete;

  // Starts serving on its own thread and returns once it accepts connections. REQUIRES: not started before.
  void start();
  // Closes the listening socket and joins the serving thread. Idempotent.
  void stop();

  int port() const;                  // the port actually bound
  const std::string& host() const;   // as bound (brackets of an IPv6 address removed)

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace rmbus::metrics
