#include "messages/internal/round_done.hpp"

#include "messages/detail/codec.hpp"

namespace rmbus::messages {

std::string encode(const envelope& env, const round_done& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 1);
  detail::pack_kv_uint(pk, "cycle", msg.cycle);
  return detail::to_string(buf);
}

result<round_done> decode_round_done(std::string_view topic, std::string_view body, const decode_limits& limits,
                                     envelope* env_out) {
  static constexpr std::array<std::string_view, 1> keys{"cycle"};
  return detail::guarded<round_done>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    round_done msg;
    detail::read_fields(root, detail::path{}, keys, 0b1,
                        [&](std::size_t, const msgpack::object& v, const detail::path& f) { detail::read(v, f, msg.cycle); });
    return msg;
  });
}

}  // namespace rmbus::messages
