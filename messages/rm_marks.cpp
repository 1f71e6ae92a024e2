#include "messages/rm_marks.hpp"

#include <algorithm>

#include "messages/detail/codec.hpp"

namespace rmbus::messages {

namespace {
constexpr std::array<std::string_view, 1> root_keys{"offline"};
}  // namespace

std::string encode(const envelope& env, const rm_marks& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 1);
  detail::pack_key(pk, "offline");
  pk.pack_array(static_cast<std::uint32_t>(msg.offline.size()));
  for (const auto& n : msg.offline) detail::pack_str(pk, n);
  return detail::to_string(buf);
}

result<rm_marks> decode_rm_marks(std::string_view topic, std::string_view body, const decode_limits& limits,
                                 envelope* env_out) {
  return detail::guarded<rm_marks>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    rm_marks msg;
    detail::read_fields(root, detail::path{}, root_keys, 0b1, [&](std::size_t, const msgpack::object& v, const detail::path& f) {
      detail::read_array(v, f, msg.offline, [](const msgpack::object& o, const detail::path& p, std::string& node) {
        detail::read(o, p, node);
        if (node.empty()) detail::fail(p, "must not be empty");
      });
    });
    std::sort(msg.offline.begin(), msg.offline.end());
    if (std::adjacent_find(msg.offline.begin(), msg.offline.end()) != msg.offline.end())
      detail::fail(detail::path{}.key("offline"), "names a node twice");
    return msg;
  });
}

}  // namespace rmbus::messages
