#include "bus/forwarder.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <zmq.hpp>

#include "bus/repeat_filter.hpp"
#include "bus/thread_name.hpp"

namespace rmbus::bus {

namespace {

// A ZeroMQ error that names the endpoint it came from ("bus pub endpoint tcp://...: cannot bind: Address
// already in use"): still a zmq::error_t with its errno, for callers that catch those.
class named_bind_error : public zmq::error_t {
 public:
  named_bind_error(const zmq::error_t& e, const std::string& what_endpoint)
      : zmq::error_t(e.num()), text_(what_endpoint + ": cannot bind: " + e.what()) {}
  const char* what() const noexcept override { return text_.c_str(); }

 private:
  std::string text_;
};

void bind_named(zmq::socket_t& socket, const std::string& endpoint, const char* role) {
  try {
    socket.bind(endpoint);
  } catch (const zmq::error_t& e) {
    throw named_bind_error(e, std::string{role} + " endpoint " + endpoint);
  }
}

}  // namespace

struct forwarder::impl {
  forwarder_options options;
  zmq::socket_t xsub;
  zmq::socket_t xpub;
  zmq::socket_t control_proxy;  // used by the proxy thread
  zmq::socket_t control_owner;  // used by stop()
  std::string pub_endpoint;
  std::string sub_endpoint;
  std::thread thread;
  std::function<void(const refused_publish&)> on_refused;
  std::atomic<std::uint64_t> refused{0};
  // Shedding (options.shed): the table is the forwarder thread's own; the gap may be changed from outside.
  std::optional<repeat_filter> repeats;
  std::atomic<std::int64_t> shed_gap_ns{0};
  std::atomic<std::uint64_t> shed{0};
  // For the log line: sheds since the last one, and one key shed in that window (made printable).
  std::uint64_t shed_unlogged = 0;
  std::string shed_example;
  std::chrono::steady_clock::time_point shed_logged_at{};
  bool shed_warned = false;  // the first shed was logged at warn

  impl(zmq::context_t& ctx, forwarder_options opts, std::function<void(const refused_publish&)> refused_cb)
      : options(std::move(opts)),
        xsub(ctx, zmq::socket_type::xsub),
        xpub(ctx, zmq::socket_type::xpub),
        control_proxy(ctx, zmq::socket_type::pair),
        control_owner(ctx, zmq::socket_type::pair),
        on_refused(std::move(refused_cb)) {
    if (options.shed && !options.shed->key_of) throw std::invalid_argument("forwarder: repeat_shedding needs key_of");
    xsub.set(zmq::sockopt::rcvhwm, options.hwm);
    xsub.set(zmq::sockopt::linger, 0);
    xpub.set(zmq::sockopt::sndhwm, options.hwm);
    xpub.set(zmq::sockopt::linger, 0);
    if (options.curve) {
      apply_curve_server(xsub, *options.curve, bus_zap_domain);
      apply_curve_server(xpub, *options.curve, bus_zap_domain);
    }
    bind_named(xsub, options.pub_endpoint, "bus pub");
    bind_named(xpub, options.sub_endpoint, "bus sub");
    pub_endpoint = xsub.get(zmq::sockopt::last_endpoint);
    sub_endpoint = xpub.get(zmq::sockopt::last_endpoint);
    if ((!options.local_pub_endpoint.empty() || !options.local_sub_endpoint.empty()) && options.curve)
      throw std::invalid_argument("forwarder: local endpoints are for a forwarder without CURVE");
    if (!options.local_pub_endpoint.empty()) bind_named(xsub, options.local_pub_endpoint, "bus pub (local)");
    if (!options.local_sub_endpoint.empty()) bind_named(xpub, options.local_sub_endpoint, "bus sub (local)");
    // One inproc name per forwarder object; inproc names are per context and freed when the socket closes.
    const std::string control =
        "inproc://rmbus.forwarder.control." + std::to_string(reinterpret_cast<std::uintptr_t>(this));
    control_proxy.bind(control);
    control_owner.connect(control);
    if (options.shed) {
      shed_gap_ns = std::chrono::nanoseconds{options.shed->min_gap}.count();
      repeats.emplace(options.shed->slots, options.shed->min_gap, options.shed->burst);
    }
  }

  void run();
  bool forward_one_publication();
  bool forward_one_subscription();
  bool is_repeat(const zmq::message_t& body);
  void log_sheds(std::chrono::steady_clock::time_point now, bool force);
};

namespace {
// Messages taken from one side before the others are looked at again, so neither side starves the other.
constexpr int max_batch = 256;
// Shedding is what the forwarder is for, not a fault: agents that heartbeat more often than the RM needs are
// shed for as long as they run. So the first shed is a warning that says why, and then a count at info this
// often (and at stop), not a warning every few seconds.
constexpr auto shed_log_period = std::chrono::minutes(10);

// A key for the log: printable ASCII kept, other bytes as \xNN, cut to 64 bytes (keys come from the bus).
std::string printable(std::string_view key) {
  std::string out;
  for (const unsigned char c : key.substr(0, 64)) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (key.size() > 64) out += "...";
  return out;
}
}  // namespace

// XSUB -> (topic allowed for the sender's roles? a repeat?) -> XPUB, XPUB -> XSUB, until TERMINATE.
void forwarder::impl::run() {
  zmq::pollitem_t items[] = {{xsub.handle(), 0, ZMQ_POLLIN, 0},
                             {xpub.handle(), 0, ZMQ_POLLIN, 0},
                             {control_proxy.handle(), 0, ZMQ_POLLIN, 0}};
  for (;;) {
    try {
      // While sheds wait to be logged, wake up now and then to log them even if the bus falls quiet.
      zmq::poll(items, 3, std::chrono::milliseconds(shed_unlogged > 0 ? 1000 : -1));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      throw;
    }
    if ((items[2].revents & ZMQ_POLLIN) != 0) {
      zmq::message_t command;
      if (control_proxy.recv(command, zmq::recv_flags::dontwait) && command.to_string_view() == "TERMINATE") {
        log_sheds(std::chrono::steady_clock::now(), true);
        return;
      }
    }
    if ((items[0].revents & ZMQ_POLLIN) != 0)
      for (int n = 0; n < max_batch && forward_one_publication(); ++n) {
      }
    if ((items[1].revents & ZMQ_POLLIN) != 0)
      for (int n = 0; n < max_batch && forward_one_subscription(); ++n) {
      }
    if (shed_unlogged > 0) log_sheds(std::chrono::steady_clock::now(), false);
  }
}

bool forwarder::impl::is_repeat(const zmq::message_t& body) {
  const auto gap_ns = shed_gap_ns.load(std::memory_order_relaxed);
  if (gap_ns <= 0) return false;  // turned off: not even a peek
  const auto key = options.shed->key_of(body.to_string_view());
  if (!key) return false;
  repeats->set_min_gap(std::chrono::nanoseconds{gap_ns});
  const auto now = std::chrono::steady_clock::now();
  if (repeats->admit(key_hash(*key), now.time_since_epoch().count())) return false;
  shed.fetch_add(1, std::memory_order_relaxed);
  if (shed_unlogged++ == 0) shed_example = printable(*key);
  return true;
}

void forwarder::impl::log_sheds(std::chrono::steady_clock::time_point now, bool force) {
  if (shed_unlogged == 0 || (shed_warned && !force && now - shed_logged_at < shed_log_period)) return;
  const auto gap_ms = shed_gap_ns.load(std::memory_order_relaxed) / 1'000'000;
  if (!shed_warned) {
    spdlog::warn("bus forwarder: shed {} repeated {} messages: a key sends more often than the RM needs (more than {} "
                 "back to back, then one per {} ms pass), e.g. key '{}'. Agents heartbeating faster than [timing] "
                 "heartbeat_interval_ms do this (harmless; set the interval to theirs), and so does a publisher "
                 "flooding. Counted from now on at info every 10 minutes and in rmbus_bus_shed_total",
                 shed_unlogged, options.shed->topic, options.shed->burst, gap_ms, shed_example);
    shed_warned = true;
  } else {
    spdlog::info("bus forwarder: shed {} repeated {} messages (more than {} back to back, then one per {} ms), e.g. "
                 "key '{}'; {} shed since start",
                 shed_unlogged, options.shed->topic, options.shed->burst, gap_ms, shed_example,
                 shed.load(std::memory_order_relaxed));
  }
  shed_unlogged = 0;
  shed_logged_at = now;
}

bool forwarder::impl::forward_one_publication() {
  zmq::message_t frame;
  if (!xsub.recv(frame, zmq::recv_flags::dontwait)) return false;
  // The frames of one message arrive together: after the first, the rest are already queued.
  bool allowed = true;
  if (options.curve) {
    const char* user_id = frame.gets("User-Id");
    const auto topic = frame.to_string_view();
    allowed = user_id != nullptr && may_publish(roles_of_user_id(user_id), topic);
    if (!allowed) {
      refused.fetch_add(1, std::memory_order_relaxed);
      refused_publish r;
      if (const auto who = user_id != nullptr ? parse_user_id(user_id) : std::nullopt)
        r.sender = who->name + " (" + role_list_text(who->roles) + ")";
      else
        r.sender = "an unidentified peer";
      r.topic = std::string{topic.substr(0, 256)};
      spdlog::debug("bus forwarder: refused {} from {}", r.topic, r.sender);
      if (on_refused) on_refused(r);
    }
  }
  bool more = frame.more();
  if (allowed && more && repeats && frame.to_string_view() == options.shed->topic) {
    // [topic, body]: the body decides, so the topic frame waits for it.
    zmq::message_t body;
    if (!xsub.recv(body, zmq::recv_flags::none)) return true;
    if (!body.more() && is_repeat(body)) return true;  // both frames dropped
    xpub.send(frame, zmq::send_flags::sndmore);
    frame = std::move(body);
    more = frame.more();
    xpub.send(frame, more ? zmq::send_flags::sndmore : zmq::send_flags::none);
  } else if (allowed) {
    xpub.send(frame, more ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
  while (more) {
    if (!xsub.recv(frame, zmq::recv_flags::none)) break;
    more = frame.more();
    if (allowed) xpub.send(frame, more ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
  return true;
}

bool forwarder::impl::forward_one_subscription() {
  zmq::message_t frame;
  if (!xpub.recv(frame, zmq::recv_flags::dontwait)) return false;
  bool more = frame.more();
  xsub.send(frame, more ? zmq::send_flags::sndmore : zmq::send_flags::none);
  while (more) {
    if (!xpub.recv(frame, zmq::recv_flags::none)) break;
    more = frame.more();
    xsub.send(frame, more ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
  return true;
}

forwarder::forwarder(zmq::context_t& ctx, forwarder_options options,
                     std::function<void(const refused_publish&)> on_refused)
    : impl_(std::make_unique<impl>(ctx, std::move(options), std::move(on_refused))) {}

forwarder::~forwarder() { stop(); }

void forwarder::start() {
  if (impl_->thread.joinable()) throw std::logic_error("forwarder: started twice");
  spdlog::info("bus forwarder: publishers connect to {}, subscribers to {}{}{}", impl_->pub_endpoint,
               impl_->sub_endpoint, impl_->options.curve ? " (CURVE: listed keys only)" : "",
               impl_->options.shed ? "; a key's repeats on " + impl_->options.shed->topic + " beyond " +
                                         std::to_string(impl_->options.shed->burst) + " back to back, then one per " +
                                         std::to_string(impl_->options.shed->min_gap.count()) + " ms, are shed"
                                   : std::string{});
  impl_->thread = std::thread([i = impl_.get()] {
    name_this_thread("rmbus-fwd");
    try {
      i->run();
    } catch (const zmq::error_t& e) {
      spdlog::error("bus forwarder stopped by ZeroMQ: {}", e.what());
    }
    // The thread that ran the proxy closes the sockets it used.
    i->xsub.close();
    i->xpub.close();
    i->control_proxy.close();
  });
}

void forwarder::stop() {
  if (impl_->thread.joinable()) {
    // The PAIR pipe is already connected (inproc connects synchronously), so this send cannot be lost.
    impl_->control_owner.send(zmq::str_buffer("TERMINATE"), zmq::send_flags::none);
    impl_->thread.join();
    spdlog::info("bus forwarder stopped");
  }
  // Never started, or just stopped: close whatever is still open on this thread.
  impl_->xsub.close();
  impl_->xpub.close();
  impl_->control_proxy.close();
  impl_->control_owner.close();
}

const std::string& forwarder::pub_endpoint() const { return impl_->pub_endpoint; }
const std::string& forwarder::sub_endpoint() const { return impl_->sub_endpoint; }
std::uint64_t forwarder::refused() const { return impl_->refused.load(std::memory_order_relaxed); }
std::uint64_t forwarder::shed() const { return impl_->shed.load(std::memory_order_relaxed); }
void forwarder::set_shed_gap(std::chrono::milliseconds min_gap) {
  if (impl_->options.shed && min_gap.count() >= 0)
    impl_->shed_gap_ns.store(std::chrono::nanoseconds{min_gap}.count(), std::memory_order_relaxed);
}

}  // namespace rmbus::bus
