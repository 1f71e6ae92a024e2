// The HTTP endpoint on loopback, fetched with a real HTTP client (cpp-httplib's Client): /metrics serves what
// the registry renders at that moment, / links to it, other paths are 404, a busy port is a clear error, and
// stop() is prompt even while a client holds a connection open.
#include <chrono>
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "metrics/metrics_http.hpp"
#include "metrics/metrics_registry.hpp"

using rmbus::metrics::metrics_http;
using rmbus::metrics::metrics_registry;

namespace {

httplib::Client client(int port) {
  httplib::Client c{"127.0.0.1", port};
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(5, 0);
  return c;
}

}  // namespace

TEST_CASE("GET /metrics serves the registry's text as version 0.0.4, and counters move between scrapes") {
  metrics_registry r;
  auto c = r.add_counter("rmbus_test_total", "A test counter.");
  metrics_http http{"127.0.0.1:0", [&r] { return r.render(); }};
  REQUIRE(http.port() > 0);
  http.start();
  auto cli = client(http.port());

  auto first = cli.Get("/metrics");
  REQUIRE(first);
  CHECK(first->status == 200);
  CHECK(first->get_header_value("Content-Type") == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(first->body == r.render());
  CHECK(first->body.find("\nrmbus_test_total 0\n") != std::string::npos);

  c.inc({}, 7);
  auto second = cli.Get("/metrics");
  REQUIRE(second);
  CHECK(second->body.find("\nrmbus_test_total 7\n") != std::string::npos);
  http.stop();
}

TEST_CASE("GET / links to /metrics and other paths are 404") {
  metrics_registry r;
  metrics_http http{"127.0.0.1:0", [&r] { return r.render(); }};
  http.start();
  auto cli = client(http.port());
  auto index = cli.Get("/");
  REQUIRE(index);
  CHECK(index->status == 200);
  CHECK(index->body.find("href=\"/metrics\"") != std::string::npos);
  auto other = cli.Get("/metricsx");
  REQUIRE(other);
  CHECK(other->status == 404);
  auto deeper = cli.Get("/metrics/extra");
  REQUIRE(deeper);
  CHECK(deeper->status == 404);
}

TEST_CASE("a failing render answers 500 and the server keeps serving") {
  bool fail = true;
  metrics_http http{"127.0.0.1:0", [&fail]() -> std::string {
                      if (fail) throw std::runtime_error("boom");
                      return "ok\n";
                    }};
  http.start();
  auto cli = client(http.port());
  auto bad = cli.Get("/metrics");
  REQUIRE(bad);
  CHECK(bad->status == 500);
  CHECK(bad->body.find("boom") != std::string::npos);
  fail = false;
  auto good = cli.Get("/metrics");
  REQUIRE(good);
  CHECK(good->body == "ok\n");
}

TEST_CASE("binding a busy port fails at once with an error naming the address") {
  metrics_registry r;
  metrics_http first{"127.0.0.1:0", [&r] { return r.render(); }};
  first.start();
  const auto address = "127.0.0.1:" + std::to_string(first.port());
  // The first server must not have set SO_REUSEPORT: with it a second one could bind the same port and take
  // half of the scrapes.
  try {
    metrics_http second{address, [&r] { return r.render(); }};
    FAIL("a second server bound " << address);
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    CHECK(what.find(address) != std::string::npos);
    CHECK(what.find("cannot bind") != std::string::npos);
    CHECK(what.find("Address already in use") != std::string::npos);
  }
  // A port held by some other program is refused alike.
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(s, 1) == 0);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  const auto held = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  CHECK_THROWS_WITH(metrics_http(held, [] { return std::string{}; }), Catch::Contains("cannot bind"));
  ::close(s);
}

TEST_CASE("malformed addresses are refused with the address in the error") {
  auto render = [] { return std::string{}; };
  CHECK_THROWS_WITH(metrics_http("localhost", render), Catch::Contains("'localhost'"));
  CHECK_THROWS_WITH(metrics_http("127.0.0.1:http", render), Catch::Contains("0..65535"));
  CHECK_THROWS_WITH(metrics_http(":9464", render), Catch::Contains("host is empty"));
}

TEST_CASE("a server never started releases its port, and so does a stopped one") {
  metrics_registry r;
  int port = 0;
  {
    metrics_http unstarted{"127.0.0.1:0", [&r] { return r.render(); }};
    port = unstarted.port();
  }
  const auto address = "127.0.0.1:" + std::to_string(port);
  {
    metrics_http again{address, [&r] { return r.render(); }};
    again.start();
    again.stop();
  }
  metrics_http third{address, [&r] { return r.render(); }};
  CHECK(third.port() == port);
}

TEST_CASE("stop() is prompt while a client holds a silent connection open") {
  metrics_registry r;
  metrics_http http{"127.0.0.1:0", [&r] { return r.render(); }};
  http.start();
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(http.port()));
  REQUIRE(::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  // The connection is accepted and a worker waits for a request that never comes (at most one second).
  const auto t0 = std::chrono::steady_clock::now();
  http.stop();
  const auto took = std::chrono::steady_clock::now() - t0;
  CHECK(took < std::chrono::seconds(3));
  ::close(s);
}
