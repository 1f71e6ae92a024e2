#include "messages/rm_nodes.hpp"

#include "messages/detail/codec.hpp"

namespace rmbus::messages {

namespace {

constexpr std::array<std::string_view, 6> node_state_names{"up",         "missing",  "down",
                                                           "varied_off", "quiesced", "blacklisted"};
constexpr std::array<std::string_view, 8> node_keys{"node",      "pool",   "nodepool",    "state",
                                                    "memory_mb", "quanta", "free_quanta", "missed"};
constexpr std::array<std::string_view, 1> root_keys{"nodes"};

void read_node(const msgpack::object& o, const detail::path& at, node_report& n) {
  detail::read_fields(o, at, node_keys, 0xff, [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
    switch (k) {
      case 0: detail::read(v, f, n.node); break;
      case 1: detail::read(v, f, n.pool); break;
      case 2: detail::read(v, f, n.nodepool); break;
      case 3: detail::read_enum(v, f, node_state_names, n.state); break;
      case 4: detail::read(v, f, n.memory_mb); break;
      case 5: detail::read(v, f, n.quanta); break;
      case 6: detail::read(v, f, n.free_quanta); break;
      case 7: detail::read(v, f, n.missed); break;
    }
  });
}

void pack_node(detail::packer& pk, const node_report& n) {
  pk.pack_map(8);
  detail::pack_kv_str(pk, "node", n.node);
  detail::pack_kv_str(pk, "pool", n.pool);
  detail::pack_kv_str(pk, "nodepool", n.nodepool);
  detail::pack_kv_str(pk, "state", detail::enum_name(n.state, node_state_names));
  detail::pack_kv_uint(pk, "memory_mb", n.memory_mb);
  detail::pack_kv_uint(pk, "quanta", n.quanta);
  detail::pack_kv_uint(pk, "free_quanta", n.free_quanta);
  detail::pack_kv_uint(pk, "missed", n.missed);
}

}  // namespace

std::string_view to_string(node_state s) { return detail::enum_name(s, node_state_names); }
std::optional<node_state> parse_node_state(std::string_view s) {
  return detail::parse_enum<node_state>(s, node_state_names);
}

std::string encode(const envelope& env, const rm_nodes& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 1);
  detail::pack_key(pk, "nodes");
  pk.pack_array(static_cast<std::uint32_t>(msg.nodes.size()));
  if (msg.encoded_nodes.size() == msg.nodes.size() && !msg.nodes.empty())
    return detail::to_string(buf, msg.encoded_nodes);
  for (const auto& n : msg.nodes) pack_node(pk, n);
  return detail::to_string(buf);
}

std::string encode_node_entry(const node_report& n) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  pack_node(pk, n);
  return detail::to_string(buf);
}

result<rm_nodes> decode_rm_nodes(std::string_view topic, std::string_view body, const decode_limits& limits,
                                 envelope* env_out) {
  return detail::guarded<rm_nodes>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    rm_nodes msg;
    detail::read_fields(root, detail::path{}, root_keys, 0b1,
                        [&](std::size_t, const msgpack::object& v, const detail::path& f) {
                          detail::read_array(v, f, msg.nodes, read_node);
                        });
    return msg;
  });
}

}  // namespace rmbus::messages
