#include "bus/publisher.hpp"

#include <spdlog/spdlog.h>

#include <set>
#include <stdexcept>
#include <utility>
#include <zmq.hpp>

#include "bus/endpoint_list.hpp"

namespace rmbus::bus {

struct publisher::impl {
  publisher_options options;
  zmq::socket_t socket;
  std::string endpoint;
  publisher_stats stats;
  // topic -> last seq; std::less<> so a publish looks the topic up without allocating.
  std::map<std::string, std::uint64_t, std::less<>> seq;
  // The topic prefixes subscribed (XPUB hands each one over once, and its unsubscription when the last holder
  // of it goes, connection losses included).
  std::set<std::string, std::less<>> subscribed;

  impl(zmq::context_t& ctx, publisher_options opts)
      : options(std::move(opts)), socket(ctx, zmq::socket_type::xpub) {
    if (options.name.empty()) throw std::invalid_argument("publisher: name (envelope src) must not be empty");
    socket.set(zmq::sockopt::sndhwm, options.sndhwm);
    socket.set(zmq::sockopt::linger, static_cast<int>(options.linger.count()));
    if (options.curve) apply_curve_client(socket, *options.curve);
    // A list connects (or binds) to every forwarder it names: each message then goes out through each.
    endpoint = join_endpoints(options.mode == attach::bind ? bind_all(socket, options.endpoint)
                                                           : connect_all(socket, options.endpoint));
    spdlog::debug("bus publisher '{}' {} {}", options.name,
                  options.mode == attach::bind ? "bound" : "connected", endpoint);
  }

  // Reads the subscription messages waiting on the socket: [1 | prefix] subscribes, [0 | prefix] unsubscribes.
  void read_subscriptions() {
    zmq::message_t m;
    while (socket.recv(m, zmq::recv_flags::dontwait)) {
      const auto* d = static_cast<const char*>(m.data());
      if (m.size() == 0 || (d[0] != 0 && d[0] != 1)) continue;  // not a subscription (XPUB hands over no other)
      std::string prefix{d + 1, m.size() - 1};
      if (d[0] == 1) subscribed.insert(std::move(prefix));
      else subscribed.erase(prefix);
    }
  }
};

publisher::publisher(zmq::context_t& ctx, publisher_options options)
    : impl_(std::make_unique<impl>(ctx, std::move(options))) {}
publisher::~publisher() = default;
publisher::publisher(publisher&&) noexcept = default;
publisher& publisher::operator=(publisher&&) noexcept = default;

bool publisher::wanted(std::string_view topic) {
  impl_->read_subscriptions();
  const auto& subscribed = impl_->subscribed;
  // Every prefix of the topic, the empty one (subscribe to all) included: a topic is a few dozen bytes, and
  // there may be a subscription per node.
  for (std::size_t n = 0; n <= topic.size(); ++n)
    if (subscribed.find(topic.substr(0, n)) != subscribed.end()) return true;
  return false;
}

namespace {

// A body this large (a schedule or a work map of megabytes) is handed to ZeroMQ as it is, without the copy
// zmq::buffer makes: ZeroMQ frees it once sent or dropped. A small one is copied, which costs less than the
// hand-over's own allocation and reference count.
zmq::message_t body_frame(std::string body) {
  if (body.size() < hand_over_bytes) return zmq::message_t(body.data(), body.size());
  auto* held = new std::string(std::move(body));
  return zmq::message_t(
      held->data(), held->size(), [](void*, void* hint) { delete static_cast<std::string*>(hint); }, held);
}

}  // namespace

messages::envelope publisher::publish_with(std::string_view topic, const encoder& encode) {
  auto it = impl_->seq.find(topic);
  if (it == impl_->seq.end()) it = impl_->seq.emplace(std::string{topic}, 0).first;
  messages::envelope env;
  env.seq = it->second + 1;
  env.ts_ms = wall_clock_ms();
  env.src = impl_->options.name;
  if (!wanted(topic)) {
    it->second = env.seq;
    ++impl_->stats.unwanted;
    return env;
  }
  std::string body = encode(env);  // if this throws, the seq is not consumed and nothing is sent
  it->second = env.seq;

  // dontwait: a PUB socket drops rather than blocks past its HWM anyway; the flag makes sure no other state
  // (a socket being closed, a future option) can ever turn a publish into a wait.
  auto& s = impl_->socket;
  const bool handed_over = body.size() >= hand_over_bytes;
  const bool sent = s.send(zmq::buffer(topic), zmq::send_flags::sndmore | zmq::send_flags::dontwait) &&
                    s.send(body_frame(std::move(body)), zmq::send_flags::dontwait);
  if (sent) {
    ++impl_->stats.published;
    if (handed_over) ++impl_->stats.handed_over;
  } else {
    ++impl_->stats.refused;
    spdlog::warn("bus publisher '{}': ZeroMQ refused {} seq {}", impl_->options.name, topic, env.seq);
  }
  return env;
}

const std::string& publisher::endpoint() const { return impl_->endpoint; }
const std::string& publisher::name() const { return impl_->options.name; }

publisher_stats publisher::stats() const {
  publisher_stats out = impl_->stats;
  for (const auto& [topic, seq] : impl_->seq) out.last_seq.emplace(topic, seq);
  return out;
}

std::uint64_t wall_clock_ms() {
  using namespace std::chrono;
  return static_cast<std::uint64_t>(
      duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

}  // namespace rmbus::bus
