#pragma once
// A fake RM on a loopback forwarder, for the monitors' tests (rmbus-top, rmbus-web): a forwarder bound on
// ephemeral ports and a publisher that calls `round` every 50 ms (as an RM publishes every round, so a monitor
// that joins late is filled in by the next one) until the test is done with it (at most 60 s).

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "bus/forwarder.hpp"
#include "bus/publisher.hpp"

namespace rmbus::test_support {

class fake_rm {
 public:
  explicit fake_rm(std::function<void(rmbus::bus::publisher&)> round) : fwd_(ctx_, loopback_forwarder()) {
    fwd_.start();
    rmbus::bus::publisher_options po;
    po.name = "fake-rm";
    po.endpoint = fwd_.pub_endpoint();
    thread_ = std::thread([this, round = std::move(round), po] {
      rmbus::bus::publisher pub{ctx_, po};
      for (int i = 0; i < 1200 && !done_; ++i) {
        round(pub);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
  }
  ~fake_rm() {
    done_ = true;
    thread_.join();
    fwd_.stop();
  }
  const std::string& endpoint() const { return fwd_.sub_endpoint(); }

 private:
  static rmbus::bus::forwarder_options loopback_forwarder() {
    rmbus::bus::forwarder_options fo;
    fo.pub_endpoint = "tcp://127.0.0.1:0";
    fo.sub_endpoint = "tcp://127.0.0.1:0";
    return fo;
  }

  zmq::context_t ctx_;
  rmbus::bus::forwarder fwd_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace rmbus::test_support
