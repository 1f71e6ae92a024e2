#include "bus/frame_checks.hpp"

#include <cstdint>

#include "messages/utf8.hpp"

namespace rmbus::bus {

std::optional<std::string> check_topic(std::string_view topic, std::size_t max_bytes) {
  if (topic.empty()) return std::string{"empty topic"};
  if (topic.size() > max_bytes)
    return "topic of " + std::to_string(topic.size()) + " bytes exceeds the limit of " +
           std::to_string(max_bytes);
  if (!messages::valid_utf8(topic)) return std::string{"topic is not valid UTF-8"};
  return std::nullopt;
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
