#include "messages/heartbeat.hpp"

#include <algorithm>

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

result<heartbeat> detail::decode_heartbeat_tree(std::string_view topic, std::string_view body,
                                                const decode_limits& limits, envelope* env_out) {
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

std::optional<heartbeat> detail::decode_plain_heartbeat(std::string_view body, const decode_limits& limits,
                                                        envelope* env_out) {
  // The bounds the full decode applies (detail::unpack_body), so that no body passes here that it refuses.
  if (body.empty() || body.size() > limits.max_body_bytes || limits.max_depth < 1) return std::nullopt;
  std::array<flat_entry, 16> entries;
  const auto n = read_flat_map(body, entries, std::min(limits.max_string_bytes, body.size()));
  if (!n || *n > std::min(limits.max_map_len, body.size() / 2)) return std::nullopt;

  // The envelope's keys, then the heartbeat's (`keys`); a key twice or a value of another type: not plain.
  static constexpr std::array<std::string_view, 5> envelope_keys{"v", "seq", "ts_ms", "src", "epoch"};
  static constexpr std::uint64_t required_all = 0b01111 | required << envelope_keys.size();
  using kind = flat_entry::kind;
  static constexpr std::array<kind, 11> types{kind::uint, kind::uint,    kind::uint, kind::str,
                                              kind::uint, kind::str,     kind::str,  kind::uint,
                                              kind::uint, kind::boolean, kind::uint};
  const auto index_of = [](std::string_view key) {
    if (const auto* e = std::find(envelope_keys.begin(), envelope_keys.end(), key); e != envelope_keys.end())
      return static_cast<std::size_t>(e - envelope_keys.begin());
    return envelope_keys.size() +
           static_cast<std::size_t>(std::find(keys.begin(), keys.end(), key) - keys.begin());
  };
  static_assert(types.size() == envelope_keys.size() + keys.size());
  std::array<const flat_entry*, types.size()> at{};
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < *n; ++i) {
    const auto& e = entries[i];
    const auto k = index_of(e.key);
    if (k == types.size()) continue;  // unknown: ignored, as the full decode does
    if ((seen >> k & 1u) != 0 || e.type != types[k]) return std::nullopt;
    seen |= std::uint64_t{1} << k;
    at[k] = &e;
  }
  if ((seen & required_all) != required_all || at[0]->uint != schema_version) return std::nullopt;
  const auto& src = at[3]->str;
  const auto& node = at[5]->str;
  if (src.empty() || node.empty() || !valid_utf8(src) || !valid_utf8(node) || !valid_utf8(at[6]->str))
    return std::nullopt;

  heartbeat msg;
  msg.node.assign(node);
  msg.ip.assign(at[6]->str);
  msg.memory_mb = at[7]->uint;
  if (at[8] != nullptr) msg.memory_total_mb = at[8]->uint;
  if (at[9] != nullptr) msg.quiesced = at[9]->uint != 0;
  if (at[10] != nullptr) msg.cpus = at[10]->uint;
  if (env_out != nullptr) {
    env_out->v = static_cast<std::uint32_t>(at[0]->uint);
    env_out->seq = at[1]->uint;
    env_out->ts_ms = at[2]->uint;
    env_out->src.assign(src);
    env_out->epoch = at[4] != nullptr ? std::optional{at[4]->uint} : std::nullopt;
  }
  return msg;
}

result<heartbeat> decode_heartbeat(std::string_view topic, std::string_view body, const decode_limits& limits,
                                   envelope* env_out) {
  if (auto msg = detail::decode_plain_heartbeat(body, limits, env_out)) return std::move(*msg);
  return detail::decode_heartbeat_tree(topic, body, limits, env_out);
}

std::optional<std::string_view> peek_heartbeat_node(std::string_view body) {
  return detail::peek_top_level_str(body, "node");
}

}  // namespace rmbus::messages
