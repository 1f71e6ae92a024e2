#include "messages/internal/plan_sync_request.hpp"

#include "messages/detail/codec.hpp"

namespace rmbus::messages {

std::string encode(const envelope& env, const plan_sync_request& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 2);
  detail::pack_kv_str(pk, "pool", msg.pool);
  detail::pack_kv_uint(pk, "generation", msg.generation);
  return detail::to_string(buf);
}

result<plan_sync_request> decode_plan_sync_request(std::string_view topic, std::string_view body,
                                                   const decode_limits& limits, envelope* env_out) {
  static constexpr std::array<std::string_view, 2> keys{"pool", "generation"};
  return detail::guarded<plan_sync_request>(
      topic, body, limits, env_out, false, [](const msgpack::object& root) {
        plan_sync_request msg;
        detail::read_fields(root, detail::path{}, keys, 0b11,
                            [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                              if (k == 0)
                                detail::read(v, f, msg.pool);
                              else
                                detail::read(v, f, msg.generation);
                            });
        if (msg.pool.empty()) detail::fail(detail::path{}.key("pool"), "must not be empty");
        return msg;
      });
}

}  // namespace rmbus::messages
