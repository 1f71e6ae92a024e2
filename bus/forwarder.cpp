#include "bus/forwarder.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <utility>
#include <zmq.hpp>

namespace rmbus::bus {

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

  impl(zmq::context_t& ctx, forwarder_options opts, std::function<void(const refused_publish&)> refused_cb)
      : options(std::move(opts)),
        xsub(ctx, zmq::socket_type::xsub),
        xpub(ctx, zmq::socket_type::xpub),
        control_proxy(ctx, zmq::socket_type::pair),
        control_owner(ctx, zmq::socket_type::pair),
        on_refused(std::move(refused_cb)) {
    xsub.set(zmq::sockopt::rcvhwm, options.hwm);
    xsub.set(zmq::sockopt::linger, 0);
    xpub.set(zmq::sockopt::sndhwm, options.hwm);
    xpub.set(zmq::sockopt::linger, 0);
    if (options.curve) {
      apply_curve_server(xsub, *options.curve, bus_zap_domain);
      apply_curve_server(xpub, *options.curve, bus_zap_domain);
    }
    xsub.bind(options.pub_endpoint);
    xpub.bind(options.sub_endpoint);
    pub_endpoint = xsub.get(zmq::sockopt::last_endpoint);
    sub_endpoint = xpub.get(zmq::sockopt::last_endpoint);
    // One inproc name per forwarder object; inproc names are per context and freed when the socket closes.
    const std::string control =
        "inproc://rmbus.forwarder.control." + std::to_string(reinterpret_cast<std::uintptr_t>(this));
    control_proxy.bind(control);
    control_owner.connect(control);
  }

  void run_checked();
  bool forward_one_publication();
  bool forward_one_subscription();
};

namespace {
// Messages taken from one side before the others are looked at again, so neither side starves the other.
constexpr int max_batch = 256;
}  // namespace

// The CURVE proxy: XSUB -> (topic allowed for the sender's roles?) -> XPUB, XPUB -> XSUB, until TERMINATE.
void forwarder::impl::run_checked() {
  zmq::pollitem_t items[] = {{xsub.handle(), 0, ZMQ_POLLIN, 0},
                             {xpub.handle(), 0, ZMQ_POLLIN, 0},
                             {control_proxy.handle(), 0, ZMQ_POLLIN, 0}};
  for (;;) {
    try {
      zmq::poll(items, 3, std::chrono::milliseconds(-1));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      throw;
    }
    if ((items[2].revents & ZMQ_POLLIN) != 0) {
      zmq::message_t command;
      if (control_proxy.recv(command, zmq::recv_flags::dontwait) && command.to_string_view() == "TERMINATE") return;
    }
    if ((items[0].revents & ZMQ_POLLIN) != 0)
      for (int n = 0; n < max_batch && forward_one_publication(); ++n) {
      }
    if ((items[1].revents & ZMQ_POLLIN) != 0)
      for (int n = 0; n < max_batch && forward_one_subscription(); ++n) {
      }
  }
}

bool forwarder::impl::forward_one_publication() {
  zmq::message_t frame;
  if (!xsub.recv(frame, zmq::recv_flags::dontwait)) return false;
  // The frames of one message arrive together: after the first, the rest are already queued.
  const char* user_id = frame.gets("User-Id");
  const auto topic = frame.to_string_view();
  const bool allowed = user_id != nullptr && may_publish(roles_of_user_id(user_id), topic);
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
  bool more = frame.more();
  if (allowed) xpub.send(frame, more ? zmq::send_flags::sndmore : zmq::send_flags::none);
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
  spdlog::info("bus forwarder: publishers connect to {}, subscribers to {}{}", impl_->pub_endpoint,
               impl_->sub_endpoint, impl_->options.curve ? " (CURVE: listed keys only)" : "");
  impl_->thread = std::thread([i = impl_.get()] {
    try {
      if (i->options.curve) i->run_checked();
      else zmq::proxy_steerable(i->xsub, i->xpub, zmq::socket_ref{}, i->control_proxy);
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

}  // namespace rmbus::bus
