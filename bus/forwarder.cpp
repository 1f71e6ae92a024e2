#include "bus/forwarder.hpp"

#include <spdlog/spdlog.h>

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

  impl(zmq::context_t& ctx, forwarder_options opts)
      : options(std::move(opts)),
        xsub(ctx, zmq::socket_type::xsub),
        xpub(ctx, zmq::socket_type::xpub),
        control_proxy(ctx, zmq::socket_type::pair),
        control_owner(ctx, zmq::socket_type::pair) {
    xsub.set(zmq::sockopt::rcvhwm, options.hwm);
    xsub.set(zmq::sockopt::linger, 0);
    xpub.set(zmq::sockopt::sndhwm, options.hwm);
    xpub.set(zmq::sockopt::linger, 0);
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
};

forwarder::forwarder(zmq::context_t& ctx, forwarder_options options)
    : impl_(std::make_unique<impl>(ctx, std::move(options))) {}

forwarder::~forwarder() { stop(); }

void forwarder::start() {
  if (impl_->thread.joinable()) throw std::logic_error("forwarder: started twice");
  spdlog::info("bus forwarder: publishers connect to {}, subscribers to {}", impl_->pub_endpoint,
               impl_->sub_endpoint);
  impl_->thread = std::thread([i = impl_.get()] {
    try {
      zmq::proxy_steerable(i->xsub, i->xpub, zmq::socket_ref{}, i->control_proxy);
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

}  // namespace rmbus::bus
