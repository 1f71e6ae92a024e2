#include "messages/internal/machines_forgotten.hpp"

#include "messages/detail/codec.hpp"

namespace rmbus::messages {

namespace {

constexpr std::array<std::string_view, 3> root_keys{"pool", "forgotten", "kept"};

void pack_names(detail::packer& pk, std::string_view key, const std::vector<std::string>& names) {
  detail::pack_key(pk, key);
  pk.pack_array(static_cast<std::uint32_t>(names.size()));
  for (const auto& n : names) detail::pack_str(pk, n);
}

}  // namespace

std::string encode(const envelope& env, const machines_forgotten& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 3);
  detail::pack_kv_str(pk, "pool", msg.pool);
  pack_names(pk, "forgotten", msg.forgotten);
  pack_names(pk, "kept", msg.kept);
  return detail::to_string(buf);
}

result<machines_forgotten> decode_machines_forgotten(std::string_view topic, std::string_view body,
                                                     const decode_limits& limits, envelope* env_out) {
  return detail::guarded<machines_forgotten>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    machines_forgotten msg;
    detail::read_fields(root, detail::path{}, root_keys, 0b111,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          switch (k) {
                            case 0: detail::read(v, f, msg.pool); break;
                            case 1: detail::read(v, f, msg.forgotten); break;
                            case 2: detail::read(v, f, msg.kept); break;
                          }
                        });
    return msg;
  });
}

}  // namespace rmbus::messages
