#include "messages/internal/reconfigure_request.hpp"

#include "messages/detail/codec.hpp"

namespace rmbus::messages {

std::string encode(const envelope& env, const reconfigure_request&) { return encode(env); }

result<reconfigure_request> decode_reconfigure_request(std::string_view topic, std::string_view body,
                                                       const decode_limits& limits, envelope* env_out) {
  return detail::guarded<reconfigure_request>(topic, body, limits, env_out, false,
                                              [](const msgpack::object&) { return reconfigure_request{}; });
}

}  // namespace rmbus::messages
