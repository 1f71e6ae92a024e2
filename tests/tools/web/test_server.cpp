// The real rmbus-web executable against a fake RM on a loopback bus: what its HTTP side serves (the page, the
// live stream, the snapshot, explain and its errors), that it serves nothing that changes anything, and how
// its command line refuses what it cannot use.
#include <catch2/catch.hpp>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>

#include "messages/rm_cycle.hpp"
#include "messages/rm_event.hpp"
#include "messages/rm_nodes.hpp"
#include "messages/rm_state.hpp"
#include "messages/topics.hpp"
#include "tests/e2e/file_waits.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/fake_rm.hpp"
#include "tests/tools/web/web_process.hpp"

namespace msg = rmbus::messages;
namespace ts = rmbus::test_support;
namespace topics = rmbus::messages::topics;
using nlohmann::json;

namespace {

// A job whose name is markup: the page must show it as text, and the JSON must carry it intact.
const std::string hostile = "<img src=x onerror=alert(1)>\"</script>";

msg::rm_state state() {
  msg::rm_state s;
  s.cycle = 3;
  msg::job_schedule j;
  j.id = hostile;
  j.user = "alice";
  j.class_name = "normal";
  j.status = msg::job_status::scheduled;
  j.memory_mb = 4096;
  j.shares = {{"x.1", "n1", 4, msg::share_status::running, {}}};
  j.given = 1;
  j.demand = 4;
  j.fair_share = 2;
  s.jobs = {j};
  return s;
}

msg::rm_nodes nodes() {
  msg::rm_nodes n;
  n.nodes = {{"n1", "default", "default", msg::node_state::up, 16384, 16, 12, 0}};
  return n;
}

// rmbus-web with `args` and its log in /tmp (removed at the end).
struct web_under_test {
  std::string log = "/tmp/rmbus-web-test-" + std::to_string(::getpid()) + "-" + std::to_string(ts::free_port()) + ".log";
  ts::web_process proc;
  explicit web_under_test(std::vector<std::string> args)
      : proc(log, [&] {
          args.insert(args.end(), {"--log-level", "info"});
          return args;
        }()) {}
  ~web_under_test() { std::remove(log.c_str()); }
  httplib::Client client() const { return proc.client(); }
};

}  // namespace

TEST_CASE("rmbus-web serves the page, the snapshot and the live stream of a fake RM", "[web][server]") {
  ts::fake_rm rm{[](rmbus::bus::publisher& pub) {
    pub.publish(topics::rm_state, state());
    pub.publish(topics::rm_nodes, nodes());
    pub.publish(topics::rm_events, msg::rm_event{"node_up", {{"node", "n1"}}});
  }};
  web_under_test web{{"--bus-sub", rm.endpoint()}};
  auto c = web.client();

  const auto page = c.Get("/");
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK(page->get_header_value("Content-Type").rfind("text/html", 0) == 0);
  CHECK(page->body.find("<script src=\"/app.js\">") != std::string::npos);
  // Nothing may load from elsewhere: the page works with no network.
  CHECK(page->get_header_value("Content-Security-Policy").find("default-src 'self'") != std::string::npos);
  CHECK(page->body.find("http://") == std::string::npos);
  CHECK(page->body.find("https://") == std::string::npos);
  const auto js = c.Get("/app.js");
  REQUIRE(js);
  CHECK(js->status == 200);
  CHECK(js->body.find("new EventSource('/events')") != std::string::npos);
  CHECK(c.Get("/app.css")->status == 200);

  // The snapshot fills in once a round arrived.
  json snap;
  REQUIRE(rmbus::e2e::eventually(
      [&] {
        const auto r = c.Get("/api/snapshot");
        if (!r || r->status != 200) return false;
        snap = json::parse(r->body);
        return snap["health"]["cycle"] == 3 && snap["nodes"].size() == 1;
      },
      std::chrono::seconds(20)));
  REQUIRE(snap["jobs"].size() == 1);
  CHECK(snap["jobs"][0][0] == hostile);  // the markup travels as text, intact
  CHECK(snap["jobs"][0][11] == "default");
  CHECK(snap["health"]["src"] == "fake-rm");
  CHECK(snap["health"]["admin"] == false);

  // The stream starts with a whole snapshot, as server-sent events.
  std::string stream;
  const auto r = c.Get("/events", [&](const char* data, std::size_t n) {
    stream.append(data, n);
    return stream.find("\n\n") == std::string::npos;  // stop after the first event
  });
  CHECK(stream.rfind("event: snapshot\ndata: {\"type\":\"snapshot\"", 0) == 0);
}

TEST_CASE("rmbus-web is read-only and refuses bad explain requests clearly", "[web][server]") {
  const auto silent = ts::loopback(ts::free_port());
  SECTION("without --admin, explain says how to turn it on") {
    web_under_test web{{"--bus-sub", silent}};
    auto c = web.client();
    const auto r = c.Get("/api/explain?job=j1");
    REQUIRE(r);
    CHECK(r->status == 404);
    CHECK(json::parse(r->body)["error"] ==
          "explain needs the admin endpoint: start rmbus-web with --admin");
    // Nothing that changes anything is served.
    const auto post = c.Post("/api/explain?job=j1", "", "text/plain");
    REQUIRE(post);
    CHECK(post->status >= 400);
    CHECK(c.Get("/api/vary_off")->status == 404);
  }
  SECTION("a job id that is empty or not UTF-8 is refused before the RM is asked") {
    web_under_test web{{"--bus-sub", silent, "--admin", ts::loopback(ts::free_port())}};
    auto c = web.client();
    auto r = c.Get("/api/explain?job=");
    REQUIRE(r);
    CHECK(r->status == 400);
    CHECK(json::parse(r->body)["error"] == "job: expected a job id (1..1024 bytes of UTF-8)");
    r = c.Get("/api/explain?job=%C0%AF");  // an overlong '/'
    REQUIRE(r);
    CHECK(r->status == 400);
  }
  SECTION("an RM that does not answer gives 504 within the timeout, and the server keeps serving") {
    const auto admin = ts::loopback(ts::free_port());
    web_under_test web{{"--bus-sub", silent, "--admin", admin, "--admin-timeout-ms", "300"}};
    auto c = web.client();
    const auto r = c.Get("/api/explain?job=j1");
    REQUIRE(r);
    CHECK(r->status == 504);
    CHECK(json::parse(r->body)["error"] == "no answer from " + admin + " within 300 ms");
    CHECK(c.Get("/")->status == 200);
    // The outcome is logged, with the endpoint asked.
    CHECK(rmbus::e2e::eventually(
        [&] {
          return rmbus::e2e::read_all(web.log).find("explain j1 at " + admin + ": no answer from") != std::string::npos;
        },
        std::chrono::seconds(5)));
  }
}

TEST_CASE("rmbus-web refuses what it cannot use, with exit status 2 and the reason", "[web][server]") {
  auto run = [](std::vector<std::string> args) { return ts::run_to_end(RMBUS_WEB_BIN, args, std::chrono::seconds(20)); };
  auto r = run({"--listen", "8080"});
  INFO(r.output);
  CHECK(r.status == std::optional<int>{2});
  CHECK(r.output.find("--listen '8080': expected HOST:PORT") != std::string::npos);

  // A port already taken.
  const auto port = ts::free_port();
  httplib::Server taken;
  REQUIRE(taken.bind_to_port("127.0.0.1", port));
  r = run({"--bus-sub", ts::loopback(ts::free_port()), "--listen", "127.0.0.1:" + std::to_string(port)});
  INFO(r.output);
  CHECK(r.status == std::optional<int>{2});
  CHECK(r.output.find("cannot bind") != std::string::npos);

  r = run({"--log-level", "loud"});
  CHECK(r.status == std::optional<int>{2});
  CHECK(r.output.find("unknown level 'loud'") != std::string::npos);

  r = run({"--key", "/nonexistent/web.key"});
  CHECK(r.status == std::optional<int>{2});
  CHECK(r.output.find("rmbus-web:") != std::string::npos);

  r = run({"--config", "/nonexistent/rmbus.toml"});
  CHECK(r.status == std::optional<int>{2});

  // A configuration with CURVE on needs this monitor's key.
  const auto cfg = "/tmp/rmbus-web-test-curve-" + std::to_string(::getpid()) + ".toml";
  std::ofstream(cfg) << rmbus::e2e::read_all(RMBUS_SOURCE_DIR "/tools/sim/rmbus-sim.toml") << "\n[security]\ncurve = true\n";
  r = run({"--config", cfg});
  std::remove(cfg.c_str());
  INFO(r.output);
  CHECK(r.status == std::optional<int>{2});
  CHECK(r.output.find("[security] curve = true: give --key") != std::string::npos);
}

TEST_CASE("rmbus-web takes SIGHUP (systemctl reload): it logs that nothing is reloaded and keeps serving",
          "[web][server]") {
  ts::fake_rm rm{[](rmbus::bus::publisher& pub) {
    pub.publish(topics::rm_state, state());
    pub.publish(topics::rm_nodes, nodes());
  }};
  web_under_test web{{"--bus-sub", rm.endpoint()}};
  REQUIRE(rmbus::e2e::eventually(
      [&] {
        const auto [status, body] = web.proc.get("/api/snapshot");
        return status == 200 && json::parse(body)["health"]["cycle"] == 3;
      },
      std::chrono::seconds(20)));
  for (int reload = 1; reload <= 2; ++reload) {
    INFO("reload " << reload);
    web.proc.signal(SIGHUP);
    REQUIRE(rmbus::e2e::eventually(
        [&] {
          const auto text = rmbus::e2e::read_all(web.log);
          std::size_t lines = 0;
          for (auto at = text.find("reload (SIGHUP): nothing to reload"); at != std::string::npos;
               at = text.find("reload (SIGHUP): nothing to reload", at + 1))
            ++lines;
          return lines == static_cast<std::size_t>(reload);
        },
        std::chrono::seconds(10)));
    CHECK(web.proc.running());
    CHECK(web.proc.get("/").first == 200);
    const auto [status, body] = web.proc.get("/api/snapshot");
    CHECK(status == 200);
    CHECK(json::parse(body)["health"]["cycle"] == 3);
  }
}
