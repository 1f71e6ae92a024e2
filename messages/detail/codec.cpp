#include "messages/detail/codec.hpp"

#include <algorithm>
#include <memory>
#include <vector>

namespace rmbus::messages::detail {

std::string path::str() const {
  // Collect the chain root-first; depth is bounded by decode_limits::max_depth.
  std::vector<const path*> chain;
  for (const path* p = this; p != nullptr && (p->parent_ != nullptr); p = p->parent_) chain.push_back(p);
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const path* p = *it;
    if (p->is_index_) {
      out += '[';
      out += std::to_string(p->index_);
      out += ']';
    } else {
      if (!out.empty()) out += '.';
      out += printable(p->key_);
    }
  }
  return out;
}

void fail(const path& at, std::string what) { throw field_error{at.str(), std::move(what)}; }

std::string_view type_name(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::NIL: return "nil";
    case msgpack::type::BOOLEAN: return "boolean";
    case msgpack::type::POSITIVE_INTEGER: return "unsigned integer";
    case msgpack::type::NEGATIVE_INTEGER: return "negative integer";
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: return "float";
    case msgpack::type::STR: return "string";
    case msgpack::type::BIN: return "binary";
    case msgpack::type::ARRAY: return "array";
    case msgpack::type::MAP: return "map";
    case msgpack::type::EXT: return "extension";
  }
  return "unknown type";
}

namespace {

[[noreturn]] void wrong_type(const msgpack::object& o, const path& at, std::string_view expected) {
  std::string what = "expected ";
  what += expected;
  what += ", got ";
  what += type_name(o);
  fail(at, std::move(what));
}

// The first chunk of a body's zone: a body of n bytes holds at most n objects, and most hold far fewer; the
// zone adds chunks when a tree needs more. Never above msgpack's default.
std::size_t zone_chunk_bytes(std::size_t body_bytes) {
  return std::clamp<std::size_t>(8 * body_bytes, 512, MSGPACK_ZONE_CHUNK_SIZE);
}

std::string limit_text(std::string_view what, std::size_t limit) {
  return std::string{what} + " (limit " + std::to_string(limit) + ")";
}

}  // namespace

msgpack::object_handle unpack_body(std::string_view body, const decode_limits& limits) {
  const path root;
  if (body.size() > limits.max_body_bytes)
    fail(root, "body of " + std::to_string(body.size()) + " bytes exceeds max_body_bytes (" +
                   std::to_string(limits.max_body_bytes) + ")");
  if (body.empty()) fail(root, "empty body (expected a MessagePack map)");
  // Every array element takes at least one byte and every map entry two, so no honest length can exceed what
  // the body still holds; capping by the body size keeps a lying header from reserving more than the body
  // could ever fill, even when the configured limits are generous.
  const std::size_t n = body.size();
  const msgpack::unpack_limit limit{std::min(limits.max_array_len, n),       std::min(limits.max_map_len, n / 2),
                                    std::min(limits.max_string_bytes, n),    std::min(limits.max_string_bytes, n),
                                    std::min(limits.max_string_bytes, n),    limits.max_depth};
  // Strings and binaries point into `body` instead of being copied into the zone: every caller converts the
  // object tree into owned values before `body` goes away, and copying them was a fifth of the decode time.
  const auto reference_body = [](msgpack::type::object_type, std::size_t, void*) { return true; };
  std::size_t offset = 0;
  msgpack::object_handle handle;
  try {
    // The object tree of a small body (a heartbeat: about 100 bytes, a dozen objects) fits in a small first
    // chunk; msgpack's default of 8 KB is a large allocation for every message of the heartbeat stream.
    auto zone = std::make_unique<msgpack::zone>(zone_chunk_bytes(n));
    bool referenced = false;
    const auto root_object =
        msgpack::unpack(*zone, body.data(), body.size(), offset, referenced, reference_body, nullptr, limit);
    handle = msgpack::object_handle(root_object, std::move(zone));
  } catch (const msgpack::insufficient_bytes&) {
    fail(root, "truncated body (MessagePack value ends past the last byte)");
  } catch (const msgpack::parse_error&) {
    fail(root, "not MessagePack (parse error)");
  } catch (const msgpack::array_size_overflow&) {
    fail(root, limit_text("an array declares more elements than max_array_len or the body can hold", limit.array()));
  } catch (const msgpack::map_size_overflow&) {
    fail(root, limit_text("a map declares more entries than max_map_len or the body can hold", limit.map()));
  } catch (const msgpack::str_size_overflow&) {
    fail(root, limit_text("a string declares more bytes than max_string_bytes or the body can hold", limit.str()));
  } catch (const msgpack::bin_size_overflow&) {
    fail(root, limit_text("a binary value declares more bytes than max_string_bytes or the body can hold", limit.bin()));
  } catch (const msgpack::ext_size_overflow&) {
    fail(root, limit_text("an extension value declares more bytes than max_string_bytes or the body can hold", limit.ext()));
  } catch (const msgpack::depth_size_overflow&) {
    fail(root, limit_text("nesting deeper than max_depth", limit.depth()));
  } catch (const msgpack::unpack_error& e) {
    fail(root, std::string{"not MessagePack: "} + e.what());
  }
  if (offset != body.size())
    fail(root, std::to_string(body.size() - offset) + " trailing bytes after the first MessagePack value");
  return handle;
}

const msgpack::object_map& as_map(const msgpack::object& o, const path& at) {
  if (o.type != msgpack::type::MAP) wrong_type(o, at, "map");
  return o.via.map;
}

const msgpack::object_array& as_array(const msgpack::object& o, const path& at) {
  if (o.type != msgpack::type::ARRAY) wrong_type(o, at, "array");
  return o.via.array;
}

std::string_view key_of(const msgpack::object_kv& kv, const path& map_at) {
  if (kv.key.type != msgpack::type::STR) {
    std::string what = "map key is not a string (got ";
    what += type_name(kv.key);
    what += ")";
    fail(map_at, std::move(what));
  }
  return {kv.key.via.str.ptr, kv.key.via.str.size};
}

std::string_view stored_key_of(const msgpack::object_kv& kv, const path& map_at) {
  const auto k = key_of(kv, map_at);
  if (!valid_utf8(k)) fail(map_at, "map key '" + printable(k) + "' is not valid UTF-8");
  return k;
}

std::string printable(std::string_view s, std::size_t max) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  const auto n = std::min(s.size(), max);
  out.reserve(n + 8);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

void read(const msgpack::object& o, const path& at, std::string& out) {
  if (o.type != msgpack::type::STR) wrong_type(o, at, "string");
  const std::string_view s{o.via.str.ptr, o.via.str.size};
  if (!valid_utf8(s)) fail(at, "string '" + printable(s) + "' is not valid UTF-8");
  out.assign(s);
}

void read(const msgpack::object& o, const path& at, std::uint64_t& out) {
  if (o.type != msgpack::type::POSITIVE_INTEGER) wrong_type(o, at, "unsigned integer");
  out = o.via.u64;
}

void read(const msgpack::object& o, const path& at, std::uint32_t& out) {
  std::uint64_t wide = 0;
  read(o, at, wide);
  if (wide > 0xffffffffu) fail(at, "value " + std::to_string(wide) + " does not fit 32 bits");
  out = static_cast<std::uint32_t>(wide);
}

void read(const msgpack::object& o, const path& at, bool& out) {
  if (o.type != msgpack::type::BOOLEAN) wrong_type(o, at, "boolean");
  out = o.via.boolean;
}

void read(const msgpack::object& o, const path& at, std::vector<std::string>& out) {
  read_array(o, at, out, [](const msgpack::object& e, const path& p, std::string& s) { read(e, p, s); });
}

envelope read_envelope(const msgpack::object_map& root, bool keys_optional) {
  const path at;
  key_set<envelope_keys.size()> keys{envelope_keys};
  envelope env;
  for (std::uint32_t i = 0; i < root.size; ++i) {
    const auto& kv = root.ptr[i];
    const auto key = key_of(kv, at);
    // The admin channel's envelope has no epoch: there `epoch` is an argument or a result (status's), which
    // the admin decoders keep. Reading it here too would make the re-encoded body carry it twice.
    if (keys_optional && key == "epoch") continue;
    switch (keys.take(key, at)) {
      case 0: read(kv.val, at.key("v"), env.v); break;
      case 1: read(kv.val, at.key("seq"), env.seq); break;
      case 2: read(kv.val, at.key("ts_ms"), env.ts_ms); break;
      case 3: read(kv.val, at.key("src"), env.src); break;
      case 4: read(kv.val, at.key("epoch"), env.epoch); break;
      default: break;  // a message field or an unknown key
    }
  }
  if (!keys_optional) keys.require(0b1111, at);
  if (keys.seen(0) && env.v != schema_version)
    fail(at.key("v"), "unsupported schema version " + std::to_string(env.v) + " (this decoder speaks " +
                          std::to_string(schema_version) + ")");
  // Bus messages are tracked per (src, topic), so a bus sender must name itself. The admin channel's
  // envelope is optional and an empty src there just means "anonymous client", which is also what encoding
  // a default envelope writes.
  if (!keys_optional && env.src.empty()) fail(at.key("src"), "must not be empty");
  return env;
}

std::string what_of_exception(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return "out of memory while decoding";
  return std::string{"internal decoding failure: "} + e.what();
}

void pack_envelope_head(packer& pk, const envelope& env, std::uint32_t fields) {
  pk.pack_map(fields + 4 + (env.epoch ? 1 : 0));
  pack_kv_uint(pk, "v", env.v);
  pack_kv_uint(pk, "seq", env.seq);
  pack_kv_uint(pk, "ts_ms", env.ts_ms);
  pack_kv_str(pk, "src", env.src);
  if (env.epoch) pack_kv_uint(pk, "epoch", *env.epoch);
}

}  // namespace rmbus::messages::detail
