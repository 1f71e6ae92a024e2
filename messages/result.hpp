#pragma once
// What a decoder hands back: either the decoded value or a decode_error that names the topic, the field path
// and what was wrong. Bus bytes are untrusted, so a bad body is ordinary data here, never an exception or an
// abort: every decode_* function catches everything at its boundary and returns one of these.
//
// Thread-safety: plain values; no shared state.

#include <string>
#include <utility>
#include <variant>

namespace rmbus::messages {

// Why a body was rejected. `field` is a path into the body (`work[2].processes[0].state`), empty when the
// whole body is at fault (not MessagePack, too big, trailing bytes).
struct decode_error {
  std::string topic;
  std::string field;
  std::string what;

  // "orchestrator.workmap: work[3].memory_mb: expected unsigned integer, got string"
  std::string message() const {
    std::string out = topic.empty() ? std::string{"(no topic)"} : topic;
    out += ": ";
    if (!field.empty()) {
      out += field;
      out += ": ";
    }
    out += what;
    return out;
  }

  friend bool operator==(const decode_error&, const decode_error&) = default;
};

// A value of T or the decode_error explaining why there is none. Small on purpose: ok(), value(), error()
// and an explicit bool conversion. value() on an error (or error() on a value) is a programming bug and
// throws std::bad_variant_access rather than reading garbage.
template <class T>
class result {
 public:
  result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  result(decode_error error) : state_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }

  const decode_error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, decode_error> state_;
};

}  // namespace rmbus::messages
