#include "messages/internal/vary_request.hpp"

#include "messages/detail/codec.hpp"

namespace rmbus::messages {

namespace {
constexpr std::array<std::string_view, 4> op_names{"vary_on", "vary_off", "undrain", "drain"};  // index = off + 2 drain
constexpr std::array<std::string_view, 3> keys{"qid", "op", "nodes"};
}  // namespace

std::string encode(const envelope& env, const vary_request& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 3);
  detail::pack_kv_uint(pk, "qid", msg.qid);
  detail::pack_kv_str(pk, "op", op_names[(msg.off ? 1 : 0) + (msg.drain ? 2 : 0)]);
  detail::pack_key(pk, "nodes");
  pk.pack_array(static_cast<std::uint32_t>(msg.nodes.size()));
  for (const auto& n : msg.nodes) detail::pack_str(pk, n);
  return detail::to_string(buf);
}

result<vary_request> decode_vary_request(std::string_view topic, std::string_view body, const decode_limits& limits,
                                         envelope* env_out) {
  return detail::guarded<vary_request>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    vary_request msg;
    detail::read_fields(root, detail::path{}, keys, 0b111,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          switch (k) {
                            case 0: detail::read(v, f, msg.qid); break;
                            case 1: {
                              int off = 0;
                              detail::read_enum(v, f, op_names, off);
                              msg.off = off % 2 == 1;
                              msg.drain = off >= 2;
                              break;
                            }
                            case 2: detail::read(v, f, msg.nodes); break;
                          }
                        });
    return msg;
  });
}

}  // namespace rmbus::messages
