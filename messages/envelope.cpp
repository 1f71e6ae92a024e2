#include "messages/envelope.hpp"

#include <algorithm>
#include <array>

#include "messages/detail/codec.hpp"
#include "messages/detail/flat_body.hpp"
#include "messages/detail/peek.hpp"

namespace rmbus::messages {

namespace {

// Reads the envelope in one pass over the bytes, building nothing: every message on the bus goes through
// here first (the subscriber accounts sequence numbers), and unpacking a work map of megabytes into an object
// tree only to read four keys cost as much as decoding it. It enforces the same bounds as a full unpack
// (sizes, depth) and the same envelope rules, and is stricter where that is simpler (depth); whatever it does
// not accept is decoded again the full way, which gives the exact error (or accepts a borderline body).
class envelope_visitor : public msgpack::null_visitor {
 public:
  envelope_visitor(const decode_limits& limits, std::size_t body_size)
      : max_array_(std::min(limits.max_array_len, body_size)),
        max_map_(std::min(limits.max_map_len, body_size / 2)),
        max_str_(std::min(limits.max_string_bytes, body_size)),
        max_depth_(limits.max_depth) {}

  bool visit_positive_integer(std::uint64_t v) {
    if (in_root_value()) {
      switch (key_) {
        case 0:
          env.v = static_cast<std::uint32_t>(v);
          version_fits_ = v <= 0xffffffffu;
          break;
        case 1: env.seq = v; break;
        case 2: env.ts_ms = v; break;
        case 3: return false;  // src must be a string
        case 4: env.epoch = v; break;
        default: break;
      }
    }
    return scalar(false);
  }
  bool visit_nil() { return scalar(true); }
  bool visit_boolean(bool) { return scalar(true); }
  bool visit_negative_integer(std::int64_t) { return scalar(true); }
  bool visit_float32(float) { return scalar(true); }
  bool visit_float64(double) { return scalar(true); }
  bool visit_str(const char* p, std::uint32_t n) {
    if (n > max_str_) return false;
    const std::string_view s{p, n};
    if (depth_ == 1 && in_key_) {
      key_ = -1;
      for (std::size_t i = 0; i < detail::envelope_keys.size(); ++i)
        if (s == detail::envelope_keys[i]) key_ = static_cast<int>(i);
      if (key_ >= 0) {
        if (seen_ & (1u << key_)) return false;  // duplicate
        seen_ |= 1u << key_;
      }
      return true;
    }
    if (in_root_value() && key_ == 3) {
      if (!detail::valid_utf8(s)) return false;
      env.src.assign(s);
      return true;
    }
    return scalar(true);  // a string is the wrong type for v, seq and ts_ms
  }
  bool visit_bin(const char*, std::uint32_t n) { return n <= max_str_ && scalar(true); }
  bool visit_ext(const char*, std::uint32_t n) { return n <= max_str_ && scalar(true); }
  bool start_array(std::uint32_t n) { return n <= max_array_ && open(true); }
  bool end_array() { return close(); }
  bool start_map(std::uint32_t n) { return n <= max_map_ && open(false); }
  bool end_map() { return close(); }
  bool start_map_key() {
    if (depth_ == 1) in_key_ = true;
    return true;
  }
  bool end_map_key() {
    if (depth_ == 1) in_key_ = false;
    return true;
  }
  bool end_map_value() {
    if (depth_ == 1) key_ = -1;
    return true;
  }

  // The whole body was one map with the four required keys, each of the right type.
  bool complete() const { return root_was_map_ && (seen_ & 0b1111) == 0b1111 && version_fits_ && !env.src.empty(); }

  envelope env;

 private:
  bool in_root_value() const { return depth_ == 1 && !in_key_; }
  // A value that is not a container. A root key must be a string; an envelope key's value must have its type.
  bool scalar(bool wrong_for_envelope) {
    if (depth_ == 0) return false;  // the body is not a map
    if (depth_ == 1 && in_key_) return false;
    if (in_root_value() && key_ >= 0 && wrong_for_envelope) return false;
    return true;
  }
  bool open(bool array) {
    if (depth_ == 0) {
      if (array) return false;
      root_was_map_ = true;
    } else if (depth_ == 1 && (in_key_ || key_ >= 0)) {
      return false;  // a container as a root key or as an envelope value
    }
    return ++depth_ < max_depth_;  // stricter by one than the unpacker: the full decode settles the edge
  }
  bool close() {
    --depth_;
    return true;
  }

  std::size_t max_array_, max_map_, max_str_, max_depth_;
  std::size_t depth_ = 0;
  bool in_key_ = false;
  bool root_was_map_ = false;
  bool version_fits_ = true;
  int key_ = -1;
  unsigned seen_ = 0;
};

}  // namespace

result<envelope> decode_envelope(std::string_view topic, std::string_view body, const decode_limits& limits) {
  // A flat body (a heartbeat, 5,000 a second and more) straight off its bytes; any other shape by the visitor.
  std::array<detail::flat_entry, detail::max_flat_entries> entries;
  if (const auto n = detail::read_flat_body(body, limits, entries)) {
    envelope env;
    if (detail::read_flat_envelope({entries.data(), *n}, &env)) return env;
  }
  if (!body.empty() && body.size() <= limits.max_body_bytes) {
    envelope_visitor v{limits, body.size()};
    std::size_t off = 0;
    bool parsed = false;
    try {
      parsed = msgpack::v2::parse(body.data(), body.size(), off, v) && off == body.size();
    } catch (const std::exception&) {
      parsed = false;  // the full decode below names the problem
    }
    if (parsed && v.complete() && v.env.v == schema_version) return std::move(v.env);
  }
  envelope env;
  auto r = detail::guarded<bool>(topic, body, limits, &env, false, [](const msgpack::object&) { return true; });
  if (!r) return r.error();
  return env;
}

result<envelope> decode_envelope_before(std::string_view topic, std::string_view body, std::string_view tail_key,
                                        const decode_limits& limits) {
  const auto tail = detail::peek_last_top_level_value(body, tail_key);
  if (!tail || body.size() > limits.max_body_bytes) return decode_envelope(topic, body, limits);
  std::string head{body.substr(0, body.size() - tail->size())};
  head.push_back('\xc0');  // nil in the value's place
  return decode_envelope(topic, head, limits);
}

std::string encode(const envelope& env) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 0);
  return detail::to_string(buf);
}

}  // namespace rmbus::messages
