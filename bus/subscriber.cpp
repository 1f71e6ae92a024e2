#include "bus/subscriber.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <zmq.hpp>

#include "bus/endpoint_list.hpp"
#include "bus/frame_checks.hpp"
#include "bus/known_keys.hpp"
#include "bus/repeat_filter.hpp"
#include "bus/sequence_tracker.hpp"
#include "bus/thread_name.hpp"

namespace rmbus::bus {

namespace {
// Upper bound on messages taken in one drain before the stop flag is looked at again.
constexpr int max_drain_batch = 1024;
// A held batch (subscriber_options::batch_hold) goes on at this size whatever its age.
constexpr std::size_t max_batch_messages = 1024;
// Keys remembered for the in-flight bound's known-key admission: 16 bytes each, 1 MiB in all, whatever
// the number of names heard.
constexpr std::size_t known_key_slots = 65536;

// The batched topic gets a socket of its own when the other subscriptions can leave it out: ZeroMQ has no
// negative subscription, so none of them may be a prefix of it ("" included) or start with it. Only when
// connecting: two sockets cannot bind one endpoint.
bool own_batch_socket(const subscriber_options& o) {
  if (o.batched_topic.empty() || o.batch_hold.count() == 0 || o.mode != attach::connect) return false;
  if (std::find(o.topics.begin(), o.topics.end(), o.batched_topic) == o.topics.end()) return false;
  return std::none_of(o.topics.begin(), o.topics.end(), [&](const std::string& t) {
    if (t == o.batched_topic) return false;
    return o.batched_topic.rfind(t, 0) == 0 || t.rfind(o.batched_topic, 0) == 0;
  });
}
}  // namespace

struct subscriber::impl {
  subscriber_options options;
  subscriber_handlers handlers;
  zmq::socket_t socket;
  // The batched topic's own socket, when it can have one (own_batch_socket): read only when its batch is due,
  // so a steady trickle of heartbeats wakes this thread once per batch_hold, not once per arrival.
  zmq::socket_t batch_socket;
  std::string endpoint;
  std::atomic<bool> stop_requested{false};
  std::thread thread;

  mutable std::mutex stats_mutex;  // guards stats; the tracker belongs to the thread alone
  subscriber_stats stats;
  sequence_tracker tracker;
  known_keys recent{known_key_slots};  // the thread's alone
  bus_batch batch;  // messages of options.batched_topic not yet handed on (batch_hold), the thread's alone
  std::chrono::steady_clock::time_point batch_since;  // when the batch's first message came

  impl(zmq::context_t& ctx, subscriber_options opts, subscriber_handlers h)
      : options(std::move(opts)),
        handlers(std::move(h)),
        socket(ctx, zmq::socket_type::sub),
        tracker(options.max_streams, split_endpoints(options.endpoint).size() > 1 ? sequence_tracker::paths::several
                                                                                 : sequence_tracker::paths::one) {
    if (!handlers.on_message) throw std::invalid_argument("subscriber: on_message handler must be set");
    if (!options.batched_topic.empty() && !handlers.on_batch)
      throw std::invalid_argument("subscriber: batched_topic needs an on_batch handler");
    batch.topic = options.batched_topic;
    const bool split = own_batch_socket(options);
    std::vector<std::string> topics;
    for (const auto& t : options.topics)
      if (!split || t != options.batched_topic) topics.push_back(t);
    set_up(socket, topics);
    if (split) {
      batch_socket = zmq::socket_t(ctx, zmq::socket_type::sub);
      set_up(batch_socket, {options.batched_topic});
    }
    // A list connects (or binds) to every forwarder it names; the copies that arrive are dropped in accept().
    endpoint = join_endpoints(options.mode == attach::bind ? bind_all(socket, options.endpoint)
                                                           : connect_all(socket, options.endpoint));
    if (split) connect_all(batch_socket, options.endpoint);
    spdlog::debug("bus subscriber '{}' {} {}", options.name,
                  options.mode == attach::bind ? "bound" : "connected", endpoint);
  }

  void set_up(zmq::socket_t& s, const std::vector<std::string>& topics) const {
    s.set(zmq::sockopt::rcvhwm, options.rcvhwm);
    s.set(zmq::sockopt::linger, 0);  // a SUB socket never has anything of ours queued to send
    for (const auto& t : topics) s.set(zmq::sockopt::subscribe, t);
    if (options.curve) apply_curve_client(s, *options.curve);
  }
  void run();
  // The batch socket's next read while the poll watches it for a first arrival (split mode).
  static constexpr auto unscheduled = std::chrono::steady_clock::time_point::max();
  std::chrono::steady_clock::time_point batch_read_last{};  // when it was last read, or its first arrival seen
  // Reads the batch socket at `now`, hands the batch on when it is due; when to read it next.
  std::chrono::steady_clock::time_point read_batch_socket(std::chrono::steady_clock::time_point now);
  // Drains `from` (at most `limit` messages, and never past the stop flag); how many were taken.
  int drain(zmq::socket_t& from, int limit);
  bool receive_one(zmq::socket_t& from);  // false when nothing was waiting
  void accept(std::string topic, std::string body, std::uint32_t frames);
  void reject(messages::decode_error error, std::uint32_t frames);
  void hand_on_batch();
  // Hands the batch on when it is due (see batch_hold), else leaves it; how long until it is due (ms).
  std::chrono::milliseconds hand_on_batch_when_due();
};

void subscriber::impl::run() {
  using std::chrono::steady_clock;
  zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0}, {batch_socket.handle(), 0, ZMQ_POLLIN, 0}};
  const bool split = batch_socket.handle() != nullptr;
  auto batch_read_at = unscheduled;  // when the batch socket is read next (split)
  try {
    auto wait = options.poll_interval;
    while (!stop_requested.load(std::memory_order_relaxed)) {
      try {
        zmq::poll(items, split && batch_read_at == unscheduled ? 2 : 1, wait);
      } catch (const zmq::error_t& e) {
        if (e.num() == EINTR) continue;
        throw;
      }
      const int drained = (items[0].revents & ZMQ_POLLIN) != 0 ? drain(socket, max_drain_batch) : 0;
      if (!split) {
        wait = std::min(options.poll_interval, hand_on_batch_when_due());
      } else {
        const auto now = steady_clock::now();
        if (batch_read_at == unscheduled && (items[1].revents & ZMQ_POLLIN) != 0) {
          batch_read_at = now + options.batch_hold;  // its first arrival waits batch_hold, as a held batch does
          batch_read_last = now;
        } else if (now >= batch_read_at) {
          batch_read_at = read_batch_socket(now);
        }
        items[1].revents = 0;
        wait = options.poll_interval;
        if (batch_read_at != unscheduled)
          wait = std::clamp(std::chrono::ceil<std::chrono::milliseconds>(batch_read_at - steady_clock::now()),
                            std::chrono::milliseconds(0), wait);
      }
      if (drained > 0 && drained < max_drain_batch && options.coalesce.count() > 0)
        std::this_thread::sleep_for(options.coalesce);
    }
    hand_on_batch();  // what was held when stop came
  } catch (const zmq::error_t& e) {
    // ETERM: the context is being shut down under us (an ordering mistake by the owner); leave quietly-ish.
    spdlog::error("bus subscriber '{}' stopped by ZeroMQ: {}", options.name, e.what());
  }
  socket.close();  // the owner thread closes the sockets it used
  if (split) batch_socket.close();
}

std::chrono::steady_clock::time_point subscriber::impl::read_batch_socket(
    std::chrono::steady_clock::time_point now) {
  using std::chrono::microseconds;
  const auto room = static_cast<int>(max_batch_messages - batch.messages.size());  // at least 1: see accept
  const int taken = drain(batch_socket, room);
  const auto since_last = std::chrono::duration_cast<microseconds>(now - batch_read_last).count();
  batch_read_last = now;
  // A stream of more than a quarter batch per hold is busy (a cluster starting, an intake under load): it is
  // read every millisecond or two and its batch held until full or due, as with one socket, so that no hold
  // lets the queue grow into a burst. A slower stream is read once per hold and its batch handed on at once.
  const auto hold = std::chrono::duration_cast<microseconds>(options.batch_hold).count();
  const bool busy = taken == room ||
                    std::int64_t{taken} * 4 * hold >= static_cast<std::int64_t>(max_batch_messages) * since_last;
  if (busy && taken > 0) {
    hand_on_batch_when_due();
  } else {
    hand_on_batch();
  }
  if (taken == 0) return unscheduled;
  if (taken == room) return now;
  if (busy) return now + std::max<microseconds>(options.coalesce, std::chrono::milliseconds(1));
  return now + options.batch_hold;
}

int subscriber::impl::drain(zmq::socket_t& from, int limit) {
  int drained = 0;
  while (drained < limit && !stop_requested.load(std::memory_order_relaxed) && receive_one(from)) ++drained;
  return drained;
}

bool subscriber::impl::receive_one(zmq::socket_t& from) {
  zmq::message_t frame;
  if (!from.recv(frame, zmq::recv_flags::dontwait)) return false;
  // Keep the first three frames (enough to report a wrong count with its topic), count and discard the rest.
  // The remaining frames of a multipart message are already here: ZeroMQ delivers a message whole.
  // A body beyond max_body_bytes is refused on its size alone and never copied: a 100 MB frame costs ZeroMQ's
  // buffer only, not a second 100 MB.
  std::string kept[3];
  std::uint32_t frames = 0;
  std::size_t oversized_body = 0;
  while (true) {
    if (frames == 1 && frame.size() > options.limits.max_body_bytes) {
      oversized_body = frame.size();
    } else if (frames < 3) {
      kept[frames] = frame.to_string();
    }
    if (frames < UINT32_MAX) ++frames;
    if (!frame.more()) break;
    if (!from.recv(frame, zmq::recv_flags::dontwait)) break;  // cannot happen for a whole message
  }
  if (frames != 2) {
    reject({printable_topic(kept[0], options.max_topic_bytes), "",
            "expected 2 frames [topic, body], got " + std::to_string(frames)},
           frames);
    return true;
  }
  if (oversized_body > 0) {
    auto topic = check_topic(kept[0], options.max_topic_bytes) ? printable_topic(kept[0], options.max_topic_bytes)
                                                               : std::move(kept[0]);
    reject({std::move(topic), "",
            "body of " + std::to_string(oversized_body) + " bytes exceeds max_body_bytes (" +
                std::to_string(options.limits.max_body_bytes) + ")"},
           frames);
    return true;
  }
  accept(std::move(kept[0]), std::move(kept[1]), frames);
  return true;
}

void subscriber::impl::accept(std::string topic, std::string body, std::uint32_t frames) {
  if (auto why = check_topic(topic, options.max_topic_bytes)) {
    reject({printable_topic(topic, options.max_topic_bytes), "", std::move(*why)}, frames);
    return;
  }
  auto env = !options.unread_tail_topic.empty() && topic == options.unread_tail_topic
                 ? messages::decode_envelope_before(topic, body, options.unread_tail_key, options.limits)
                 : messages::decode_envelope(topic, body, options.limits);
  if (!env) {
    reject(env.error(), frames);
    return;
  }
  if (env.value().seq == 0) {
    reject({topic, "seq", "must be at least 1 (sequences start at 1)"}, frames);
    return;
  }

  std::uint64_t missing = 0;
  const auto verdict = tracker.observe(env.value().src, topic, env.value().seq, env.value().ts_ms, missing);
  if (!handed_on(verdict)) {
    // A copy through another forwarder, or a message its stream has moved past: never handed on, and no
    // per-message log (with two forwarders every message has a copy).
    std::lock_guard lock{stats_mutex};
    ++(verdict == seq_verdict::duplicate ? stats.duplicates : stats.late);
    return;
  }
  {
    std::lock_guard lock{stats_mutex};
    ++stats.received;
    // Senders choose topics, so the per-topic table is bounded like the stream table.
    if (auto it = stats.by_topic.find(topic); it != stats.by_topic.end()) {
      ++it->second;
    } else if (stats.by_topic.size() < options.max_streams) {
      stats.by_topic.emplace(topic, 1);
    } else {
      ++stats.other_topics;
    }
    switch (verdict) {
      case seq_verdict::gap:
        if (!options.shed_topic.empty() && topic == options.shed_topic) {
          ++stats.shed_gaps;
        } else {
          ++stats.gaps;
          stats.missing += missing;
        }
        break;
      case seq_verdict::restart:
        ++stats.restarts;
        break;
      case seq_verdict::untracked:
        ++stats.untracked;
        break;
      case seq_verdict::first:
      case seq_verdict::in_order:
      case seq_verdict::duplicate:
      case seq_verdict::late:
        break;
    }
  }
  if (verdict == seq_verdict::gap) {
    spdlog::debug("bus subscriber '{}': {} from '{}' skipped {} message(s) before seq {}", options.name,
                  topic, env.value().src, missing, env.value().seq);
  } else if (verdict == seq_verdict::restart) {
    spdlog::info(
        "bus subscriber '{}': '{}' restarted on {} (seq {} after a higher one, sent later); stream starts afresh",
        options.name, env.value().src, topic, env.value().seq);
  }

  if (options.bound && topic.rfind(options.bounded_topic, 0) == 0) {
    std::optional<std::uint64_t> key;
    if (options.bound_key)
      if (const auto k = options.bound_key(body)) key = key_hash(*k);
    const auto window = options.bound->known_window_ns();
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now().time_since_epoch()).count();
    if (!options.bound->try_enter(key && window > 0 && recent.known(*key, now, window))) {
      std::lock_guard lock{stats_mutex};
      ++stats.shed;
      return;
    }
    if (key && window > 0) recent.heard(*key, now, window);
  }
  bus_message msg{std::move(topic), std::move(body), std::move(env).value()};
  if (!options.batched_topic.empty() && msg.topic == options.batched_topic) {
    if (batch.messages.empty()) batch_since = std::chrono::steady_clock::now();
    batch.messages.push_back(std::move(msg));
    if (batch.messages.size() >= max_batch_messages) hand_on_batch();  // full, even within a drain
    return;
  }
  try {
    handlers.on_message(std::move(msg));
  } catch (const std::exception& e) {
    // The bus must keep running for the other topics; the handler's failure is its owner's bug to fix.
    spdlog::error("bus subscriber '{}': message handler threw: {}", options.name, e.what());
  }
}

std::chrono::milliseconds subscriber::impl::hand_on_batch_when_due() {
  using namespace std::chrono;
  if (batch.messages.empty()) return options.poll_interval;
  const auto held = steady_clock::now() - batch_since;
  const bool due = options.batch_hold.count() == 0 || held >= options.batch_hold ||
                   batch.messages.size() >= max_batch_messages;
  if (due) {
    hand_on_batch();
    return options.poll_interval;
  }
  // Rounded up: a poll that wakes a little early would only find the batch not yet due.
  return duration_cast<milliseconds>(options.batch_hold - held) + milliseconds(1);
}

void subscriber::impl::hand_on_batch() {
  if (batch.messages.empty()) return;
  bus_batch out{batch.topic, {}};
  out.messages.swap(batch.messages);
  batch.messages.reserve(out.messages.size());  // the next drain of a steady stream is about as large
  try {
    handlers.on_batch(std::move(out));
  } catch (const std::exception& e) {
    spdlog::error("bus subscriber '{}': batch handler threw: {}", options.name, e.what());
  }
}

void subscriber::impl::reject(messages::decode_error error, std::uint32_t frames) {
  {
    std::lock_guard lock{stats_mutex};
    ++stats.bad_messages;
  }
  spdlog::warn("bus subscriber '{}': bad message: {}", options.name, error.message());
  if (!handlers.on_bad_message) return;
  try {
    handlers.on_bad_message(bad_message{std::move(error), frames});
  } catch (const std::exception& e) {
    spdlog::error("bus subscriber '{}': bad-message handler threw: {}", options.name, e.what());
  }
}

subscriber::subscriber(zmq::context_t& ctx, subscriber_options options, subscriber_handlers handlers)
    : impl_(std::make_unique<impl>(ctx, std::move(options), std::move(handlers))) {}

subscriber::~subscriber() { stop(); }

void subscriber::start() {
  if (impl_->thread.joinable()) throw std::logic_error("subscriber: started twice");
  // Thread creation is a full memory barrier, which is what ZeroMQ asks for when a socket changes owner.
  impl_->thread = std::thread([this] {
    name_this_thread("rmbus-sub");
    impl_->run();
  });
}

void subscriber::stop() {
  impl_->stop_requested.store(true);
  if (impl_->thread.joinable()) {
    impl_->thread.join();
  } else if (impl_->socket) {
    impl_->socket.close();  // never started: the sockets are still ours
    if (impl_->batch_socket) impl_->batch_socket.close();
  }
}

const std::string& subscriber::endpoint() const { return impl_->endpoint; }

subscriber_stats subscriber::stats() const {
  std::lock_guard lock{impl_->stats_mutex};
  return impl_->stats;
}

}  // namespace rmbus::bus
