#include "messages/internal/work_slice.hpp"

#include "messages/detail/entries.hpp"

namespace rmbus::messages {

namespace {
constexpr std::array<std::string_view, 11> root_keys{"cycle",     "now_ms",         "other_np_mb",
                                                     "work",      "settling",       "foreign_processes",
                                                     "slice_seq", "base_slice_seq", "removed",
                                                     "acted_cycle", "hold"};
}  // namespace

std::string encode(const envelope& env, const work_slice& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env,
                             4 + (msg.settling ? 1 : 0) + (msg.foreign_processes.empty() ? 0 : 1) + (msg.seq > 0 ? 1 : 0) +
                                 (msg.base_seq > 0 ? 1 : 0) + (msg.removed.empty() ? 0 : 1) + (msg.acted_cycle ? 1 : 0) +
                                 (msg.hold.empty() ? 0 : 1));
  detail::pack_kv_uint(pk, "cycle", msg.cycle);
  detail::pack_kv_uint(pk, "now_ms", msg.now_ms);
  detail::pack_key(pk, "other_np_mb");
  detail::pack_uint_map(pk, msg.other_np_mb);
  detail::pack_key(pk, "work");
  pk.pack_array(static_cast<std::uint32_t>(msg.work.size()));
  for (const auto& w : msg.work) detail::pack_work_item(pk, w);
  if (msg.settling) detail::pack_kv_bool(pk, "settling", true);
  if (!msg.foreign_processes.empty()) {
    detail::pack_key(pk, "foreign_processes");
    detail::pack_uint_map(pk, msg.foreign_processes);
  }
  if (msg.seq > 0) detail::pack_kv_uint(pk, "slice_seq", msg.seq);
  if (msg.base_seq > 0) detail::pack_kv_uint(pk, "base_slice_seq", msg.base_seq);
  if (!msg.removed.empty()) {
    detail::pack_key(pk, "removed");
    pk.pack_array(static_cast<std::uint32_t>(msg.removed.size()));
    for (const auto& id : msg.removed) detail::pack_str(pk, id);
  }
  if (msg.acted_cycle) detail::pack_kv_uint(pk, "acted_cycle", *msg.acted_cycle);
  if (!msg.hold.empty()) detail::pack_kv_str(pk, "hold", msg.hold);
  return detail::to_string(buf);
}

result<work_slice> decode_work_slice(std::string_view topic, std::string_view body, const decode_limits& limits,
                                     envelope* env_out) {
  return detail::guarded<work_slice>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    work_slice msg;
    // Items come from our own differencing actor, which decoded and checked them: one bad item is a bug
    // or damage on the way, and the slice is refused whole (a slice with an item missing would retire it).
    detail::read_fields(root, detail::path{}, root_keys, 0b1111,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          switch (k) {
                            case 0: detail::read(v, f, msg.cycle); break;
                            case 1: detail::read(v, f, msg.now_ms); break;
                            case 2: detail::read_uint_map(v, f, msg.other_np_mb); break;
                            case 3: detail::read_array(v, f, msg.work, detail::read_work_item); break;
                            case 4: detail::read(v, f, msg.settling); break;
                            case 5: detail::read_uint_map(v, f, msg.foreign_processes); break;
                            case 6: detail::read(v, f, msg.seq); break;
                            case 7: detail::read(v, f, msg.base_seq); break;
                            case 8:
                              detail::read_array(v, f, msg.removed, [](const msgpack::object& o, const detail::path& p,
                                                                       std::string& id) {
                                detail::read(o, p, id);
                                if (id.empty()) detail::fail(p, "must not be empty");
                              });
                              break;
                            case 9: detail::read(v, f, msg.acted_cycle); break;
                            case 10: detail::read(v, f, msg.hold); break;
                          }
                        });
    if (msg.base_seq > 0 && msg.base_seq >= msg.seq)
      detail::fail(detail::path{}.key("base_slice_seq"), "must be below slice_seq (a change builds on an earlier slice)");
    if (msg.base_seq == 0 && !msg.removed.empty())
      detail::fail(detail::path{}.key("removed"), "only a change (base_slice_seq set) removes items");
    return msg;
  });
}

}  // namespace rmbus::messages
