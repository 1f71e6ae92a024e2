#include "messages/internal/round_start.hpp"

#include "messages/detail/codec.hpp"

namespace rmbus::messages {

namespace {

constexpr std::array<std::string_view, 3> refused_keys{"id", "user", "reason"};
constexpr std::array<std::string_view, 6> root_keys{"cycle",       "pools",       "refused",
                                                    "workmap_seq", "workmap_src", "hold"};

void read_refused(const msgpack::object& o, const detail::path& at, refused_work& r) {
  detail::read_fields(o, at, refused_keys, 0b111, [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
    switch (k) {
      case 0: detail::read(v, f, r.id); break;
      case 1: detail::read(v, f, r.user); break;
      case 2: detail::read(v, f, r.reason); break;
    }
  });
}

}  // namespace

std::string encode(const envelope& env, const round_start& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 5 + (msg.hold.empty() ? 0 : 1));
  detail::pack_kv_uint(pk, "cycle", msg.cycle);
  detail::pack_key(pk, "pools");
  pk.pack_array(static_cast<std::uint32_t>(msg.pools.size()));
  for (const auto& p : msg.pools) detail::pack_str(pk, p);
  detail::pack_key(pk, "refused");
  pk.pack_array(static_cast<std::uint32_t>(msg.refused.size()));
  for (const auto& r : msg.refused) {
    pk.pack_map(3);
    detail::pack_kv_str(pk, "id", r.id);
    detail::pack_kv_str(pk, "user", r.user);
    detail::pack_kv_str(pk, "reason", r.reason);
  }
  detail::pack_kv_uint(pk, "workmap_seq", msg.workmap_seq);
  detail::pack_kv_str(pk, "workmap_src", msg.workmap_src);
  if (!msg.hold.empty()) detail::pack_kv_str(pk, "hold", msg.hold);
  return detail::to_string(buf);
}

result<round_start> decode_round_start(std::string_view topic, std::string_view body, const decode_limits& limits,
                                       envelope* env_out) {
  return detail::guarded<round_start>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    round_start msg;
    detail::read_fields(root, detail::path{}, root_keys, 0b11111,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          switch (k) {
                            case 0: detail::read(v, f, msg.cycle); break;
                            case 1: detail::read(v, f, msg.pools); break;
                            case 2: detail::read_array(v, f, msg.refused, read_refused); break;
                            case 3: detail::read(v, f, msg.workmap_seq); break;
                            case 4: detail::read(v, f, msg.workmap_src); break;
                            case 5: detail::read(v, f, msg.hold); break;
                          }
                        });
    return msg;
  });
}

}  // namespace rmbus::messages
