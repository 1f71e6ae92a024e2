#pragma once
// Internal machinery shared by the message codecs (not part of the public API; only messages/*.cpp and the
// admin value code include it, so msgpack headers stay out of everybody else's compile).
//
// Decoding is hand-written: one pass over each map's entries, dispatching on the key, with a bit per known
// key to detect duplicates and missing required keys. Errors inside a decoder are raised as field_error and
// caught by guarded() at the codec boundary, where they become a decode_error carrying the topic. Field paths
// are a chain of stack frames rendered to text only when an error is actually raised, so the happy path
// builds no strings.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <msgpack.hpp>

#include "messages/envelope.hpp"
#include "messages/result.hpp"
#include "messages/utf8.hpp"

namespace rmbus::messages::detail {

// Raised by the readers below; never leaves a decode_* function.
struct field_error {
  std::string field;
  std::string what;
};

// A position in a body: `work[2].processes[0].state`. Each level lives on the caller's stack and points at
// its parent, so a path costs nothing until str() is called.
class path {
 public:
  path() = default;  // the body's root map
  path key(std::string_view k) const { return path{this, k, 0, false}; }
  path index(std::size_t i) const { return path{this, {}, i, true}; }
  std::string str() const;

 private:
  path(const path* parent, std::string_view k, std::size_t i, bool is_index)
      : parent_(parent), key_(k), index_(i), is_index_(is_index) {}
  const path* parent_ = nullptr;
  std::string_view key_;
  std::size_t index_ = 0;
  bool is_index_ = false;
};

[[noreturn]] void fail(const path& at, std::string what);

// "unsigned integer", "string", ... as used in "expected X, got Y".
std::string_view type_name(const msgpack::object& o);

// Checks max_body_bytes, unpacks under an unpack_limit derived from `limits`, rejects trailing bytes.
// Throws field_error (root path) on any failure, never a msgpack exception.
// The returned objects' strings point INTO `body`: use them only while `body` is alive.
msgpack::object_handle unpack_body(std::string_view body, const decode_limits& limits);

const msgpack::object_map& as_map(const msgpack::object& o, const path& at);
const msgpack::object_array& as_array(const msgpack::object& o, const path& at);
// The key of a map entry; keys must be strings.
std::string_view key_of(const msgpack::object_kv& kv, const path& map_at);
// The same, for keys that are kept (admin arguments, event details): they must also be valid UTF-8.
std::string_view stored_key_of(const msgpack::object_kv& kv, const path& map_at);

// Strict UTF-8 (messages/utf8.hpp): a string we accept and later republish must be valid.
using messages::valid_utf8;

// Bytes from the wire quoted inside an error text: printable ASCII kept, every other byte as \xNN, cut
// after `max` bytes with "...". Error texts are logged and republished in bad_message events, so they must
// themselves be valid, readable UTF-8 whatever the input was.
std::string printable(std::string_view s, std::size_t max = 64);

void read(const msgpack::object& o, const path& at, std::string& out);
void read(const msgpack::object& o, const path& at, std::uint64_t& out);
void read(const msgpack::object& o, const path& at, std::uint32_t& out);
void read(const msgpack::object& o, const path& at, bool& out);
template <class T>
void read(const msgpack::object& o, const path& at, std::optional<T>& out) {
  read(o, at, out.emplace());
}

// Wire names of an enum, indexed by the enum's underlying value (enums here are 0..N-1 in wire order).
template <class E, std::size_t N>
void read_enum(const msgpack::object& o, const path& at, const std::array<std::string_view, N>& names, E& out) {
  std::string s;
  read(o, at, s);
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == s) {
      out = static_cast<E>(i);
      return;
    }
  }
  std::string what = "unknown value '" + printable(s) + "' (expected ";
  for (std::size_t i = 0; i < N; ++i) {
    if (i != 0) what += '|';
    what += names[i];
  }
  fail(at, what + ")");
}

template <class E, std::size_t N>
std::optional<E> parse_enum(std::string_view s, const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<E>(i);
  return std::nullopt;
}

template <class E, std::size_t N>
std::string_view enum_name(E e, const std::array<std::string_view, N>& names) {
  auto i = static_cast<std::size_t>(e);
  return i < N ? names[i] : std::string_view{"?"};
}

// The known keys of one map, and which of them have been seen. Keys beyond `N` are unknown and ignored.
template <std::size_t N>
class key_set {
  static_assert(N <= 64);

 public:
  explicit constexpr key_set(const std::array<std::string_view, N>& names) : names_(names) {}

  // Index of `k` in the table, or -1 for an unknown key. A known key seen twice is an error: with two values
  // we could not tell which one the sender meant.
  int take(std::string_view k, const path& map_at) {
    for (std::size_t i = 0; i < N; ++i) {
      if (names_[i] == k) {
        const auto bit = std::uint64_t{1} << i;
        if (seen_ & bit) fail(map_at.key(names_[i]), "duplicate key");
        seen_ |= bit;
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  bool seen(std::size_t i) const { return (seen_ >> i) & 1u; }

  // Fails on the first key of `required` (a bit mask over the table) that was not seen.
  void require(std::uint64_t required, const path& map_at) const {
    const auto missing = required & ~seen_;
    if (missing == 0) return;
    for (std::size_t i = 0; i < N; ++i)
      if ((missing >> i) & 1u) fail(map_at.key(names_[i]), "missing required key");
  }

 private:
  const std::array<std::string_view, N>& names_;
  std::uint64_t seen_ = 0;
};

// One pass over the map at `o`: calls fn(index, value, path_of_value) for each known key (index into
// `names`), ignores unknown keys, then fails on the first missing key of the `required` bit mask.
template <std::size_t N, class Fn>
void read_fields(const msgpack::object& o, const path& at, const std::array<std::string_view, N>& names,
                 std::uint64_t required, Fn&& fn) {
  const auto& m = as_map(o, at);
  key_set<N> seen{names};
  for (std::uint32_t i = 0; i < m.size; ++i) {
    const auto& kv = m.ptr[i];
    const int k = seen.take(key_of(kv, at), at);
    if (k < 0) continue;
    const auto idx = static_cast<std::size_t>(k);
    fn(idx, kv.val, at.key(names[idx]));
  }
  seen.require(required, at);
}

// Reads an array, calling read_one(element, path_of_element, out_element) for each element.
template <class Sequence, class Fn>
void read_array(const msgpack::object& o, const path& at, Sequence& out, Fn&& read_one) {
  // Grow element by element rather than resizing to the announced length: a body of one-byte junk elements
  // must not make us build large empty structs before the first element is found wrong.
  const auto& a = as_array(o, at);
  out.clear();
  for (std::uint32_t i = 0; i < a.size; ++i) read_one(a.ptr[i], at.index(i), out.emplace_back());
}

void read(const msgpack::object& o, const path& at, std::vector<std::string>& out);

// The envelope's keys, in the order its readers number them (read_envelope, the visitor of decode_envelope,
// read_flat_envelope).
inline constexpr std::array<std::string_view, 5> envelope_keys{"v", "seq", "ts_ms", "src", "epoch"};

// Reads v/seq/ts_ms/src (and epoch) from a body's root map. When `keys_optional` (admin requests and
// replies), absent keys keep their defaults, present keys are still type-checked, and `epoch` is not an
// envelope key (it is left to the admin decoders as an argument or result; docs/protocol.md section 5).
envelope read_envelope(const msgpack::object_map& root, bool keys_optional);

// Runs `fn(root_object)` on the unpacked body and turns every failure into a decode_error for `topic`.
// `fn` returns the decoded T. On success the envelope is stored in *env_out when given.
template <class T, class Fn>
result<T> guarded(std::string_view topic, std::string_view body, const decode_limits& limits, envelope* env_out,
                  bool envelope_optional, Fn&& fn);

std::string what_of_exception(const std::exception& e);

template <class T, class Fn>
result<T> guarded(std::string_view topic, std::string_view body, const decode_limits& limits, envelope* env_out,
                  bool envelope_optional, Fn&& fn) {
  try {
    auto handle = unpack_body(body, limits);
    const auto& root = as_map(handle.get(), path{});
    auto env = read_envelope(root, envelope_optional);
    T value = fn(handle.get());
    if (env_out) *env_out = std::move(env);
    return value;
  } catch (field_error& e) {
    return decode_error{std::string{topic}, std::move(e.field), std::move(e.what)};
  } catch (const std::exception& e) {
    // Only a bug or an allocation failure gets here; still data, never a crash.
    return decode_error{std::string{topic}, {}, what_of_exception(e)};
  }
}

// Encoding.
using packer = msgpack::packer<msgpack::sbuffer>;

// Writes the map header for `fields + 4` entries and the four envelope entries.
void pack_envelope_head(packer& pk, const envelope& env, std::uint32_t fields);

inline void pack_str(packer& pk, std::string_view s) {
  pk.pack_str(static_cast<std::uint32_t>(s.size()));
  pk.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
}
inline void pack_key(packer& pk, std::string_view k) { pack_str(pk, k); }
// Distinct names, not overloads: a string literal would otherwise pick the bool overload.
inline void pack_kv_str(packer& pk, std::string_view k, std::string_view v) {
  pack_key(pk, k);
  pack_str(pk, v);
}
inline void pack_kv_uint(packer& pk, std::string_view k, std::uint64_t v) {
  pack_key(pk, k);
  pk.pack_uint64(v);
}
inline void pack_kv_bool(packer& pk, std::string_view k, bool v) {
  pack_key(pk, k);
  if (v)
    pk.pack_true();
  else
    pk.pack_false();
}

inline std::string to_string(const msgpack::sbuffer& buf) { return std::string{buf.data(), buf.size()}; }
// `head` followed by entries packed earlier and kept by the sender (rm_state::encoded_jobs,
// rm_nodes::encoded_nodes), copied into a string sized once (22 MB for rm.state at 50,000 nodes).
inline std::string to_string(const msgpack::sbuffer& head, const std::vector<std::string>& entries) {
  std::size_t bytes = head.size();
  for (const auto& e : entries) bytes += e.size();
  std::string out;
  out.reserve(bytes);
  out.append(head.data(), head.size());
  for (const auto& e : entries) out.append(e);
  return out;
}

}  // namespace rmbus::messages::detail
