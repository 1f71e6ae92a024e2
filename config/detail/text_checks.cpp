#include "config/detail/text_checks.hpp"

namespace rmbus::config::detail {

bool valid_utf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const unsigned lead = *p;
    if (lead < 0x80) {
      ++p;
      continue;
    }
    // The sequence length and the smallest code point it may encode (anything less is an overlong form).
    std::size_t more = 0;
    unsigned least = 0;
    unsigned cp = 0;
    if ((lead & 0xe0) == 0xc0) {
      more = 1, least = 0x80, cp = lead & 0x1f;
    } else if ((lead & 0xf0) == 0xe0) {
      more = 2, least = 0x800, cp = lead & 0x0f;
    } else if ((lead & 0xf8) == 0xf0) {
      more = 3, least = 0x10000, cp = lead & 0x07;
    } else {
      return false;
    }
    if (static_cast<std::size_t>(end - p) <= more) return false;
    for (std::size_t i = 1; i <= more; ++i) {
      if ((p[i] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3f);
    }
    if (cp < least || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    p += more + 1;
  }
  return true;
}

void check_utf8_lines(std::string_view text, const std::string& file, error_list& errors) {
  int line = 1;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const auto current = text.substr(0, end);
    if (!valid_utf8(current)) errors.add(file, line, "line is not valid UTF-8 (configuration files are UTF-8 text)");
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
    ++line;
  }
}

}  // namespace rmbus::config::detail
