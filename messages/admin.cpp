#include "messages/admin.hpp"

#include "messages/detail/value_codec.hpp"
#include "messages/topics.hpp"

namespace rmbus::messages {

namespace {

// The admin envelope: section 2's keys without `epoch`, which is an argument or a result here (status
// reports the RM's HA epoch under it).
bool is_envelope_key(std::string_view k) { return k == "v" || k == "seq" || k == "ts_ms" || k == "src"; }

// An epoch set on the envelope has no place in an admin body (see is_envelope_key): written next to an
// `epoch` argument it would be a duplicate key, and the decoder would return it as an argument.
envelope admin_envelope(const envelope& env) {
  envelope out = env;
  out.epoch.reset();
  return out;
}

// Arguments and results share the top-level map with the fixed keys; an entry under a reserved name would
// become a duplicate key on the wire, so it is neither counted nor written.
template <class IsReserved>
std::uint32_t count_extra(const value::map& extra, IsReserved&& reserved) {
  std::uint32_t n = 0;
  for (const auto& [k, v] : extra)
    if (!reserved(k)) ++n;
  return n;
}

template <class IsReserved>
void pack_extra(detail::packer& pk, const value::map& extra, IsReserved&& reserved) {
  for (const auto& [k, v] : extra) {
    if (reserved(k)) continue;
    detail::pack_key(pk, k);
    detail::pack_value(pk, v);
  }
}

bool reserved_in_request(std::string_view k) { return k == "cmd" || is_envelope_key(k); }
bool reserved_in_reply(std::string_view k) { return k == "ok" || k == "error" || is_envelope_key(k); }

}  // namespace

std::string encode(const envelope& env, const admin_request& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, admin_envelope(env), 1 + count_extra(msg.args, reserved_in_request));
  detail::pack_kv_str(pk, "cmd", msg.cmd);
  pack_extra(pk, msg.args, reserved_in_request);
  return detail::to_string(buf);
}

std::string encode(const envelope& env, const admin_reply& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  const bool with_error = !msg.error.empty();
  detail::pack_envelope_head(pk, admin_envelope(env),
                             1 + with_error + count_extra(msg.results, reserved_in_reply));
  detail::pack_kv_bool(pk, "ok", msg.ok);
  if (with_error) detail::pack_kv_str(pk, "error", msg.error);
  pack_extra(pk, msg.results, reserved_in_reply);
  return detail::to_string(buf);
}

result<admin_request> decode_admin_request(std::string_view topic, std::string_view body,
                                           const decode_limits& limits, envelope* env_out) {
  return detail::guarded<admin_request>(topic, body, limits, env_out, true, [](const msgpack::object& root) {
    admin_request req;
    const detail::path at;
    bool have_cmd = false;
    const auto& m = detail::as_map(root, at);
    for (std::uint32_t i = 0; i < m.size; ++i) {
      const auto& kv = m.ptr[i];
      const auto key = detail::stored_key_of(kv, at);
      if (key == "cmd") {
        if (have_cmd) detail::fail(at.key(key), "duplicate key");
        detail::read(kv.val, at.key(key), req.cmd);
        have_cmd = true;
      } else if (!is_envelope_key(key)) {
        if (!req.args.emplace(std::string{key}, detail::to_value(kv.val, at.key(key))).second)
          detail::fail(at.key(key), "duplicate key");
      }
    }
    if (!have_cmd) detail::fail(at.key("cmd"), "missing required key");
    if (req.cmd.empty()) detail::fail(at.key("cmd"), "must not be empty");
    return req;
  });
}

result<admin_reply> decode_admin_reply(std::string_view topic, std::string_view body, const decode_limits& limits,
                                       envelope* env_out) {
  return detail::guarded<admin_reply>(topic, body, limits, env_out, true, [](const msgpack::object& root) {
    admin_reply rep;
    const detail::path at;
    bool have_ok = false;
    bool have_error = false;
    const auto& m = detail::as_map(root, at);
    for (std::uint32_t i = 0; i < m.size; ++i) {
      const auto& kv = m.ptr[i];
      const auto key = detail::stored_key_of(kv, at);
      if (key == "ok") {
        if (have_ok) detail::fail(at.key(key), "duplicate key");
        detail::read(kv.val, at.key(key), rep.ok);
        have_ok = true;
      } else if (key == "error") {
        if (have_error) detail::fail(at.key(key), "duplicate key");
        detail::read(kv.val, at.key(key), rep.error);
        have_error = true;
      } else if (!is_envelope_key(key)) {
        if (!rep.results.emplace(std::string{key}, detail::to_value(kv.val, at.key(key))).second)
          detail::fail(at.key(key), "duplicate key");
      }
    }
    if (!have_ok) detail::fail(at.key("ok"), "missing required key");
    if (!rep.ok && rep.error.empty()) detail::fail(at.key("error"), "required (non-empty) when ok is false");
    return rep;
  });
}

map_view arguments(const admin_request& req) { return map_view{topics::admin, req.args}; }
map_view results(const admin_reply& rep) { return map_view{topics::admin, rep.results}; }

result<work_item> whatif_work(const admin_request& req, const decode_limits& limits) {
  auto raw = arguments(req).get("work");
  if (!raw) return raw.error();
  auto item = decode_work_item(topics::admin, encode_value(raw.value()), limits);
  if (item) return item;
  auto err = item.error();
  err.field = err.field.empty() ? "work" : "work." + err.field;
  return err;
}

}  // namespace rmbus::messages
