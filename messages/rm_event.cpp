#include "messages/rm_event.hpp"

#include "messages/detail/codec.hpp"

namespace rmbus::messages {

namespace {
constexpr std::array<std::string_view, 2> keys{"kind", "detail"};
}  // namespace

rm_event make_bad_message_event(const decode_error& error) {
  rm_event ev{std::string{event_kinds::bad_message}, {}};
  ev.detail["topic"] = error.topic;
  if (!error.field.empty()) ev.detail["field"] = error.field;
  ev.detail["error"] = error.message();
  return ev;
}

std::string encode(const envelope& env, const rm_event& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 2);
  detail::pack_kv_str(pk, "kind", msg.kind);
  detail::pack_key(pk, "detail");
  pk.pack_map(static_cast<std::uint32_t>(msg.detail.size()));
  for (const auto& [k, v] : msg.detail) detail::pack_kv_str(pk, k, v);
  return detail::to_string(buf);
}

result<rm_event> decode_rm_event(std::string_view topic, std::string_view body, const decode_limits& limits,
                                 envelope* env_out) {
  return detail::guarded<rm_event>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    rm_event msg;
    detail::read_fields(root, detail::path{}, keys, 0b11,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          if (k == 0) {
                            detail::read(v, f, msg.kind);
                            if (msg.kind.empty()) detail::fail(f, "must not be empty");
                            return;
                          }
                          const auto& m = detail::as_map(v, f);
                          for (std::uint32_t i = 0; i < m.size; ++i) {
                            const auto key = detail::stored_key_of(m.ptr[i], f);
                            std::string value;
                            detail::read(m.ptr[i].val, f.key(key), value);
                            if (!msg.detail.emplace(std::string{key}, std::move(value)).second)
                              detail::fail(f.key(key), "duplicate key");
                          }
                        });
    return msg;
  });
}

}  // namespace rmbus::messages
