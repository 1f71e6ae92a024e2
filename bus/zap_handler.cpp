#include "bus/zap_handler.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "bus/thread_name.hpp"

namespace rmbus::bus {

namespace {
constexpr std::size_t max_refusals_logged = 1024;  // distinct keys logged at warn; later ones only counted

using key_map = std::map<std::string, allowed_key>;  // 32-byte public key -> entry

key_map index_by_raw_key(std::vector<allowed_key> allowed) {
  key_map by_raw_key;
  for (auto& k : allowed) {
    std::string raw(32, '\0');
    if (zmq_z85_decode(reinterpret_cast<std::uint8_t*>(raw.data()), k.public_key.c_str()) == nullptr)
      throw curve_error("allowed key '" + k.name + "' is not a CURVE public key");
    by_raw_key.emplace(std::move(raw), std::move(k));
  }
  return by_raw_key;
}
}  // namespace

struct zap_handler::impl {
  zmq::socket_t socket;
  std::mutex keys_mutex;  // by_raw_key is replaced from another thread (replace_allowed)
  key_map by_raw_key;
  bool forget_logged = false;  // set with a new list: a key refused before is logged again under it
  std::atomic<bool> stop_requested{false};
  std::atomic<std::uint64_t> admitted{0};
  std::atomic<std::uint64_t> refused{0};
  std::set<std::string> logged;  // keys whose refusal was logged (one client may open several connections)
  std::thread thread;

  impl(zmq::context_t& ctx, std::vector<allowed_key> allowed)
      : socket(ctx, zmq::socket_type::rep), by_raw_key(index_by_raw_key(std::move(allowed))) {
    socket.set(zmq::sockopt::linger, 0);
    socket.bind("inproc://zeromq.zap.01");
  }

  void run();
  // Returns the User-Id to admit with, or nothing to refuse (and why, in `reason`).
  std::optional<std::string> decide(const std::vector<zmq::message_t>& request, std::string& reason);
};

std::optional<std::string> zap_handler::impl::decide(const std::vector<zmq::message_t>& req,
                                                     std::string& reason) {
  // version, request id, domain, address, routing id, mechanism, credentials...
  if (req.size() < 6 || req[0].to_string_view() != "1.0") {
    reason = "malformed ZAP request";
    return std::nullopt;
  }
  const auto domain = req[2].to_string_view();
  if (req[5].to_string_view() != "CURVE" || req.size() != 7 || req[6].size() != 32) {
    reason =
        "not a CURVE connection (" + std::string{req[5].to_string_view()} + ") from " + req[3].to_string();
    return std::nullopt;
  }
  std::lock_guard lock{keys_mutex};
  if (forget_logged) {
    logged.clear();
    forget_logged = false;
  }
  const auto it = by_raw_key.find(req[6].to_string());
  if (it == by_raw_key.end()) {
    std::string z85(41, '\0');
    zmq_z85_encode(z85.data(), req[6].data<std::uint8_t>(), 32);
    z85.resize(40);
    reason = "unknown key " + z85 + " from " + req[3].to_string();
    return std::nullopt;
  }
  const auto& key = it->second;
  if (domain == bus_zap_domain) return user_id_of(key);
  if (domain == admin_zap_domain) {
    if ((key.roles & roles::admin) != 0) return user_id_of(key);
    reason = "key '" + key.name + "' (" + role_list_text(key.roles) + ") is not an admin key, from " +
             req[3].to_string();
    return std::nullopt;
  }
  reason = "unknown ZAP domain '" + std::string{domain} + "'";
  return std::nullopt;
}

void zap_handler::impl::run() {
  zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0}};
  try {
    while (!stop_requested.load()) {
      try {
        zmq::poll(items, 1, std::chrono::milliseconds(100));
      } catch (const zmq::error_t& e) {
        if (e.num() == EINTR) continue;
        throw;
      }
      if ((items[0].revents & ZMQ_POLLIN) == 0) continue;
      std::vector<zmq::message_t> req;
      if (!zmq::recv_multipart(socket, std::back_inserter(req), zmq::recv_flags::dontwait)) continue;
      std::string reason;
      const auto user_id = decide(req, reason);
      if (user_id) {
        admitted.fetch_add(1);
        spdlog::debug("ZAP: admitted {} ({})", *user_id, req.size() > 3 ? req[3].to_string() : "?");
      } else {
        refused.fetch_add(1);
        const auto key = req.size() > 6 ? req[6].to_string() : reason;
        if (logged.size() < max_refusals_logged && logged.insert(key).second)
          spdlog::warn("CURVE: refused {}", reason);
      }
      const std::string user_id_text = user_id.value_or(std::string{});
      std::array<zmq::const_buffer, 6> reply{
          zmq::str_buffer("1.0"),
          zmq::buffer(req.size() > 1 ? req[1].data() : nullptr, req.size() > 1 ? req[1].size() : 0),
          user_id ? zmq::str_buffer("200") : zmq::str_buffer("400"),
          user_id ? zmq::str_buffer("OK") : zmq::str_buffer("key not allowed"),
          zmq::buffer(user_id_text),
          zmq::const_buffer{}};
      if (!zmq::send_multipart(socket, reply)) spdlog::warn("ZAP: reply not sent");
    }
  } catch (const zmq::error_t& e) {
    spdlog::error("ZAP handler stopped by ZeroMQ: {}", e.what());
  }
  socket.close();
}

zap_handler::zap_handler(zmq::context_t& ctx, std::vector<allowed_key> allowed)
    : impl_(std::make_unique<impl>(ctx, std::move(allowed))) {}

zap_handler::~zap_handler() { stop(); }

void zap_handler::start() {
  if (impl_->thread.joinable()) throw std::logic_error("zap_handler: started twice");
  impl_->thread = std::thread([i = impl_.get()] {
    name_this_thread("rmbus-zap");
    i->run();
  });
}

void zap_handler::stop() {
  impl_->stop_requested = true;
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->socket.close();
}

void zap_handler::replace_allowed(std::vector<allowed_key> allowed) {
  auto fresh = index_by_raw_key(std::move(allowed));
  std::lock_guard lock{impl_->keys_mutex};
  impl_->by_raw_key = std::move(fresh);
  impl_->forget_logged = true;
}

zap_stats zap_handler::stats() const { return {impl_->admitted.load(), impl_->refused.load()}; }

}  // namespace rmbus::bus
