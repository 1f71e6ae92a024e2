// The real rmbus-top executable with --once, against messages published on a real loopback bus: a forwarder
// bound on ephemeral ports, a publisher playing the RM. It must print the picture those messages describe,
// and say clearly (exit 3) when nothing arrives.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include <zmq.hpp>

#include "bus/forwarder.hpp"
#include "bus/publisher.hpp"
#include "messages/rm_cycle.hpp"
#include "messages/rm_event.hpp"
#include "messages/rm_nodes.hpp"
#include "messages/rm_state.hpp"
#include "messages/topics.hpp"
#include "tests/support/child_process.hpp"

namespace msg = rmbus::messages;
namespace ts = rmbus::test_support;

namespace {

msg::rm_state state() {
  msg::rm_state s;
  s.cycle = 7;
  msg::job_schedule j;
  j.id = "alice-1";
  j.user = "alice";
  j.class_name = "normal";
  j.status = msg::job_status::scheduled;
  j.memory_mb = 4096;
  j.shares = {{"x.1", "n1", 4, msg::share_status::running}, {"x.2", "n2", 4, msg::share_status::new_}};
  j.given = 2;
  j.demand = 9;
  j.fair_share = 3;
  msg::job_schedule p;
  p.id = "bob-1";
  p.user = "bob";
  p.class_name = "normal";
  p.status = msg::job_status::pending;
  p.reason = "no machine of order 64 in pool default";
  p.memory_mb = 65536;
  p.demand = 1;
  s.jobs = {j, p};
  return s;
}

msg::rm_nodes nodes() {
  msg::rm_nodes n;
  n.nodes = {{"n1", "default", "default", msg::node_state::up, 16384, 16, 12, 0},
             {"n2", "default", "default", msg::node_state::up, 16384, 16, 12, 0},
             {"n3", "default", "default", msg::node_state::down, 16384, 16, 16, 6}};
  return n;
}

}  // namespace

TEST_CASE("rmbus-top --once prints the picture the RM published") {
  zmq::context_t ctx;
  rmbus::bus::forwarder_options fo;
  fo.pub_endpoint = "tcp://127.0.0.1:0";
  fo.sub_endpoint = "tcp://127.0.0.1:0";
  rmbus::bus::forwarder fwd{ctx, fo};
  fwd.start();
  rmbus::bus::publisher_options po;
  po.name = "fake-rm";
  po.endpoint = fwd.pub_endpoint();
  rmbus::bus::publisher pub{ctx, po};
  msg::rm_cycle c;
  c.pool = "default";
  c.cycle = 7;
  c.jobs = 2;
  c.nodes = 2;
  c.given = 1;
  c.how_much_us = 11;
  c.what_of_us = 22;
  c.preempt_us = 33;
  c.defrag_us = 44;
  c.total_us = 150;

  // The RM's publications repeat every 100 ms (as rounds do) until the monitor has its picture: a
  // subscriber that joins late must be filled in by the next round.
  std::atomic<bool> done{false};
  std::thread rm([&] {
    for (int i = 0; i < 300 && !done; ++i) {
      pub.publish(msg::topics::rm_state, state());
      pub.publish(msg::topics::rm_cycle, c);
      pub.publish(msg::topics::rm_nodes, nodes());
      pub.publish(msg::topics::rm_events, msg::rm_event{"node_down", {{"node", "n3"}}});
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  const auto r = ts::run_to_end(RMBUS_TOP_BIN, {"--once", "--bus-sub", fwd.sub_endpoint(), "--timeout-ms", "15000", "--width", "200"},
                                std::chrono::seconds(30));
  done = true;
  rm.join();
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("rmbus-top  cycle 7  (rm.state ") != std::string::npos);
  CHECK(r.output.find("jobs 2  nodes 3\n") != std::string::npos);
  CHECK(r.output.find("\ndefault                   3     2       0     1     0        0           0       32       24\n") !=
        std::string::npos);
  CHECK(r.output.find("\nnormal           alice                1      2       8      2       9      3\n") != std::string::npos);
  CHECK(r.output.find("\nbob-1                    bob          normal       pending        0       0      0  no machine of "
                      "order 64 in pool default\n") != std::string::npos);
  CHECK(r.output.find("\ndefault                    7      2      2      1         0       0        11       22       33      "
                      "44      150\n") != std::string::npos);
  CHECK(r.output.find("node_down    node=n3") != std::string::npos);
  CHECK(r.output.find("0 gaps (0 missing)") != std::string::npos);
  fwd.stop();
}

TEST_CASE("rmbus-top --once says which endpoint stayed silent, and exits 3") {
  const int port = ts::free_port();
  const std::string ep = "tcp://127.0.0.1:" + std::to_string(port);
  const auto r = ts::run_to_end(RMBUS_TOP_BIN, {"--once", "--bus-sub", ep, "--timeout-ms", "500"}, std::chrono::seconds(20));
  INFO(r.output);
  CHECK(r.status == std::optional<int>{3});
  CHECK(r.output.find("no rm.state and rm.nodes arrived from " + ep + " within 500 ms") != std::string::npos);
}

TEST_CASE("rmbus-top refuses a bad argument and a full screen without a terminal") {
  auto r = ts::run_to_end(RMBUS_TOP_BIN, {"--once", "--width", "5"}, std::chrono::seconds(20));
  INFO(r.output);
  CHECK(r.status == std::optional<int>{2});
  CHECK(r.output.find("--width") != std::string::npos);
  r = ts::run_to_end(RMBUS_TOP_BIN, {"--bus-sub", "tcp://127.0.0.1:1"}, std::chrono::seconds(20));
  CHECK(r.status == std::optional<int>{2});
  CHECK(r.output.find("needs a terminal; use --once") != std::string::npos);
}
