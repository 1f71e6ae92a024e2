#include "messages/envelope.hpp"

#include "messages/detail/codec.hpp"

namespace rmbus::messages {

result<envelope> decode_envelope(std::string_view topic, std::string_view body, const decode_limits& limits) {
  envelope env;
  auto r = detail::guarded<bool>(topic, body, limits, &env, false, [](const msgpack::object&) { return true; });
  if (!r) return r.error();
  return env;
}

std::string encode(const envelope& env) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 0);
  return detail::to_string(buf);
}

}  // namespace rmbus::messages
