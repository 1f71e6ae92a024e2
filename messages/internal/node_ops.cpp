#include "messages/internal/node_ops.hpp"

#include "messages/detail/codec.hpp"

namespace rmbus::messages {

namespace {

constexpr std::array<std::string_view, 8> op_names{"update", "down",  "vary_off", "vary_on",
                                                   "forget", "drain", "undrain",  "unreachable"};
constexpr std::array<std::string_view, 6> op_keys{"op", "node", "ip", "memory_mb", "quiesced", "nodepool"};
constexpr std::array<std::string_view, 2> root_keys{"ops", "announced_to"};

void read_op(const msgpack::object& o, const detail::path& at, node_op& op) {
  detail::read_fields(o, at, op_keys, 0b111111, [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
    switch (k) {
      case 0: detail::read_enum(v, f, op_names, op.op); break;
      case 1: detail::read(v, f, op.node); break;
      case 2: detail::read(v, f, op.ip); break;
      case 3: detail::read(v, f, op.memory_mb); break;
      case 4: detail::read(v, f, op.quiesced); break;
      case 5: detail::read(v, f, op.nodepool); break;
    }
  });
  if (op.node.empty()) detail::fail(at.key("node"), "must not be empty");
}

}  // namespace

std::string_view to_string(node_op_kind k) { return detail::enum_name(k, op_names); }

std::string encode(const envelope& env, const node_ops& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, msg.announced_to.empty() ? 1 : 2);
  detail::pack_key(pk, "ops");
  pk.pack_array(static_cast<std::uint32_t>(msg.ops.size()));
  for (const auto& op : msg.ops) {
    pk.pack_map(6);
    detail::pack_kv_str(pk, "op", detail::enum_name(op.op, op_names));
    detail::pack_kv_str(pk, "node", op.node);
    detail::pack_kv_str(pk, "ip", op.ip);
    detail::pack_kv_uint(pk, "memory_mb", op.memory_mb);
    detail::pack_kv_bool(pk, "quiesced", op.quiesced);
    detail::pack_kv_str(pk, "nodepool", op.nodepool);
  }
  if (!msg.announced_to.empty()) detail::pack_kv_str(pk, "announced_to", msg.announced_to);
  return detail::to_string(buf);
}

result<node_ops> decode_node_ops(std::string_view topic, std::string_view body, const decode_limits& limits,
                                 envelope* env_out) {
  return detail::guarded<node_ops>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    node_ops msg;
    detail::read_fields(root, detail::path{}, root_keys, 0b1,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          if (k == 0) detail::read_array(v, f, msg.ops, read_op);
                          else detail::read(v, f, msg.announced_to);
                        });
    return msg;
  });
}

}  // namespace rmbus::messages
