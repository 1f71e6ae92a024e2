#pragma once
// The receiving end of the bus: a ZeroMQ SUB socket (two with a held batched topic, see batch_hold) owned by
// one thread, which checks each message's frames and envelope, accounts its sequence number, and hands it to a
// callback.
//
// The owner thread polls with a timeout (poll_interval) so it sees the stop flag, and drains what is queued
// with non-blocking receives. A multipart message is accepted when it has exactly two frames [topic, body],
// the topic is at most max_topic_bytes of valid UTF-8, and the body decodes as an envelope (MessagePack map
// with v, seq >= 1, ts_ms, non-empty src) under `limits`. Anything else is counted and reported to
// on_bad_message with the topic and the error; the subscriber keeps going.
//
// Sequence accounting (bus/sequence_tracker.hpp): per (src, topic); gaps are counted only between messages
// seen (a late joiner is not charged for what came before it); a seq at or below the last one seen from that
// (src, topic) is a publisher restart (with several forwarders: if sent later than every message seen from
// it), logged at info. Connected to several forwarders (`endpoint` a comma-separated list), the subscriber
// receives each message once per forwarder: the copies, and messages arriving after a later one of their
// stream, are dropped and counted (`duplicates`, `late`), so the handler sees each stream in seq order, each
// message once. With one endpoint the rules are exactly those before several forwarders existed.
//
// Callbacks run on the subscriber's own thread, one at a time; they must not block for long (the socket's
// receive queue, rcvhwm, fills meanwhile and the publisher side then drops: visible as gaps). A callback that
// only queues (the CAF bridge) never blocks, so the queue behind it is bounded by `bound` where one is set.
//
// Thread-safety: start/stop/stats may be called from any thread; stats() returns a consistent snapshot.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bus/bus_message.hpp"
#include "bus/curve.hpp"
#include "bus/in_flight_bound.hpp"
#include "bus/endpoints.hpp"
#include "messages/envelope.hpp"

namespace zmq {
class context_t;
}

namespace rmbus::bus {

struct subscriber_options {
  std::string name = "subscriber";             // for logs only
  // The forwarder's XPUB side, or where to bind; several forwarders separated by commas (bus/endpoint_list.hpp).
  std::string endpoint{default_sub_endpoint};
  attach mode = attach::connect;
  std::optional<curve_client> curve;  // CURVE client keys (docs/bus.md "Security"); none: CURVE off
  std::vector<std::string> topics{""};  // prefix subscriptions; "" = everything
  int rcvhwm = 10000;
  std::chrono::milliseconds poll_interval{50};  // bound on how long stop() waits for the thread
  // After a drain that emptied the socket, wait this long before looking again, so that messages arriving a
  // millisecond apart (a cluster's heartbeats) are handed on in bursts: every hand-over wakes the receiving
  // threads, and on a quiet RM those wake-ups, not the work, were the cost. 0: look again at once.
  std::chrono::microseconds coalesce{0};
  std::size_t max_topic_bytes = 256;
  std::size_t max_streams = 65536;  // (src, topic) pairs tracked for seq accounting
  messages::decode_limits limits{};
  // Back-pressure toward a slow consumer: accepted messages whose topic starts with `bounded_topic` are
  // handed on only while `bound` admits them (bus/in_flight_bound.hpp); the rest are shed and counted
  // (subscriber_stats::shed). No bound: everything is handed on.
  std::shared_ptr<in_flight_bound> bound;
  std::string bounded_topic;
  // The key of a bounded message (a heartbeat's node name), or nullopt. With it, a key handed on within the
  // bound's known window passes even at the bound (bus/known_keys.hpp); without it, every message counts alike.
  std::function<std::optional<std::string_view>(std::string_view body)> bound_key;
  // Accepted messages of exactly this topic are collected over one drain of the socket and handed on together
  // at its end (subscriber_handlers::on_batch), the others one at a time as they come. Empty: none batched.
  std::string batched_topic;
  // A batch is held over further drains until its first message has waited this long (or it holds
  // max_batch_messages), so that a steady trickle (an idle cluster's heartbeats, 5,000 a second at 50,000
  // nodes) wakes the receiving threads a few dozen times a second, not at every drain. The other topics are
  // not held. 0: each drain's batch is handed on at its end.
  // When connecting, with the batched topic among `topics` and no other topic a prefix of it or starting with
  // it, the batched topic has a SUB socket of its own that is read only when its batch is due: its arrivals
  // then wake this thread once per hold, not at each one, and the other topics' drains are not spent on it.
  // A stream of more than a quarter batch per hold is read every millisecond or two instead (its batch still
  // held until full or due), so that a busy stream never waits in ZeroMQ's queue for a whole hold.
  std::chrono::milliseconds batch_hold{0};
  // Messages of exactly this topic whose body ends with the value of `unread_tail_key` have their envelope
  // read from the entries before that value (messages::decode_envelope_before); the value is left to the
  // consumer's decoder, which checks it whole. For the work map: reading its envelope through 16 MB of items
  // cost more than the differencing of a map that changed little. Empty: every body is read whole.
  std::string unread_tail_topic;
  std::string unread_tail_key;
  // Gaps in the streams of exactly this topic are by design and counted apart (subscriber_stats::shed_gaps),
  // not as `gaps` / `missing`: the topic a forwarder sheds repeats of (bus/forwarder.hpp), whose shed messages
  // leave holes in their senders' seq. Empty: every gap counts.
  std::string shed_topic;
};

struct subscriber_handlers {
  std::function<void(bus_message&&)> on_message;           // REQUIRES: set
  std::function<void(const bad_message&)> on_bad_message;  // optional; bad messages are counted regardless
  std::function<void(bus_batch&&)> on_batch;               // REQUIRES: set when options.batched_topic is
};

// A plain snapshot for metrics and monitors.
struct subscriber_stats {
  std::uint64_t received = 0;                     // messages accepted and delivered (each once)
  std::uint64_t gaps = 0;                         // jumps in seq within a (src, topic) stream
  std::uint64_t missing = 0;                      // seq numbers skipped over by those jumps
  std::uint64_t restarts = 0;                     // publisher restarts detected
  std::uint64_t bad_messages = 0;                 // rejected multipart messages
  std::uint64_t untracked = 0;                    // accepted but beyond max_streams, so not seq-checked
  std::map<std::string, std::uint64_t> by_topic;  // accepted messages per topic (at most max_streams topics)
  std::uint64_t other_topics = 0;                 // accepted messages on topics beyond that bound
  std::uint64_t shed = 0;                         // accepted but dropped: the in-flight bound was reached
  std::uint64_t duplicates = 0;                   // copies of a message already seen (several forwarders)
  std::uint64_t late = 0;                         // older than a message of its stream already handed on
  std::uint64_t shed_gaps = 0;                    // gaps on options.shed_topic (by design, not losses)
};

class subscriber {
 public:
  // Creates the socket, subscribes and connects or binds it on the calling thread (so a bad endpoint throws
  // zmq::error_t here), then start() hands the socket to the owner thread.
  subscriber(zmq::context_t& ctx, subscriber_options options, subscriber_handlers handlers);
  ~subscriber();  // stop()
  subscriber(const subscriber&) = delete;
  subscriber& operator=(const subscriber&) = delete;

  void start();  // starts the owner thread; REQUIRES: not started before
  void stop();   // sets the stop flag, joins the thread (within about poll_interval), closes the socket

  // Actually connected or bound (real port after binding :0); a list joined by commas.
  const std::string& endpoint() const;
  subscriber_stats stats() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace rmbus::bus
