#include "tools/web/ha_beacon.hpp"

namespace rmbus::web {

messages::result<ha_beacon> read_ha_beacon(const messages::value& body) {
  const auto* m = body.as_map();
  if (m == nullptr) return messages::decode_error{std::string{ha_topic}, "", "expected a map"};
  ha_beacon b;
  auto uint_of = [&](std::string_view key, std::optional<std::uint64_t>& out) {
    const auto it = m->find(key);
    if (it == m->end()) return;
    if (const auto* u = it->second.as_uint())
      out = *u;
    else
      ++b.wrong_types;
  };
  auto str_of = [&](std::string_view key, std::string& out) {
    const auto it = m->find(key);
    if (it == m->end()) return;
    if (const auto* s = it->second.as_string())
      out = s->substr(0, 256);
    else
      ++b.wrong_types;
  };
  uint_of("epoch", b.epoch);
  uint_of("rank", b.rank);
  str_of("instance", b.instance);
  str_of("state", b.state);
  str_of("admin", b.admin);
  return b;
}

}  // namespace rmbus::web
