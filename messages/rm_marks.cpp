#include "messages/rm_marks.hpp"

#include <algorithm>

#include "messages/detail/codec.hpp"

namespace rmbus::messages {

namespace {
constexpr std::array<std::string_view, 2> root_keys{"offline", "drained"};

void read_names(const msgpack::object& v, const detail::path& f, std::vector<std::string>& out) {
  detail::read_array(v, f, out, [](const msgpack::object& o, const detail::path& p, std::string& node) {
    detail::read(o, p, node);
    if (node.empty()) detail::fail(p, "must not be empty");
  });
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) detail::fail(f, "names a node twice");
}

void pack_names(detail::packer& pk, std::string_view key, const std::vector<std::string>& names) {
  detail::pack_key(pk, key);
  pk.pack_array(static_cast<std::uint32_t>(names.size()));
  for (const auto& n : names) detail::pack_str(pk, n);
}
}  // namespace

std::string encode(const envelope& env, const rm_marks& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, msg.drained.empty() ? 1 : 2);
  pack_names(pk, "offline", msg.offline);
  if (!msg.drained.empty()) pack_names(pk, "drained", msg.drained);
  return detail::to_string(buf);
}

result<rm_marks> decode_rm_marks(std::string_view topic, std::string_view body, const decode_limits& limits,
                                 envelope* env_out) {
  return detail::guarded<rm_marks>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    rm_marks msg;
    detail::read_fields(root, detail::path{}, root_keys, 0b1,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          read_names(v, f, k == 0 ? msg.offline : msg.drained);
                        });
    return msg;
  });
}

}  // namespace rmbus::messages
