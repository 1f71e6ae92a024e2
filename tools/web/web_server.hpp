#pragma once
// rmbus-web's HTTP side (cpp-httplib): the page and its two assets, built into the binary; the live stream of
// page data as server-sent events; the latest snapshot as JSON; and `explain` of one job. Nothing else is
// served, and no request changes anything: the monitor is read-only.
//
//   GET /                 the page (index.html)          GET /app.js, /app.css   its script and style
//   GET /events           text/event-stream: "snapshot" events (the whole page data), then "health" ticks
//                         between them; at most max_streams at once (503 beyond: each holds a thread)
//   GET /api/snapshot     the latest snapshot (for scripts and tests)
//   GET /api/explain?job=ID   the admin endpoint's explain of that job, as JSON {ok, error, results}
//
// No httplib header here (pimpl): it pulls in OpenSSL, zlib and brotli declarations.
//
// Thread-safety: start/stop from the owner; handlers run on the server's own threads.

#include <functional>
#include <memory>
#include <string>

#include "tools/web/endpoints.hpp"
#include "tools/web/snapshot_hub.hpp"

namespace rmbus::web {

struct web_server_options {
  listen_address listen{"127.0.0.1", 8080};
  int max_streams = 8;
  int threads = 12;  // streams hold a thread each; the rest serve pages and explain
};

// The explain of a job as the JSON body to send, and the HTTP status.
struct json_response {
  int status = 200;
  std::string body;
};
using explain_fn = std::function<json_response(const std::string& job)>;

class web_server {
 public:
  // Binds at once (throws std::runtime_error naming the address and the reason when it cannot).
  web_server(web_server_options options, snapshot_hub& hub, explain_fn explain);
  ~web_server();  // stop()
  web_server(const web_server&) = delete;
  web_server& operator=(const web_server&) = delete;

  void start();
  void stop();
  int port() const;  // the bound port (a free one when 0 was asked)
  const std::string& host() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace rmbus::web
