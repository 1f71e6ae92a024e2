#include "bus/frame_checks.hpp"

#include <cstdint>

namespace rmbus::bus {

std::optional<std::string> check_topic(std::string_view topic, std::size_t max_bytes) {
  if (topic.empty()) return std::string{"empty topic"};
  if (topic.size() > max_bytes)
    return "topic of " + std::to_string(topic.size()) + " bytes exceeds the limit of " +
           std::to_string(max_bytes);
  if (!is_valid_utf8(topic)) return std::string{"topic is not valid UTF-8"};
  return std::nullopt;
}

bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<std::uint8_t>(s[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;  // a continuation byte where a sequence should start, or 0xF8..0xFF
    }
    if (s.size() - i < len) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<std::uint8_t>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    static constexpr std::uint32_t min_for_len[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_len[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
    i += len;
  }
  return true;
}

std::string printable_topic(std::string_view topic, std::size_t max_bytes) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  const std::size_t n = topic.size() < max_bytes ? topic.size() : max_bytes;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<std::uint8_t>(topic[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xF];
    }
  }
  if (topic.size() > n) out += "...";
  return out;
}

}  // namespace rmbus::bus
