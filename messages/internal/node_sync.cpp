#include "messages/internal/node_sync.hpp"

#include "messages/internal/node_entry_codec.hpp"

namespace rmbus::messages {

namespace {
constexpr std::array<std::string_view, 2> request_keys{"reader", "pool"};
constexpr std::array<std::string_view, 2> snapshot_keys{"batch", "nodes"};
}  // namespace

std::string encode(const envelope& env, const node_sync_request& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, msg.pool.empty() ? 1 : 2);
  detail::pack_kv_str(pk, "reader", msg.reader);
  if (!msg.pool.empty()) detail::pack_kv_str(pk, "pool", msg.pool);
  return detail::to_string(buf);
}

result<node_sync_request> decode_node_sync_request(std::string_view topic, std::string_view body,
                                                   const decode_limits& limits, envelope* env_out) {
  return detail::guarded<node_sync_request>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    node_sync_request msg;
    detail::read_fields(root, detail::path{}, request_keys, 0b1,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          detail::read(v, f, k == 0 ? msg.reader : msg.pool);
                        });
    return msg;
  });
}

std::string encode(const envelope& env, const node_snapshot& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 2);
  detail::pack_kv_uint(pk, "batch", msg.seq);
  detail::pack_key(pk, "nodes");
  pk.pack_array(static_cast<std::uint32_t>(msg.nodes.size()));
  for (const auto& e : msg.nodes) detail::pack_node_entry(pk, e);
  return detail::to_string(buf);
}

result<node_snapshot> decode_node_snapshot(std::string_view topic, std::string_view body, const decode_limits& limits,
                                           envelope* env_out) {
  return detail::guarded<node_snapshot>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    node_snapshot msg;
    detail::read_fields(root, detail::path{}, snapshot_keys, 0b11,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          if (k == 0) detail::read(v, f, msg.seq);
                          else detail::read_array(v, f, msg.nodes, detail::read_node_entry);
                        });
    return msg;
  });
}

}  // namespace rmbus::messages
