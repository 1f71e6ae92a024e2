#pragma once
// What the subscriber hands on: a received message whose envelope has been checked (bus_message), or a
// message that was rejected (bad_message). Both are plain values, so they can cross threads and become CAF
// messages: each has an `inspect` overload, which CAF 0.17 requires of a user type in a message and which
// needs no CAF header (this file is included widely; CAF headers are expensive to compile).
//
// The body is kept as the raw MessagePack bytes: the bus checks only the envelope (v, seq, ts_ms, src) and
// leaves decoding of the message itself to whoever handles the topic (messages::decode_<name>).

#include <cstdint>
#include <string>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::bus {

struct bus_message {
  std::string topic;
  std::string body;        // the whole MessagePack map, envelope keys included
  messages::envelope env;  // already decoded from body

  friend bool operator==(const bus_message&, const bus_message&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, bus_message& x) {
  return f(x.topic, x.body, x.env.v, x.env.seq, x.env.ts_ms, x.env.src);
}

// Messages of one topic taken in one drain of the socket, in the order received, handed on together (a
// cluster's heartbeats: one hand-over per burst instead of one per heartbeat; subscriber_options::batched_topic).
struct bus_batch {
  std::string topic;
  std::vector<bus_message> messages;

  friend bool operator==(const bus_batch&, const bus_batch&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, bus_batch& x) {
  return f(x.topic, x.messages);
}

// A multipart message that is not [topic, body-with-valid-envelope]. error.topic is the first frame made
// printable (bytes outside printable ASCII escaped as \xNN, cut to a bounded length), so it can go into logs
// and into an rm.events bad_message event without carrying hostile bytes further.
struct bad_message {
  messages::decode_error error;
  std::uint32_t frames = 0;  // how many frames the multipart message had (capped at the first few hundred)

  friend bool operator==(const bad_message&, const bad_message&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, bad_message& x) {
  return f(x.error.topic, x.error.field, x.error.what, x.frames);
}

}  // namespace rmbus::bus
