#pragma once
// A small, fast JSON writer for the web monitor's snapshots. A snapshot of 20,000 jobs and 10,000 nodes is a
// few MB written several times a minute; appending to one string is several times faster than building a
// JSON tree first, and the monitor never needs to read JSON back (tests do, with nlohmann-json).
//
// The writer appends to a string and inserts commas itself: begin_object/begin_array open a container,
// key() names the next member of an object, the value functions write one value. Strings are escaped for
// JSON (quotes, backslash, control bytes as \uXXXX; "</" as "<\/" so a snapshot is safe inside HTML), and any
// byte sequence that is not valid UTF-8 is replaced by U+FFFD so the output is always valid JSON. No newline
// is ever written: a snapshot is one line of a server-sent event.
//
// Thread-safety: one owner.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rmbus::web {

class json_writer {
 public:
  explicit json_writer(std::size_t reserve = 0) { out_.reserve(reserve); }

  json_writer& begin_object();
  json_writer& end_object();
  json_writer& begin_array();
  json_writer& end_array();
  json_writer& key(std::string_view k);

  json_writer& value(std::string_view s);
  json_writer& value(const char* s) { return value(std::string_view{s}); }
  json_writer& value(const std::string& s) { return value(std::string_view{s}); }
  json_writer& value(std::uint64_t n);
  json_writer& value(std::int64_t n);
  json_writer& value(int n) { return value(static_cast<std::int64_t>(n)); }
  json_writer& value(double d);  // non-finite values are written as null
  json_writer& value(bool b);
  json_writer& null();
  // Already-serialised JSON (e.g. a cached part), inserted as one value. REQUIRES: valid JSON, one line.
  json_writer& raw(std::string_view json);

  // Shorthand for key(k).value(v).
  template <class T>
  json_writer& member(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  const std::string& str() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void before_value();

  std::string out_;
  // One entry per open container: true while it has no member yet (no comma needed).
  std::vector<bool> first_;
  bool after_key_ = false;
};

// The escaped JSON string literal of `s` (with its quotes).
std::string json_string(std::string_view s);

}  // namespace rmbus::web
