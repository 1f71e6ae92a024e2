#include "tools/web/web_server.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include "messages/utf8.hpp"
#include "tools/web/admin_json.hpp"
#include "tools/web/json_writer.hpp"
#include "tools/web/page_assets.hpp"

namespace rmbus::web {

namespace {

// cpp-httplib's Server, able to close a socket that was bound but never served.
class server : public httplib::Server {
 public:
  void close_unserved() {
    const auto s = svr_sock_.exchange(INVALID_SOCKET);
    if (s != INVALID_SOCKET) ::close(s);
  }
};

std::string error_json(const std::string& what) {
  return "{\"ok\":false,\"error\":" + json_string(what) + "}";
}

}  // namespace

struct web_server::impl {
  impl(web_server_options o, snapshot_hub& h, explain_fn e) : options(std::move(o)), hub(h), explain(std::move(e)) {}
  web_server_options options;
  snapshot_hub& hub;
  explain_fn explain;
  server svr;
  int port = 0;
  std::thread thread;
  std::atomic<int> streams{0};
  std::atomic<bool> finished{false};
  bool stopped = false;
};

web_server::web_server(web_server_options options, snapshot_hub& hub, explain_fn explain)
    : impl_(std::make_unique<impl>(std::move(options), hub, std::move(explain))) {
  auto& m = *impl_;
  m.svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  const int threads = std::max(m.options.threads, m.options.max_streams + 2);
  m.svr.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  m.svr.set_read_timeout(5, 0);
  m.svr.set_write_timeout(10, 0);  // a snapshot of several MB to a slow browser
  m.svr.set_payload_max_length(4096);  // GET only
  m.svr.set_keep_alive_timeout(5);

  auto security = [](httplib::Response& res) {
    // Everything the page needs comes from here; nothing may load from elsewhere, and nothing frames it.
    // Inline style attributes are allowed (bar widths, user colours); scripts only from app.js.
    res.set_header("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'");
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Cache-Control", "no-store");
  };
  m.svr.Get("/", [security](const httplib::Request&, httplib::Response& res) {
    security(res);
    res.set_content(std::string{page_html()}, "text/html; charset=utf-8");
  });
  m.svr.Get("/app.js", [security](const httplib::Request&, httplib::Response& res) {
    security(res);
    res.set_content(std::string{page_js()}, "text/javascript; charset=utf-8");
  });
  m.svr.Get("/app.css", [security](const httplib::Request&, httplib::Response& res) {
    security(res);
    res.set_content(std::string{page_css()}, "text/css; charset=utf-8");
  });
  m.svr.Get("/api/snapshot", [&m](const httplib::Request&, httplib::Response& res) {
    const auto s = m.hub.latest_snapshot();
    if (!s) {
      res.status = 503;
      res.set_content(error_json("no snapshot yet"), "application/json");
      return;
    }
    res.set_content(*s, "application/json");
  });
  m.svr.Get("/api/explain", [&m](const httplib::Request& req, httplib::Response& res) {
    const auto job = req.get_param_value("job");
    if (job.empty() || job.size() > 1024 || !messages::valid_utf8(job)) {
      res.status = 400;
      res.set_content(error_json("job: expected a job id (1..1024 bytes of UTF-8)"), "application/json");
      return;
    }
    const auto r = m.explain(job);
    res.status = r.status;
    res.set_content(r.body, "application/json");
  });
  m.svr.Get("/events", [&m](const httplib::Request&, httplib::Response& res) {
    if (m.streams.fetch_add(1) >= m.options.max_streams) {
      m.streams.fetch_sub(1);
      res.status = 503;
      res.set_content("too many open event streams (" + std::to_string(m.options.max_streams) + ")\n", "text/plain");
      return;
    }
    res.set_header("Cache-Control", "no-store");
    res.set_header("X-Accel-Buffering", "no");
    auto seen = std::make_shared<snapshot_hub::cursor>();
    res.set_chunked_content_provider(
        "text/event-stream",
        [&m, seen](std::size_t, httplib::DataSink& sink) {
          const auto n = m.hub.wait(*seen, std::chrono::milliseconds(1000));
          if (n.closed || !sink.is_writable()) return false;
          if (!n.body) {
            constexpr std::string_view idle = ": idle\n\n";  // a comment: shows a dead connection to both sides
            return sink.write(idle.data(), idle.size());
          }
          // The shared snapshot is written as it is, never copied per stream: it is megabytes at 10,000 nodes.
          const std::string_view head = n.snapshot ? "event: snapshot\ndata: " : "event: health\ndata: ";
          return sink.write(head.data(), head.size()) && sink.write(n.body->data(), n.body->size()) &&
                 sink.write("\n\n", 2);
        },
        [&m](bool) { m.streams.fetch_sub(1); });
  });

  errno = 0;
  const auto& l = m.options.listen;
  bool bound = false;
  if (l.port == 0) {
    const int p = m.svr.bind_to_any_port(l.host);
    bound = p > 0;
    m.port = p;
  } else {
    bound = m.svr.bind_to_port(l.host, l.port);
    m.port = l.port;
  }
  if (!bound) {
    const int err = errno;
    throw std::runtime_error("--listen " + l.host + ":" + std::to_string(l.port) + ": cannot bind: " +
                             (err != 0 ? std::string{std::strerror(err)} : std::string{"unknown host or address"}));
  }
}

web_server::~web_server() {
  stop();
  impl_->svr.close_unserved();
}

void web_server::start() {
  auto& m = *impl_;
  if (m.thread.joinable() || m.stopped) throw std::logic_error("web_server: started twice");
  m.thread = std::thread([&m] {
    if (!m.svr.listen_after_bind()) spdlog::error("the HTTP server on {}:{} stopped with an error", m.options.listen.host, m.port);
    m.finished = true;
  });
  // Server::stop() does nothing until the server runs; wait for that (microseconds) so stop() never misses it.
  for (int i = 0; i < 5000 && !m.svr.is_running() && !m.finished; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void web_server::stop() {
  auto& m = *impl_;
  if (m.stopped) return;
  m.stopped = true;
  m.hub.close();  // event streams return at once instead of holding the pool's threads
  if (!m.thread.joinable()) return;
  m.svr.stop();
  m.thread.join();
}

int web_server::port() const { return impl_->port; }
const std::string& web_server::host() const { return impl_->options.listen.host; }

}  // namespace rmbus::web
