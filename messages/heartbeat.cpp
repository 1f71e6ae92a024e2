#include "messages/heartbeat.hpp"

#include "messages/detail/codec.hpp"
#include "messages/detail/peek.hpp"

namespace rmbus::messages {

namespace {
constexpr std::array<std::string_view, 6> keys{"node", "ip", "memory_mb", "memory_total_mb", "quiesced", "cpus"};
constexpr std::uint64_t required = 0b000111;  // node, ip, memory_mb
}  // namespace

std::string encode(const envelope& env, const heartbeat& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  const std::uint32_t n = 3 + msg.memory_total_mb.has_value() + msg.quiesced.has_value() + msg.cpus.has_value();
  detail::pack_envelope_head(pk, env, n);
  detail::pack_kv_str(pk, "node", msg.node);
  detail::pack_kv_str(pk, "ip", msg.ip);
  detail::pack_kv_uint(pk, "memory_mb", msg.memory_mb);
  if (msg.memory_total_mb) detail::pack_kv_uint(pk, "memory_total_mb", *msg.memory_total_mb);
  if (msg.quiesced) detail::pack_kv_bool(pk, "quiesced", *msg.quiesced);
  if (msg.cpus) detail::pack_kv_uint(pk, "cpus", *msg.cpus);
  return detail::to_string(buf);
}

result<heartbeat> decode_heartbeat(std::string_view topic, std::string_view body, const decode_limits& limits,
                                   envelope* env_out) {
  return detail::guarded<heartbeat>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    heartbeat msg;
    const detail::path at;
    detail::read_fields(root, at, keys, required, [&](std::size_t k, const msgpack::object& v, const detail::path& p) {
      switch (k) {
        case 0: detail::read(v, p, msg.node); break;
        case 1: detail::read(v, p, msg.ip); break;
        case 2: detail::read(v, p, msg.memory_mb); break;
        case 3: detail::read(v, p, msg.memory_total_mb); break;
        case 4: detail::read(v, p, msg.quiesced); break;
        case 5: detail::read(v, p, msg.cpus); break;
      }
    });
    if (msg.node.empty()) detail::fail(at.key("node"), "must not be empty");
    return msg;
  });
}

std::optional<std::string_view> peek_heartbeat_node(std::string_view body) {
  return detail::peek_top_level_str(body, "node");
}

}  // namespace rmbus::messages
