#include "metrics/metrics_http.hpp"

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rmbus::metrics {

namespace {

// cpp-httplib's Server with one addition: closing a socket that was bound but never served (the caller failed
// to start something else after binding us). Server::stop() only closes the socket of a running server.
class server : public httplib::Server {
 public:
  void close_unserved() {
    const auto s = svr_sock_.exchange(INVALID_SOCKET);
    if (s != INVALID_SOCKET) ::close(s);
  }
};

struct host_port {
  std::string host;
  int port = 0;
};

host_port parse_address(std::string_view address) {
  const auto colon = address.rfind(':');
  auto bad = [&](const std::string& why) {
    return std::runtime_error("metrics endpoint '" + std::string{address} + "': " + why);
  };
  if (colon == std::string_view::npos) throw bad("expected HOST:PORT");
  host_port hp;
  hp.host = std::string{address.substr(0, colon)};
  const auto port = address.substr(colon + 1);
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), hp.port);
  if (ec != std::errc{} || end != port.data() + port.size() || hp.port < 0 || hp.port > 65535)
    throw bad("the port must be a number in 0..65535");
  if (hp.host.size() >= 2 && hp.host.front() == '[' && hp.host.back() == ']') hp.host = hp.host.substr(1, hp.host.size() - 2);
  if (hp.host == "*") hp.host = "0.0.0.0";
  if (hp.host.empty()) throw bad("the host is empty");
  return hp;
}

constexpr const char* index_page =
    "<!DOCTYPE html>\n<html><head><title>rmbus metrics</title></head>\n"
    "<body><h1>rmbus</h1><p><a href=\"/metrics\">/metrics</a>: Prometheus metrics of this process.</p></body></html>\n";

}  // namespace

struct metrics_http::impl {
  render_fn render;
  std::mutex render_mutex;  // one scrape renders at a time
  server svr;
  std::string host;
  int port = 0;
  std::thread thread;
  std::atomic<bool> finished{false};
  bool stopped = false;
};

metrics_http::metrics_http(std::string_view address, render_fn render) : impl_(std::make_unique<impl>()) {
  auto& m = *impl_;
  if (!render) throw std::invalid_argument("metrics_http: render callback must be set");
  m.render = std::move(render);
  auto hp = parse_address(address);
  m.host = hp.host;

  m.svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);  // restart over TIME_WAIT; never REUSEPORT
  });
  m.svr.new_task_queue = [] { return new httplib::ThreadPool(2); };
  m.svr.set_keep_alive_max_count(1);  // one request per connection: no worker waits on an idle connection
  m.svr.set_keep_alive_timeout(1);    // a client that sends nothing is dropped after a second
  m.svr.set_read_timeout(2, 0);
  m.svr.set_write_timeout(2, 0);
  m.svr.set_payload_max_length(4096);  // GET only: nobody needs to send us a body
  m.svr.Get("/metrics", [&m](const httplib::Request&, httplib::Response& res) {
    try {
      std::string body;
      {
        std::lock_guard lock{m.render_mutex};
        body = m.render();
      }
      res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
    } catch (const std::exception& e) {
      spdlog::error("metrics: rendering failed: {}", e.what());
      res.status = 500;
      res.set_content(std::string{"rendering the metrics failed: "} + e.what() + "\n", "text/plain");
    }
  });
  m.svr.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content(index_page, "text/html"); });
  m.svr.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.status == 404) res.set_content("not found; the metrics are at /metrics\n", "text/plain");
  });

  errno = 0;
  bool bound = false;
  if (hp.port == 0) {
    const int p = m.svr.bind_to_any_port(hp.host);
    bound = p > 0;
    if (bound) m.port = p;
  } else {
    bound = m.svr.bind_to_port(hp.host, hp.port);
    m.port = hp.port;
  }
  if (!bound) {
    const int err = errno;
    throw std::runtime_error("metrics endpoint " + std::string{address} + ": cannot bind: " +
                             (err != 0 ? std::string{std::strerror(err)} : std::string{"unknown host or address"}));
  }
}

metrics_http::~metrics_http() {
  stop();
  impl_->svr.close_unserved();
}

void metrics_http::start() {
  auto& m = *impl_;
  if (m.thread.joinable() || m.stopped) throw std::logic_error("metrics_http: started twice");
  m.thread = std::thread([&m] {
    if (!m.svr.listen_after_bind()) spdlog::error("metrics: the HTTP server on {}:{} stopped with an error", m.host, m.port);
    m.finished = true;
  });
  // Server::stop() does nothing until the server runs, so wait for that: stop() right after start() must
  // not leave the thread serving forever. It takes microseconds; the bound only guards against a bug.
  for (int i = 0; i < 5000 && !m.svr.is_running() && !m.finished; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void metrics_http::stop() {
  auto& m = *impl_;
  if (m.stopped) return;
  m.stopped = true;
  if (!m.thread.joinable()) return;
  m.svr.stop();
  m.thread.join();
}

int metrics_http::port() const { return impl_->port; }
const std::string& metrics_http::host() const { return impl_->host; }

}  // namespace rmbus::metrics
