#include "tools/web/json_writer.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "messages/utf8.hpp"

namespace rmbus::web {

namespace {

void append_escaped(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out += '"';
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const auto n = messages::utf8_sequence_length(s, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD: the JSON must stay valid UTF-8 whatever arrived
        ++i;
      } else {
        out.append(s.data() + i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '/':
        // "</script>" inside a page would end the script; a JSON reader reads "\/" as "/".
        if (i > 0 && s[i - 1] == '<')
          out += "\\/";
        else
          out += '/';
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 0xf];
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
}

}  // namespace

void json_writer::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_.empty()) return;
  if (!first_.back()) out_ += ',';
  first_.back() = false;
}

json_writer& json_writer::begin_object() {
  before_value();
  out_ += '{';
  first_.push_back(true);
  return *this;
}

json_writer& json_writer::end_object() {
  out_ += '}';
  first_.pop_back();
  return *this;
}

json_writer& json_writer::begin_array() {
  before_value();
  out_ += '[';
  first_.push_back(true);
  return *this;
}

json_writer& json_writer::end_array() {
  out_ += ']';
  first_.pop_back();
  return *this;
}

json_writer& json_writer::key(std::string_view k) {
  before_value();
  append_escaped(out_, k);
  out_ += ':';
  after_key_ = true;
  return *this;
}

json_writer& json_writer::value(std::string_view s) {
  before_value();
  append_escaped(out_, s);
  return *this;
}

json_writer& json_writer::value(std::uint64_t n) {
  before_value();
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, n);
  out_.append(buf, r.ptr);
  return *this;
}

json_writer& json_writer::value(std::int64_t n) {
  before_value();
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, n);
  out_.append(buf, r.ptr);
  return *this;
}

json_writer& json_writer::value(double d) {
  if (!std::isfinite(d)) return null();
  before_value();
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "%.6g", d);
  out_.append(buf, static_cast<std::size_t>(n));
  return *this;
}

json_writer& json_writer::value(bool b) {
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

json_writer& json_writer::null() {
  before_value();
  out_ += "null";
  return *this;
}

json_writer& json_writer::raw(std::string_view json) {
  before_value();
  out_ += json;
  return *this;
}

std::string json_string(std::string_view s) {
  std::string out;
  append_escaped(out, s);
  return out;
}

}  // namespace rmbus::web
