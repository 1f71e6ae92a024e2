#include "tools/web/admin_client.hpp"

#include <atomic>
#include <mutex>
#include <vector>
#include <zmq.hpp>

#include "messages/topics.hpp"

namespace rmbus::web {

struct admin_client::impl {
  impl(zmq::context_t& c, admin_client_options o) : ctx(c), options(std::move(o)) {}
  zmq::context_t& ctx;
  admin_client_options options;
  std::mutex mutex;
  std::uint64_t seq = 0;
  std::uint64_t monitors = 0;  // a fresh inproc name for each request's handshake monitor
};

admin_client::admin_client(zmq::context_t& ctx, admin_client_options options)
    : impl_(std::make_unique<impl>(ctx, std::move(options))) {}

admin_client::~admin_client() = default;

const std::string& admin_client::endpoint() const { return impl_->options.endpoint; }

admin_outcome admin_client::request(const messages::admin_request& req) {
  return request(req, impl_->options.endpoint);
}

admin_outcome admin_client::request(const messages::admin_request& req, const std::string& endpoint) {
  auto& m = *impl_;
  std::lock_guard lock{m.mutex};
  const auto timeout = m.options.timeout;
  zmq::socket_t sock{m.ctx, zmq::socket_type::req};
  sock.set(zmq::sockopt::linger, 0);
  std::optional<zmq::socket_t> events;
  try {
    if (m.options.curve) {
      bus::apply_curve_client(sock, *m.options.curve);
      const auto name = "inproc://rmbus-web.admin-monitor." + std::to_string(++m.monitors);
      if (zmq_socket_monitor(sock.handle(), name.c_str(), ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) != 0) throw zmq::error_t{};
      events.emplace(m.ctx, zmq::socket_type::pair);
      events->connect(name);
    }
    sock.connect(endpoint);
  } catch (const zmq::error_t& e) {
    return {std::nullopt, "cannot connect to " + endpoint + ": " + e.what()};
  }
  messages::envelope env;
  env.seq = ++m.seq;
  env.src = "rmbus-web";
  const auto body = messages::encode(env, req);
  // REQ with a connect in progress queues the message; send does not block.
  if (!sock.send(zmq::buffer(body), zmq::send_flags::dontwait))
    return {std::nullopt, "no answer from " + endpoint + " (could not send)"};
  std::vector<zmq::pollitem_t> items{{sock.handle(), 0, ZMQ_POLLIN, 0}};
  if (events) items.push_back({events->handle(), 0, ZMQ_POLLIN, 0});
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  zmq::message_t reply;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || zmq::poll(items, std::max(left, std::chrono::milliseconds(1))) == 0)
      return {std::nullopt, "no answer from " + endpoint + " within " + std::to_string(timeout.count()) + " ms"};
    if (items.size() > 1 && (items[1].revents & ZMQ_POLLIN) != 0)
      return {std::nullopt, endpoint + " refused this key: it is not listed there with the admin role"};
    if ((items[0].revents & ZMQ_POLLIN) != 0 && sock.recv(reply, zmq::recv_flags::dontwait)) break;
  }
  auto rep = messages::decode_admin_reply(messages::topics::admin, reply.to_string_view());
  if (!rep) return {std::nullopt, "unreadable reply from " + endpoint + ": " + rep.error().message()};
  return {std::move(rep).value(), {}};
}

}  // namespace rmbus::web
