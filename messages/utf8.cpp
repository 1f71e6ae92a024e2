#include "messages/utf8.hpp"

#include <cstdint>
#include <cstring>

namespace rmbus::messages {

std::size_t utf8_sequence_length(std::string_view s, std::size_t at) {
  const auto lead = static_cast<std::uint8_t>(s[at]);
  if (lead < 0x80) return 1;
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if ((lead & 0xE0) == 0xC0) {
    n = 2, cp = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    n = 3, cp = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    n = 4, cp = lead & 0x07;
  } else {
    return 0;
  }
  if (s.size() - at < n) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto c = static_cast<std::uint8_t>(s[at + k]);
    if ((c & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3F);
  }
  // The smallest code point each length may encode: anything less is an overlong form.
  static constexpr std::uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < least[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
  return n;
}

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    // Runs of ASCII eight bytes at a time: nearly all text on the bus (names, ids, states) is ASCII.
    std::uint64_t word = 0;
    if (s.size() - i >= sizeof word) {
      std::memcpy(&word, s.data() + i, sizeof word);
      if ((word & 0x8080808080808080u) == 0) {
        i += sizeof word;
        continue;
      }
    }
    const auto n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace rmbus::messages
