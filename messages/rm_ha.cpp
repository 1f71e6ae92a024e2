#include "messages/rm_ha.hpp"

#include <string>

#include "messages/detail/codec.hpp"
#include "messages/ha_ballot.hpp"

namespace rmbus::messages {

namespace {

constexpr std::array<std::string_view, 3> state_names{"active", "standby", "handover"};
// instance, rank and state are required; admin and to optional. `epoch` is read with the envelope.
constexpr std::array<std::string_view, 5> keys{"instance", "rank", "state", "admin", "to"};

}  // namespace

std::string_view to_string(ha_state s) { return detail::enum_name(s, state_names); }
std::optional<ha_state> parse_ha_state(std::string_view s) { return detail::parse_enum<ha_state>(s, state_names); }

std::string encode(const envelope& env, const rm_ha& msg) {
  auto with_epoch = env;
  with_epoch.epoch = msg.epoch;
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, with_epoch, 3 + (msg.admin.empty() ? 0 : 1) + (msg.to.empty() ? 0 : 1));
  detail::pack_kv_str(pk, "instance", msg.instance);
  detail::pack_kv_uint(pk, "rank", msg.rank);
  detail::pack_kv_str(pk, "state", to_string(msg.state));
  if (!msg.admin.empty()) detail::pack_kv_str(pk, "admin", msg.admin);
  if (!msg.to.empty()) detail::pack_kv_str(pk, "to", msg.to);
  return detail::to_string(buf);
}

result<rm_ha> decode_rm_ha(std::string_view topic, std::string_view body, const decode_limits& limits,
                           envelope* env_out) {
  envelope env;
  auto r = detail::guarded<rm_ha>(topic, body, limits, &env, false, [](const msgpack::object& root) {
    rm_ha msg;
    detail::read_fields(root, detail::path{}, keys, 0b111,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          switch (k) {
                            case 0: detail::read(v, f, msg.instance); break;
                            case 1: detail::read(v, f, msg.rank); break;
                            case 2: detail::read_enum(v, f, state_names, msg.state); break;
                            case 3: detail::read(v, f, msg.admin); break;
                            case 4: detail::read(v, f, msg.to); break;
                          }
                        });
    if (msg.instance.empty()) detail::fail(detail::path{}.key("instance"), "must not be empty");
    return msg;
  });
  if (!r) return r;
  if (!env.epoch) return decode_error{std::string{topic}, "epoch", "missing required key"};
  if (*env.epoch > max_epoch)
    return decode_error{std::string{topic}, "epoch", "above " + std::to_string(max_epoch) + ": not a ballot"};
  r.value().epoch = *env.epoch;
  if (env_out) *env_out = std::move(env);
  return r;
}

}  // namespace rmbus::messages
