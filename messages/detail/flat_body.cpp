#include "messages/detail/flat_body.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include "messages/detail/codec.hpp"
#include "messages/utf8.hpp"

namespace rmbus::messages::detail {

std::optional<std::size_t> read_flat_body(std::string_view body, const decode_limits& limits,
                                          std::span<flat_entry> out) {
  // The bounds of unpack_body: a body within max_body_bytes, no string longer than max_string_bytes (or the
  // body), no map of more entries than max_map_len (or half the body), and a map is already at depth 1.
  if (body.empty() || body.size() > limits.max_body_bytes || limits.max_depth < 1) return std::nullopt;
  const auto n = read_flat_map(body, out, std::min(limits.max_string_bytes, body.size()));
  if (!n || *n > std::min(limits.max_map_len, body.size() / 2)) return std::nullopt;
  return n;
}

bool read_flat_envelope(std::span<const flat_entry> entries, envelope* out) {
  const auto& names = envelope_keys;
  using kind = flat_entry::kind;
  static constexpr std::array<kind, envelope_keys.size()> types{kind::uint, kind::uint, kind::uint, kind::str,
                                                                kind::uint};
  std::array<const flat_entry*, envelope_keys.size()> at{};
  for (const auto& e : entries) {
    const auto k = static_cast<std::size_t>(std::find(names.begin(), names.end(), e.key) - names.begin());
    if (k == names.size()) continue;
    if (at[k] != nullptr || e.type != types[k]) return false;
    at[k] = &e;
  }
  if (at[0] == nullptr || at[1] == nullptr || at[2] == nullptr || at[3] == nullptr) return false;
  if (at[0]->uint != schema_version || at[3]->str.empty() || !valid_utf8(at[3]->str)) return false;
  if (out != nullptr) {
    out->v = schema_version;
    out->seq = at[1]->uint;
    out->ts_ms = at[2]->uint;
    out->src.assign(at[3]->str);
    out->epoch = at[4] != nullptr ? std::optional{at[4]->uint} : std::nullopt;
  }
  return true;
}

}  // namespace rmbus::messages::detail
