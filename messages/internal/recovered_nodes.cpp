#include "messages/internal/recovered_nodes.hpp"

#include "messages/detail/codec.hpp"

namespace rmbus::messages {

namespace {

constexpr std::array<std::string_view, 2> node_keys{"node", "memory_mb"};
constexpr std::array<std::string_view, 1> root_keys{"nodes"};

void read_node(const msgpack::object& o, const detail::path& at, recovered_node& n) {
  detail::read_fields(o, at, node_keys, 0b11, [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
    if (k == 0) detail::read(v, f, n.node);
    else detail::read(v, f, n.memory_mb);
  });
}

}  // namespace

std::string encode(const envelope& env, const recovered_nodes& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 1);
  detail::pack_key(pk, "nodes");
  pk.pack_array(static_cast<std::uint32_t>(msg.nodes.size()));
  for (const auto& n : msg.nodes) {
    pk.pack_map(2);
    detail::pack_kv_str(pk, "node", n.node);
    detail::pack_kv_uint(pk, "memory_mb", n.memory_mb);
  }
  return detail::to_string(buf);
}

result<recovered_nodes> decode_recovered_nodes(std::string_view topic, std::string_view body,
                                               const decode_limits& limits, envelope* env_out) {
  return detail::guarded<recovered_nodes>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    recovered_nodes msg;
    detail::read_fields(root, detail::path{}, root_keys, 0b1,
                        [&](std::size_t, const msgpack::object& v, const detail::path& f) {
                          detail::read_array(v, f, msg.nodes, read_node);
                        });
    return msg;
  });
}

}  // namespace rmbus::messages
