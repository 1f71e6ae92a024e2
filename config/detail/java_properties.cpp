#include "config/detail/java_properties.hpp"

#include <vector>

namespace rmbus::config::detail {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\r'; }

bool ends_in_continuation(std::string_view line) {
  std::size_t slashes = 0;
  for (auto i = line.size(); i > 0 && line[i - 1] == '\\'; --i) ++slashes;
  return slashes % 2 == 1;
}

// Reads from `pos` up to one of `stops` (unescaped), decoding escapes.
std::string read_escaped(std::string_view text, std::size_t& pos, std::string_view stops) {
  std::string out;
  while (pos < text.size()) {
    char c = text[pos];
    if (c == '\\' && pos + 1 < text.size()) {
      char n = text[pos + 1];
      switch (n) {
        case 't': out += '\t'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 'f': out += '\f'; break;
        default: out += n;
      }
      pos += 2;
      continue;
    }
    if (stops.find(c) != std::string_view::npos) break;
    out += c;
    ++pos;
  }
  return out;
}

}  // namespace

property_map parse_java_properties(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos <= text.size();) {
    auto eol = text.find('\n', pos);
    lines.push_back(text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos));
    if (eol == std::string_view::npos) break;
    pos = eol + 1;
  }
  property_map props;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view first = lines[i];
    std::size_t start = 0;
    while (start < first.size() && is_blank(first[start])) ++start;
    if (start == first.size() || first[start] == '#' || first[start] == '!') continue;
    int line_no = static_cast<int>(i + 1);
    // Join continuation lines (leading blanks of a continuation are dropped).
    std::string logical(first.substr(start));
    while (!logical.empty() && logical.back() == '\r') logical.pop_back();
    while (ends_in_continuation(logical) && i + 1 < lines.size()) {
      logical.pop_back();
      std::string_view next = lines[++i];
      std::size_t s = 0;
      while (s < next.size() && is_blank(next[s])) ++s;
      logical += next.substr(s);
      while (!logical.empty() && logical.back() == '\r') logical.pop_back();
    }
    if (ends_in_continuation(logical)) logical.pop_back();
    std::size_t pos = 0;
    std::string key = read_escaped(logical, pos, "=: \t\f");
    while (pos < logical.size() && is_blank(logical[pos])) ++pos;
    if (pos < logical.size() && (logical[pos] == '=' || logical[pos] == ':')) ++pos;
    while (pos < logical.size() && is_blank(logical[pos])) ++pos;
    std::string value = read_escaped(logical, pos, "");
    while (!value.empty() && is_blank(value.back())) value.pop_back();
    props[key] = property{value, line_no};
  }
  return props;
}

std::string expand_property(const property_map& props, const std::string& value) {
  std::string current = value;
  for (int depth = 0; depth < 16; ++depth) {
    std::string next;
    bool changed = false;
    std::size_t pos = 0;
    while (pos < current.size()) {
      auto open = current.find("${", pos);
      if (open == std::string::npos) {
        next += current.substr(pos);
        break;
      }
      auto close = current.find('}', open + 2);
      if (close == std::string::npos) {
        next += current.substr(pos);
        break;
      }
      next += current.substr(pos, open - pos);
      auto it = props.find(current.substr(open + 2, close - open - 2));
      if (it != props.end()) {
        next += it->second.value;
        changed = true;
      } else {
        next += current.substr(open, close - open + 1);
      }
      pos = close + 1;
    }
    current = std::move(next);
    if (!changed) break;
  }
  return current;
}

}  // namespace rmbus::config::detail
