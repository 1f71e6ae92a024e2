#pragma once
// A small, bounded tree of MessagePack values (nil, bool, int, uint, double, string, array, map with string
// keys) for messages whose shape varies: the admin requests and replies, whose arguments and results depend
// on the command. Decoding into it obeys the same decode_limits as every other body (it is built from an
// object unpacked under those limits, so its size and depth are bounded by them).
//
// map_view reads typed arguments out of a decoded map; each accessor returns a decode_error naming the topic
// and the key when the key is missing or has the wrong type, so a command handler can reply with it as is.
//
// Thread-safety: plain values.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

class value {
 public:
  using array = std::vector<value>;
  using map = std::map<std::string, value, std::less<>>;  // ordered: deterministic encoding

  // `integer` holds negative numbers only: a non-negative integer is always `unsigned_integer`, as it is on
  // the wire, so that decoding what we encoded gives an equal value.
  enum class kind { nil, boolean, integer, unsigned_integer, floating, string, array, map };

  value() = default;
  value(bool b) : data_(b) {}
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  value(I i) {
    if constexpr (std::is_signed_v<I>) {
      if (i < 0) {
        data_ = static_cast<std::int64_t>(i);
        return;
      }
    }
    data_ = static_cast<std::uint64_t>(i);
  }
  value(double d) : data_(d) {}
  value(std::string s) : data_(std::move(s)) {}
  value(std::string_view s) : data_(std::string{s}) {}
  value(const char* s) : data_(std::string{s}) {}
  value(array a) : data_(std::move(a)) {}
  value(map m) : data_(std::move(m)) {}

  kind type() const { return static_cast<kind>(data_.index()); }
  bool is_nil() const { return type() == kind::nil; }

  // Typed access; nullptr when the value holds another kind.
  const bool* as_bool() const { return std::get_if<bool>(&data_); }
  const std::int64_t* as_int() const { return std::get_if<std::int64_t>(&data_); }
  const std::uint64_t* as_uint() const { return std::get_if<std::uint64_t>(&data_); }
  const double* as_double() const { return std::get_if<double>(&data_); }
  const std::string* as_string() const { return std::get_if<std::string>(&data_); }
  const array* as_array() const { return std::get_if<array>(&data_); }
  const map* as_map() const { return std::get_if<map>(&data_); }

  // Mutable access, for building replies and for tools that edit a decoded tree.
  array* as_array() { return std::get_if<array>(&data_); }
  map* as_map() { return std::get_if<map>(&data_); }

  friend bool operator==(const value& a, const value& b) { return a.data_ == b.data_; }

 private:
  std::variant<std::monostate, bool, std::int64_t, std::uint64_t, double, std::string, array, map> data_;
};

// "nil", "boolean", "negative integer", "unsigned integer", "float", "string", "array", "map".
std::string_view type_name(value::kind k);

// A compact JSON-like rendering for people (rmbus-admin output, logs); not a wire format.
std::string to_text(const value& v);

// A standalone MessagePack encoding of a value (no envelope), and its bounded decoding. Binary and extension
// values and non-string map keys are refused: nothing in the contract uses them.
std::string encode_value(const value& v);
result<value> decode_value(std::string_view topic, std::string_view body, const decode_limits& limits = {});

// Typed, error-naming reads of one map's entries. `prefix` is prepended to keys in error paths (e.g.
// "results." ); the view does not own the map.
class map_view {
 public:
  map_view(std::string_view topic, const value::map& m, std::string prefix = {})
      : topic_(topic), map_(&m), prefix_(std::move(prefix)) {}

  bool has(std::string_view key) const { return map_->find(key) != map_->end(); }
  // The raw value, or a "missing required key" error.
  result<value> get(std::string_view key) const;
  result<std::string> get_string(std::string_view key) const;
  result<std::uint64_t> get_uint(std::string_view key) const;
  result<std::int64_t> get_int(std::string_view key) const;  // any integer that fits int64
  result<double> get_double(std::string_view key) const;     // floats and integers
  result<bool> get_bool(std::string_view key) const;
  result<std::vector<std::string>> get_string_list(std::string_view key) const;
  result<value::map> get_map(std::string_view key) const;

  decode_error error(std::string_view key, std::string what) const;

 private:
  template <class T, class Fn>
  result<T> typed(std::string_view key, std::string_view expected, Fn&& fn) const;

  std::string topic_;
  const value::map* map_;
  std::string prefix_;
};

}  // namespace rmbus::messages
