#pragma once
// Test helpers for the subscriber's tests: its options for an endpoint, and messages sent frame by frame
// from a raw socket, bypassing the publisher's stamping. Header-only, test code only.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "bus/subscriber.hpp"
#include "messages/envelope.hpp"

namespace rmbus::bus::testing {

inline subscriber_options sub_at(std::string endpoint, attach mode, std::vector<std::string> topics) {
  subscriber_options o;
  o.endpoint = std::move(endpoint);
  o.mode = mode;
  o.topics = std::move(topics);
  o.poll_interval = std::chrono::milliseconds{20};
  return o;
}

// Sends a multipart message frame by frame, bypassing the publisher's stamping.
inline void send_raw(zmq::socket_t& s, const std::vector<std::string>& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const auto flags = i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
    REQUIRE(s.send(zmq::buffer(frames[i]), flags));
  }
}

inline std::string envelope_body(std::uint64_t seq, const std::string& src) {
  messages::envelope env;
  env.seq = seq;
  env.ts_ms = 1;
  env.src = src;
  return messages::encode(env);
}

}  // namespace rmbus::bus::testing
