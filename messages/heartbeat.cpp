#include "messages/heartbeat.hpp"

#include <algorithm>
#include <array>
#include <span>

#include "messages/detail/codec.hpp"
#include "messages/detail/flat_body.hpp"
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
  std::array<flat_entry, max_flat_entries> entries;
  const auto n = read_flat_body(body, limits, entries);
  if (!n) return std::nullopt;
  const std::span<const flat_entry> read{entries.data(), *n};
  envelope env;  // written to *env_out only when the whole heartbeat is taken
  if (!read_flat_envelope(read, env_out != nullptr ? &env : nullptr)) return std::nullopt;

  // The heartbeat's keys, each at most once and of its type (envelope and unknown keys are passed over).
  using kind = flat_entry::kind;
  static constexpr std::array<kind, keys.size()> types{kind::str,  kind::str,     kind::uint,
                                                       kind::uint, kind::boolean, kind::uint};
  std::array<const flat_entry*, keys.size()> at{};
  for (const auto& e : read) {
    const auto k = static_cast<std::size_t>(std::find(keys.begin(), keys.end(), e.key) - keys.begin());
    if (k == keys.size()) continue;
    if (at[k] != nullptr || e.type != types[k]) return std::nullopt;
    at[k] = &e;
  }
  for (std::size_t k = 0; k < keys.size(); ++k)
    if ((required >> k & 1u) != 0 && at[k] == nullptr) return std::nullopt;
  if (at[0]->str.empty() || !valid_utf8(at[0]->str) || !valid_utf8(at[1]->str)) return std::nullopt;

  heartbeat msg;
  msg.node.assign(at[0]->str);
  msg.ip.assign(at[1]->str);
  msg.memory_mb = at[2]->uint;
  if (at[3] != nullptr) msg.memory_total_mb = at[3]->uint;
  if (at[4] != nullptr) msg.quiesced = at[4]->uint != 0;
  if (at[5] != nullptr) msg.cpus = at[5]->uint;
  if (env_out != nullptr) *env_out = std::move(env);
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
