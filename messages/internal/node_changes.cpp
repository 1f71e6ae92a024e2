#include "messages/internal/node_changes.hpp"

#include "messages/internal/node_entry_codec.hpp"

namespace rmbus::messages {

namespace {

constexpr std::array<std::string_view, 3> liveness_names{"up", "missing", "down"};
constexpr std::array<std::string_view, 8> entry_keys{"node",   "pool",      "nodepool", "state",
                                                     "missed", "memory_mb", "quanta",   "quiesced"};
// `batch` on the wire: `seq` is the envelope's (one per message), the batch number is the intake's own.
constexpr std::array<std::string_view, 5> root_keys{"batch", "changed", "heartbeats", "late_heartbeats",
                                                    "forgotten"};

}  // namespace

std::string_view to_string(node_liveness s) { return detail::enum_name(s, liveness_names); }

void detail::pack_node_entry(packer& pk, const node_entry& e) {
  pk.pack_map(8);
  pack_kv_str(pk, "node", e.node);
  pack_kv_str(pk, "pool", e.pool);
  pack_kv_str(pk, "nodepool", e.nodepool);
  pack_kv_str(pk, "state", enum_name(e.state, liveness_names));
  pack_kv_uint(pk, "missed", e.missed);
  pack_kv_uint(pk, "memory_mb", e.memory_mb);
  pack_kv_uint(pk, "quanta", e.quanta);
  pack_kv_bool(pk, "quiesced", e.quiesced);
}

void detail::read_node_entry(const msgpack::object& o, const path& at, node_entry& e) {
  read_fields(o, at, entry_keys, 0xff, [&](std::size_t k, const msgpack::object& v, const path& f) {
    switch (k) {
      case 0: read(v, f, e.node); break;
      case 1: read(v, f, e.pool); break;
      case 2: read(v, f, e.nodepool); break;
      case 3: read_enum(v, f, liveness_names, e.state); break;
      case 4: read(v, f, e.missed); break;
      case 5: read(v, f, e.memory_mb); break;
      case 6: read(v, f, e.quanta); break;
      case 7: read(v, f, e.quiesced); break;
    }
  });
  if (e.node.empty()) fail(at.key("node"), "must not be empty");
}

std::string encode(const envelope& env, const node_changes& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, msg.forgotten.empty() ? 4 : 5);
  detail::pack_kv_uint(pk, "batch", msg.seq);
  detail::pack_key(pk, "changed");
  pk.pack_array(static_cast<std::uint32_t>(msg.changed.size()));
  for (const auto& e : msg.changed) detail::pack_node_entry(pk, e);
  detail::pack_kv_uint(pk, "heartbeats", msg.heartbeats);
  detail::pack_kv_uint(pk, "late_heartbeats", msg.late_heartbeats);
  if (!msg.forgotten.empty()) {
    detail::pack_key(pk, "forgotten");
    pk.pack_array(static_cast<std::uint32_t>(msg.forgotten.size()));
    for (const auto& n : msg.forgotten) detail::pack_str(pk, n);
  }
  return detail::to_string(buf);
}

result<node_changes> decode_node_changes(std::string_view topic, std::string_view body, const decode_limits& limits,
                                         envelope* env_out) {
  return detail::guarded<node_changes>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    node_changes msg;
    detail::read_fields(root, detail::path{}, root_keys, 0b1111,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          switch (k) {
                            case 0: detail::read(v, f, msg.seq); break;
                            case 1: detail::read_array(v, f, msg.changed, detail::read_node_entry); break;
                            case 2: detail::read(v, f, msg.heartbeats); break;
                            case 3: detail::read(v, f, msg.late_heartbeats); break;
                            case 4: detail::read(v, f, msg.forgotten); break;
                          }
                        });
    return msg;
  });
}

}  // namespace rmbus::messages
