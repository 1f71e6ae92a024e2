#include "messages/detail/peek.hpp"

#include <cstddef>
#include <cstdint>

namespace rmbus::messages::detail {

namespace {

// A reader over the body's bytes; every read checks what is left.
struct cursor {
  std::string_view b;
  std::size_t at = 0;

  std::size_t left() const { return b.size() - at; }
  bool take(std::size_t n) {
    if (n > left()) return false;
    at += n;
    return true;
  }
  bool big_endian(std::size_t n, std::uint64_t& out) {
    if (n > left()) return false;
    out = 0;
    for (std::size_t i = 0; i < n; ++i) out = (out << 8) | static_cast<unsigned char>(b[at + i]);
    at += n;
    return true;
  }
};

// A string header at the cursor: its length, cursor left on its first byte. false when not a string.
bool str_header(cursor& c, std::uint64_t& len) {
  if (c.left() == 0) return false;
  const auto tag = static_cast<unsigned char>(c.b[c.at]);
  if (tag >= 0xa0 && tag <= 0xbf) {
    len = tag & 0x1fu;
    return c.take(1);
  }
  const std::size_t width = tag == 0xd9 ? 1 : tag == 0xda ? 2 : tag == 0xdb ? 4 : 0;
  if (width == 0) return false;
  c.take(1);
  return c.big_endian(width, len);
}

// Skips one value; `pending` gains the elements of a container so the caller skips them too.
bool skip_head(cursor& c, std::uint64_t& pending) {
  if (c.left() == 0) return false;
  const auto tag = static_cast<unsigned char>(c.b[c.at]);
  c.take(1);
  std::uint64_t n = 0;
  if (tag <= 0x7f || tag >= 0xe0 || tag == 0xc0 || tag == 0xc2 || tag == 0xc3) return true;  // fixint, nil, bool
  if (tag >= 0x80 && tag <= 0x8f) {
    pending += 2u * (tag & 0x0fu);
    return true;
  }
  if (tag >= 0x90 && tag <= 0x9f) {
    pending += tag & 0x0fu;
    return true;
  }
  if (tag >= 0xa0 && tag <= 0xbf) return c.take(tag & 0x1fu);
  switch (tag) {
    case 0xc4: return c.big_endian(1, n) && c.take(n);      // bin 8
    case 0xc5: return c.big_endian(2, n) && c.take(n);      // bin 16
    case 0xc6: return c.big_endian(4, n) && c.take(n);      // bin 32
    case 0xc7: return c.big_endian(1, n) && c.take(n + 1);  // ext 8 (+ type)
    case 0xc8: return c.big_endian(2, n) && c.take(n + 1);
    case 0xc9: return c.big_endian(4, n) && c.take(n + 1);
    case 0xca: return c.take(4);   // float 32
    case 0xcb: return c.take(8);   // float 64
    case 0xcc: return c.take(1);   // uint 8
    case 0xcd: return c.take(2);
    case 0xce: return c.take(4);
    case 0xcf: return c.take(8);
    case 0xd0: return c.take(1);   // int 8
    case 0xd1: return c.take(2);
    case 0xd2: return c.take(4);
    case 0xd3: return c.take(8);
    case 0xd4: return c.take(2);   // fixext 1 (+ type)
    case 0xd5: return c.take(3);
    case 0xd6: return c.take(5);
    case 0xd7: return c.take(9);
    case 0xd8: return c.take(17);
    case 0xd9: return c.big_endian(1, n) && c.take(n);  // str 8
    case 0xda: return c.big_endian(2, n) && c.take(n);
    case 0xdb: return c.big_endian(4, n) && c.take(n);
    case 0xdc: return c.big_endian(2, n) && ((pending += n), true);       // array 16
    case 0xdd: return c.big_endian(4, n) && ((pending += n), true);
    case 0xde: return c.big_endian(2, n) && ((pending += 2 * n), true);   // map 16
    case 0xdf: return c.big_endian(4, n) && ((pending += 2 * n), true);
    default: return false;  // 0xc1: never used
  }
}

// Skips one value with everything nested in it. Each step eats at least one byte, and more elements pending
// than bytes left cannot be well-formed, so the loop is bounded by the body's size.
bool skip_value(cursor& c) {
  std::uint64_t pending = 1;
  while (pending > 0) {
    if (pending > c.left()) return false;
    --pending;
    if (!skip_head(c, pending)) return false;
  }
  return true;
}

// A container header at the cursor, of the kind whose fix tags start at `fix` (16 of them) and whose 16-
// and 32-bit tags are `wide` and `wide + 1`: its count, cursor left on its first element. false otherwise.
bool container_header(cursor& c, unsigned fix, unsigned wide, std::uint64_t& count) {
  if (c.left() == 0) return false;
  const auto tag = static_cast<unsigned char>(c.b[c.at]);
  if (tag >= fix && tag <= fix + 0x0fu) {
    count = tag & 0x0fu;
    return c.take(1);
  }
  if (tag == wide || tag == wide + 1) return c.take(1) && c.big_endian(tag == wide ? 2 : 4, count);
  return false;
}

// A map header at the cursor: its entry count, cursor left on its first key. false when not a map.
bool map_header(cursor& c, std::uint64_t& entries) { return container_header(c, 0x80, 0xde, entries); }

// An array header at the cursor: its element count, cursor left on its first element. false when not an array.
bool array_header(cursor& c, std::uint64_t& elements) { return container_header(c, 0x90, 0xdc, elements); }

// Moves the cursor onto the value of `key` in the top-level map of its body; false when there is none.
bool seek_top_level_key(cursor& c, std::string_view key) {
  const auto body = c.b;
  std::uint64_t entries = 0;
  if (!map_header(c, entries)) return false;
  for (std::uint64_t i = 0; i < entries; ++i) {
    std::uint64_t len = 0;
    const auto key_at = c.at;
    if (str_header(c, len)) {
      if (len > c.left()) return false;
      const bool match = body.substr(c.at, len) == key;
      c.take(len);
      if (match) return true;
    } else {
      c.at = key_at;
      if (!skip_value(c)) return false;  // a key that is not a string: skipped like any value
    }
    if (!skip_value(c)) return false;
  }
  return false;
}

}  // namespace

std::optional<std::string_view> peek_top_level_str(std::string_view body, std::string_view key) {
  cursor c{body};
  if (!seek_top_level_key(c, key)) return std::nullopt;
  std::uint64_t len = 0;
  if (!str_header(c, len) || len > c.left()) return std::nullopt;
  return body.substr(c.at, len);
}

std::optional<std::uint64_t> peek_top_level_uint(std::string_view body, std::string_view key) {
  cursor c{body};
  if (!seek_top_level_key(c, key) || c.left() == 0) return std::nullopt;
  const auto tag = static_cast<unsigned char>(c.b[c.at]);
  if (tag <= 0x7f) return tag;  // positive fixint
  const std::size_t width = tag == 0xcc ? 1 : tag == 0xcd ? 2 : tag == 0xce ? 4 : tag == 0xcf ? 8 : 0;
  std::uint64_t v = 0;
  if (width == 0 || !c.take(1) || !c.big_endian(width, v)) return std::nullopt;
  return v;
}

int peek_first_top_level_key(std::string_view body, std::string_view a, std::string_view b) {
  cursor c{body};
  std::uint64_t entries = 0;
  if (!map_header(c, entries)) return 0;
  for (std::uint64_t i = 0; i < entries; ++i) {
    std::uint64_t len = 0;
    const auto key_at = c.at;
    if (str_header(c, len)) {
      if (len > c.left()) return 0;
      const auto k = body.substr(c.at, len);
      if (k == a) return 1;
      if (k == b) return 2;
      c.take(len);
    } else {
      c.at = key_at;
      if (!skip_value(c)) return 0;
    }
    if (!skip_value(c)) return 0;
  }
  return 0;
}

std::optional<std::string_view> peek_last_top_level_value(std::string_view body, std::string_view key) {
  cursor c{body};
  std::uint64_t entries = 0;
  if (!map_header(c, entries) || entries == 0) return std::nullopt;
  for (std::uint64_t i = 0; i < entries; ++i) {
    std::uint64_t len = 0;
    if (!str_header(c, len) || len > c.left()) return std::nullopt;  // keys must be strings, as decoders require
    const bool match = body.substr(c.at, len) == key;
    c.take(len);
    if (match) return i + 1 == entries ? std::optional{body.substr(c.at)} : std::nullopt;
    if (!skip_value(c)) return std::nullopt;
  }
  return std::nullopt;
}

std::optional<array_head> peek_array_head(std::string_view bytes) {
  cursor c{bytes};
  std::uint64_t elements = 0;
  if (!array_header(c, elements) || elements > c.left()) return std::nullopt;
  return array_head{elements, bytes.substr(c.at)};
}

std::optional<keyed_map> peek_keyed_map(std::string_view bytes, std::string_view key) {
  cursor c{bytes};
  std::uint64_t entries = 0;
  if (!map_header(c, entries)) return std::nullopt;
  std::optional<std::string_view> found;
  for (std::uint64_t i = 0; i < entries; ++i) {
    std::uint64_t len = 0;
    if (!str_header(c, len) || len > c.left()) return std::nullopt;
    const bool match = !found && bytes.substr(c.at, len) == key;
    c.take(len);
    if (match) {
      if (!str_header(c, len) || len > c.left()) return std::nullopt;
      found = bytes.substr(c.at, len);
      c.take(len);
    } else if (!skip_value(c)) {
      return std::nullopt;
    }
  }
  if (!found) return std::nullopt;
  return keyed_map{*found, bytes.substr(0, c.at)};
}

std::optional<std::size_t> read_flat_map(std::string_view body, std::span<flat_entry> out,
                                         std::size_t max_string_bytes) {
  cursor c{body};
  std::uint64_t entries = 0;
  if (!map_header(c, entries) || entries > out.size()) return std::nullopt;
  const auto string_at = [&](std::string_view& s) {
    std::uint64_t len = 0;
    if (!str_header(c, len) || len > max_string_bytes || len > c.left()) return false;
    s = body.substr(c.at, len);
    return c.take(len);
  };
  for (std::uint64_t i = 0; i < entries; ++i) {
    auto& e = out[i];
    if (!string_at(e.key) || c.left() == 0) return std::nullopt;
    const auto tag = static_cast<unsigned char>(c.b[c.at]);
    if (tag <= 0x7f) {
      e.type = flat_entry::kind::uint;
      e.uint = tag;
      c.take(1);
    } else if (tag >= 0xcc && tag <= 0xcf) {
      e.type = flat_entry::kind::uint;
      c.take(1);
      if (!c.big_endian(std::size_t{1} << (tag - 0xcc), e.uint)) return std::nullopt;
    } else if (tag == 0xc2 || tag == 0xc3) {
      e.type = flat_entry::kind::boolean;
      e.uint = tag == 0xc3 ? 1 : 0;
      c.take(1);
    } else {
      e.type = flat_entry::kind::str;
      if (!string_at(e.str)) return std::nullopt;
    }
  }
  if (c.left() != 0) return std::nullopt;
  return static_cast<std::size_t>(entries);
}

}  // namespace rmbus::messages::detail
