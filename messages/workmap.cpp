#include "messages/workmap.hpp"

#include "messages/detail/entries.hpp"
#include "messages/detail/peek.hpp"

namespace rmbus::messages {

namespace {

constexpr std::array<std::string_view, 4> kind_names{"job", "service", "ap", "reservation"};
constexpr std::array<std::string_view, 4> work_state_names{"waiting", "running", "completing", "completed"};
constexpr std::array<std::string_view, 4> process_state_names{"starting", "initializing", "running", "ended"};

constexpr std::array<std::string_view, 6> process_keys{"id", "node", "state", "init_ms", "run_ms", "node_memory_mb"};
constexpr std::uint64_t process_required = 0b011111;

constexpr std::array<std::string_view, 15> item_keys{
    "id",          "kind",       "user",    "class",     "memory_mb",  "submitted_ms", "state",   "max_processes",
    "threads",     "items_total", "items_done", "item_ms", "processes", "service_id",   "hosts"};
constexpr std::uint64_t item_required = (std::uint64_t{1} << 13) - 1;  // all but service_id and hosts

void read_process(const msgpack::object& o, const detail::path& at, work_process& p) {
  detail::read_fields(o, at, process_keys, process_required,
                      [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                        switch (k) {
                          case 0: detail::read(v, f, p.id); break;
                          case 1: detail::read(v, f, p.node); break;
                          case 2: detail::read_enum(v, f, process_state_names, p.state); break;
                          case 3: detail::read(v, f, p.init_ms); break;
                          case 4: detail::read(v, f, p.run_ms); break;
                          case 5: detail::read(v, f, p.node_memory_mb); break;
                        }
                      });
}

}  // namespace

void detail::read_work_item(const msgpack::object& o, const detail::path& at, work_item& w) {
  detail::read_fields(o, at, item_keys, item_required,
                      [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                        switch (k) {
                          case 0: detail::read(v, f, w.id); break;
                          case 1: detail::read_enum(v, f, kind_names, w.kind); break;
                          case 2: detail::read(v, f, w.user); break;
                          case 3: detail::read(v, f, w.class_name); break;
                          case 4: detail::read(v, f, w.memory_mb); break;
                          case 5: detail::read(v, f, w.submitted_ms); break;
                          case 6: detail::read_enum(v, f, work_state_names, w.state); break;
                          case 7: detail::read(v, f, w.max_processes); break;
                          case 8: detail::read(v, f, w.threads); break;
                          case 9: detail::read(v, f, w.items_total); break;
                          case 10: detail::read(v, f, w.items_done); break;
                          case 11: detail::read(v, f, w.item_ms); break;
                          case 12: detail::read_array(v, f, w.processes, read_process); break;
                          case 13: detail::read(v, f, w.service_id); break;
                          case 14: detail::read(v, f, w.hosts); break;
                        }
                      });
  if (w.id.empty()) detail::fail(at.key("id"), "must not be empty");
}

namespace {

// The id of a damaged item, if it has a string `id`; used only to name the item in its error.
std::string salvage_id(const msgpack::object& o) {
  if (o.type != msgpack::type::MAP) return {};
  for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
    const auto& kv = o.via.map.ptr[i];
    if (kv.key.type == msgpack::type::STR && std::string_view{kv.key.via.str.ptr, kv.key.via.str.size} == "id" &&
        kv.val.type == msgpack::type::STR)
      return std::string{kv.val.via.str.ptr, kv.val.via.str.size};
  }
  return {};
}

void pack_process(detail::packer& pk, const work_process& p) {
  pk.pack_map(5 + p.node_memory_mb.has_value());
  detail::pack_kv_str(pk, "id", p.id);
  detail::pack_kv_str(pk, "node", p.node);
  detail::pack_kv_str(pk, "state", detail::enum_name(p.state, process_state_names));
  detail::pack_kv_uint(pk, "init_ms", p.init_ms);
  detail::pack_kv_uint(pk, "run_ms", p.run_ms);
  if (p.node_memory_mb) detail::pack_kv_uint(pk, "node_memory_mb", *p.node_memory_mb);
}

}  // namespace

void detail::pack_work_item(detail::packer& pk, const work_item& w) {
  pk.pack_map(13 + w.service_id.has_value() + !w.hosts.empty());
  detail::pack_kv_str(pk, "id", w.id);
  detail::pack_kv_str(pk, "kind", detail::enum_name(w.kind, kind_names));
  detail::pack_kv_str(pk, "user", w.user);
  detail::pack_kv_str(pk, "class", w.class_name);
  detail::pack_kv_uint(pk, "memory_mb", w.memory_mb);
  detail::pack_kv_uint(pk, "submitted_ms", w.submitted_ms);
  detail::pack_kv_str(pk, "state", detail::enum_name(w.state, work_state_names));
  detail::pack_kv_uint(pk, "max_processes", w.max_processes);
  detail::pack_kv_uint(pk, "threads", w.threads);
  detail::pack_kv_uint(pk, "items_total", w.items_total);
  detail::pack_kv_uint(pk, "items_done", w.items_done);
  detail::pack_kv_uint(pk, "item_ms", w.item_ms);
  detail::pack_key(pk, "processes");
  pk.pack_array(static_cast<std::uint32_t>(w.processes.size()));
  for (const auto& p : w.processes) pack_process(pk, p);
  if (w.service_id) detail::pack_kv_uint(pk, "service_id", *w.service_id);
  if (!w.hosts.empty()) {
    detail::pack_key(pk, "hosts");
    pk.pack_array(static_cast<std::uint32_t>(w.hosts.size()));
    for (const auto& h : w.hosts) detail::pack_str(pk, h);
  }
}

std::string_view to_string(work_kind k) { return detail::enum_name(k, kind_names); }
std::string_view to_string(work_state s) { return detail::enum_name(s, work_state_names); }
std::string_view to_string(process_state s) { return detail::enum_name(s, process_state_names); }
std::optional<work_kind> parse_work_kind(std::string_view s) { return detail::parse_enum<work_kind>(s, kind_names); }
std::optional<work_state> parse_work_state(std::string_view s) {
  return detail::parse_enum<work_state>(s, work_state_names);
}
std::optional<process_state> parse_process_state(std::string_view s) {
  return detail::parse_enum<process_state>(s, process_state_names);
}

std::string encode(const envelope& env, const workmap& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  // `work` stays the last key: differencing compares its bytes without decoding (peek_workmap_work).
  detail::pack_envelope_head(pk, env, 1 + (msg.rm_epoch ? 1 : 0) + (msg.rm_cycle ? 1 : 0));
  if (msg.rm_epoch) detail::pack_kv_uint(pk, "rm_epoch", *msg.rm_epoch);
  if (msg.rm_cycle) detail::pack_kv_uint(pk, "rm_cycle", *msg.rm_cycle);
  detail::pack_key(pk, "work");
  pk.pack_array(static_cast<std::uint32_t>(msg.work.size()));
  for (const auto& w : msg.work) detail::pack_work_item(pk, w);
  return detail::to_string(buf);
}

result<workmap> decode_workmap(std::string_view topic, std::string_view body, const decode_limits& limits,
                               envelope* env_out) {
  static constexpr std::array<std::string_view, 3> root_keys{"work", "rm_epoch", "rm_cycle"};
  return detail::guarded<workmap>(topic, body, limits, env_out, false, [&](const msgpack::object& root) {
    workmap msg;
    const detail::path at;
    detail::read_fields(root, at, root_keys, 0b1, [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
      if (k == 1) {
        detail::read(v, f, msg.rm_epoch);
        return;
      }
      if (k == 2) {
        detail::read(v, f, msg.rm_cycle);
        return;
      }
      const auto& items = detail::as_array(v, f);
      for (std::uint32_t i = 0; i < items.size; ++i) {
        const auto item_at = f.index(i);
        work_item w;
        try {
          detail::read_work_item(items.ptr[i], item_at, w);
          msg.work.push_back(std::move(w));
        } catch (detail::field_error& e) {
          // One damaged item must not cost the others: record it and carry on. A map that is mostly junk is
          // rejected whole instead, so an error list never outgrows what a sane map could produce.
          if (msg.bad_items.size() == workmap_max_bad_items)
            detail::fail(f, "more than " + std::to_string(workmap_max_bad_items) +
                                " malformed work items; the whole map is rejected (first: " +
                                msg.bad_items.front().error.field + ": " + msg.bad_items.front().error.what + ")");
          msg.bad_items.push_back(workmap_item_error{
              i, salvage_id(items.ptr[i]), decode_error{std::string{topic}, std::move(e.field), std::move(e.what)}});
        }
      }
    });
    return msg;
  });
}

std::optional<std::string_view> peek_workmap_work(std::string_view body) {
  return detail::peek_last_top_level_value(body, "work");
}

std::optional<encoded_work_array> peek_workmap_array(std::string_view work) {
  const auto head = detail::peek_array_head(work);
  if (!head) return std::nullopt;
  return encoded_work_array{head->elements, head->rest};
}

std::optional<encoded_work_item> peek_workmap_item(std::string_view bytes) {
  const auto item = detail::peek_keyed_map(bytes, "id");
  if (!item) return std::nullopt;
  return encoded_work_item{item->key_value, item->bytes};
}

result<workmap> decode_workmap_head(std::string_view topic, std::string_view body, std::string_view work,
                                    const decode_limits& limits, envelope* env_out) {
  const bool tail = work.size() <= body.size() && work.data() == body.data() + (body.size() - work.size());
  if (!tail || body.size() > limits.max_body_bytes)
    return decode_error{std::string{topic}, "work", "not the last value of a body within max_body_bytes"};
  // The body with an empty `work`: its head decodes exactly as it would before the items.
  std::string head{body.substr(0, body.size() - work.size())};
  head.push_back('\x90');
  return decode_workmap(topic, head, limits, env_out);
}

result<work_item> decode_workmap_item(std::string_view topic, std::string_view bytes, const decode_limits& limits) {
  // In the map an item sits under the root map and the `work` array.
  auto item_limits = limits;
  item_limits.max_depth = limits.max_depth > 2 ? limits.max_depth - 2 : 0;
  return decode_work_item(topic, bytes, item_limits);
}

std::string encode_work_item(const work_item& item) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_work_item(pk, item);
  return detail::to_string(buf);
}

result<work_item> decode_work_item(std::string_view topic, std::string_view body, const decode_limits& limits) {
  try {
    auto handle = detail::unpack_body(body, limits);
    work_item w;
    detail::read_work_item(handle.get(), detail::path{}, w);
    return w;
  } catch (detail::field_error& e) {
    return decode_error{std::string{topic}, std::move(e.field), std::move(e.what)};
  } catch (const std::exception& e) {
    return decode_error{std::string{topic}, {}, detail::what_of_exception(e)};
  }
}

}  // namespace rmbus::messages
