#include "messages/internal/admin_query.hpp"

#include "messages/detail/value_codec.hpp"

namespace rmbus::messages {

namespace {

constexpr std::array<std::string_view, 3> query_keys{"qid", "cmd", "args"};
constexpr std::array<std::string_view, 3> answer_keys{"qid", "from", "result"};

// A value map, with the same checks as any value read off the bus (value_codec.hpp).
void read_value_map(const msgpack::object& o, const detail::path& at, value::map& out) {
  auto v = detail::to_value(o, at);
  auto* m = v.as_map();
  if (m == nullptr) detail::fail(at, "expected map");
  out = std::move(*m);
}

}  // namespace

std::string encode(const envelope& env, const admin_query& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 3);
  detail::pack_kv_uint(pk, "qid", msg.qid);
  detail::pack_kv_str(pk, "cmd", msg.cmd);
  detail::pack_key(pk, "args");
  detail::pack_value(pk, value{msg.args});
  return detail::to_string(buf);
}

result<admin_query> decode_admin_query(std::string_view topic, std::string_view body, const decode_limits& limits,
                                       envelope* env_out) {
  return detail::guarded<admin_query>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    admin_query msg;
    detail::read_fields(root, detail::path{}, query_keys, 0b111,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          switch (k) {
                            case 0: detail::read(v, f, msg.qid); break;
                            case 1: detail::read(v, f, msg.cmd); break;
                            case 2: read_value_map(v, f, msg.args); break;
                          }
                        });
    return msg;
  });
}

std::string encode(const envelope& env, const admin_answer& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 3);
  detail::pack_kv_uint(pk, "qid", msg.qid);
  detail::pack_kv_str(pk, "from", msg.from);
  detail::pack_key(pk, "result");
  detail::pack_value(pk, value{msg.result});
  return detail::to_string(buf);
}

result<admin_answer> decode_admin_answer(std::string_view topic, std::string_view body, const decode_limits& limits,
                                         envelope* env_out) {
  return detail::guarded<admin_answer>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    admin_answer msg;
    detail::read_fields(root, detail::path{}, answer_keys, 0b111,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          switch (k) {
                            case 0: detail::read(v, f, msg.qid); break;
                            case 1: detail::read(v, f, msg.from); break;
                            case 2: read_value_map(v, f, msg.result); break;
                          }
                        });
    return msg;
  });
}

}  // namespace rmbus::messages
