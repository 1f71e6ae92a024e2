// Internal: the entry codecs that do not belong to one message (work items and job schedules live with
// workmap.cpp and rm_state.cpp, where they were first defined).
#include "messages/detail/entries.hpp"

namespace rmbus::messages::detail {

void pack_uint_map(packer& pk, const std::map<std::string, std::uint64_t>& m) {
  pk.pack_map(static_cast<std::uint32_t>(m.size()));
  for (const auto& [k, v] : m) pack_kv_uint(pk, k, v);
}

void read_uint_map(const msgpack::object& o, const path& at, std::map<std::string, std::uint64_t>& m) {
  const auto& map = as_map(o, at);
  m.clear();
  for (std::uint32_t i = 0; i < map.size; ++i) {
    const auto key = stored_key_of(map.ptr[i], at);
    std::uint64_t v = 0;
    read(map.ptr[i].val, at.key(key), v);
    if (!m.emplace(std::string{key}, v).second) fail(at.key(key), "duplicate key");
  }
}

}  // namespace rmbus::messages::detail
