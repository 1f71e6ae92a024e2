#include "messages/value.hpp"

#include <cmath>
#include <cstdio>

#include "messages/detail/value_codec.hpp"

namespace rmbus::messages {

namespace detail {

value to_value(const msgpack::object& o, const path& at) {
  switch (o.type) {
    case msgpack::type::NIL: return value{};
    case msgpack::type::BOOLEAN: return value{o.via.boolean};
    case msgpack::type::POSITIVE_INTEGER: return value{o.via.u64};
    case msgpack::type::NEGATIVE_INTEGER: return value{o.via.i64};
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: return value{o.via.f64};
    case msgpack::type::STR: {
      std::string s;
      read(o, at, s);  // checks UTF-8
      return value{std::move(s)};
    }
    case msgpack::type::ARRAY: {
      value::array a;
      a.reserve(o.via.array.size);  // bounded: each element already exists in the unpacked object
      for (std::uint32_t i = 0; i < o.via.array.size; ++i) a.push_back(to_value(o.via.array.ptr[i], at.index(i)));
      return value{std::move(a)};
    }
    case msgpack::type::MAP: {
      value::map m;
      for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
        const auto& kv = o.via.map.ptr[i];
        const auto key = stored_key_of(kv, at);
        auto v = to_value(kv.val, at.key(key));
        if (!m.emplace(std::string{key}, std::move(v)).second) fail(at.key(key), "duplicate key");
      }
      return value{std::move(m)};
    }
    case msgpack::type::BIN:
    case msgpack::type::EXT: break;
  }
  fail(at, std::string{"unsupported value type "} + std::string{type_name(o)});
}

void pack_value(packer& pk, const value& v) {
  switch (v.type()) {
    case value::kind::nil: pk.pack_nil(); return;
    case value::kind::boolean:
      if (*v.as_bool())
        pk.pack_true();
      else
        pk.pack_false();
      return;
    case value::kind::integer: pk.pack_int64(*v.as_int()); return;
    case value::kind::unsigned_integer: pk.pack_uint64(*v.as_uint()); return;
    case value::kind::floating: pk.pack_double(*v.as_double()); return;
    case value::kind::string: pack_str(pk, *v.as_string()); return;
    case value::kind::array:
      pk.pack_array(static_cast<std::uint32_t>(v.as_array()->size()));
      for (const auto& e : *v.as_array()) pack_value(pk, e);
      return;
    case value::kind::map:
      pk.pack_map(static_cast<std::uint32_t>(v.as_map()->size()));
      for (const auto& [k, e] : *v.as_map()) {
        pack_key(pk, k);
        pack_value(pk, e);
      }
      return;
  }
}

}  // namespace detail

std::string_view type_name(value::kind k) {
  switch (k) {
    case value::kind::nil: return "nil";
    case value::kind::boolean: return "boolean";
    case value::kind::integer: return "negative integer";
    case value::kind::unsigned_integer: return "unsigned integer";
    case value::kind::floating: return "float";
    case value::kind::string: return "string";
    case value::kind::array: return "array";
    case value::kind::map: return "map";
  }
  return "unknown type";
}

namespace {

void quote(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

void render(std::string& out, const value& v) {
  switch (v.type()) {
    case value::kind::nil: out += "null"; return;
    case value::kind::boolean: out += *v.as_bool() ? "true" : "false"; return;
    case value::kind::integer: out += std::to_string(*v.as_int()); return;
    case value::kind::unsigned_integer: out += std::to_string(*v.as_uint()); return;
    case value::kind::floating: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", *v.as_double());
      out += buf;
      return;
    }
    case value::kind::string: quote(out, *v.as_string()); return;
    case value::kind::array: {
      out += '[';
      bool first = true;
      for (const auto& e : *v.as_array()) {
        if (!first) out += ',';
        first = false;
        render(out, e);
      }
      out += ']';
      return;
    }
    case value::kind::map: {
      out += '{';
      bool first = true;
      for (const auto& [k, e] : *v.as_map()) {
        if (!first) out += ',';
        first = false;
        quote(out, k);
        out += ':';
        render(out, e);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

std::string to_text(const value& v) {
  std::string out;
  render(out, v);
  return out;
}

std::string encode_value(const value& v) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_value(pk, v);
  return detail::to_string(buf);
}

result<value> decode_value(std::string_view topic, std::string_view body, const decode_limits& limits) {
  try {
    auto handle = detail::unpack_body(body, limits);
    return detail::to_value(handle.get(), detail::path{});
  } catch (detail::field_error& e) {
    return decode_error{std::string{topic}, std::move(e.field), std::move(e.what)};
  } catch (const std::exception& e) {
    return decode_error{std::string{topic}, {}, detail::what_of_exception(e)};
  }
}

decode_error map_view::error(std::string_view key, std::string what) const {
  return decode_error{topic_, prefix_ + std::string{key}, std::move(what)};
}

template <class T, class Fn>
result<T> map_view::typed(std::string_view key, std::string_view expected, Fn&& fn) const {
  const auto it = map_->find(key);
  if (it == map_->end()) return error(key, "missing required key");
  if (auto out = fn(it->second)) return std::move(*out);
  return error(key, "expected " + std::string{expected} + ", got " + std::string{type_name(it->second.type())});
}

result<value> map_view::get(std::string_view key) const {
  const auto it = map_->find(key);
  if (it == map_->end()) return error(key, "missing required key");
  return result<value>{it->second};
}

result<std::string> map_view::get_string(std::string_view key) const {
  return typed<std::string>(key, "string", [](const value& v) -> std::optional<std::string> {
    if (const auto* s = v.as_string()) return *s;
    return std::nullopt;
  });
}

result<std::uint64_t> map_view::get_uint(std::string_view key) const {
  return typed<std::uint64_t>(key, "unsigned integer", [](const value& v) -> std::optional<std::uint64_t> {
    if (const auto* u = v.as_uint()) return *u;
    return std::nullopt;
  });
}

result<std::int64_t> map_view::get_int(std::string_view key) const {
  return typed<std::int64_t>(key, "integer within int64", [](const value& v) -> std::optional<std::int64_t> {
    if (const auto* i = v.as_int()) return *i;
    if (const auto* u = v.as_uint(); u && *u <= static_cast<std::uint64_t>(INT64_MAX))
      return static_cast<std::int64_t>(*u);
    return std::nullopt;
  });
}

result<double> map_view::get_double(std::string_view key) const {
  return typed<double>(key, "number", [](const value& v) -> std::optional<double> {
    if (const auto* d = v.as_double()) return *d;
    if (const auto* i = v.as_int()) return static_cast<double>(*i);
    if (const auto* u = v.as_uint()) return static_cast<double>(*u);
    return std::nullopt;
  });
}

result<bool> map_view::get_bool(std::string_view key) const {
  return typed<bool>(key, "boolean", [](const value& v) -> std::optional<bool> {
    if (const auto* b = v.as_bool()) return *b;
    return std::nullopt;
  });
}

result<std::vector<std::string>> map_view::get_string_list(std::string_view key) const {
  const auto it = map_->find(key);
  if (it == map_->end()) return error(key, "missing required key");
  const auto* a = it->second.as_array();
  if (!a) return error(key, "expected array of strings, got " + std::string{type_name(it->second.type())});
  std::vector<std::string> out;
  out.reserve(a->size());
  for (std::size_t i = 0; i < a->size(); ++i) {
    const auto* s = (*a)[i].as_string();
    if (!s)
      return decode_error{topic_, prefix_ + std::string{key} + "[" + std::to_string(i) + "]",
                          "expected string, got " + std::string{type_name((*a)[i].type())}};
    out.push_back(*s);
  }
  return out;
}

result<value::map> map_view::get_map(std::string_view key) const {
  return typed<value::map>(key, "map", [](const value& v) -> std::optional<value::map> {
    if (const auto* m = v.as_map()) return *m;
    return std::nullopt;
  });
}

}  // namespace rmbus::messages
