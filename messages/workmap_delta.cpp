#include "messages/workmap_delta.hpp"

#include <unordered_set>

#include "messages/detail/entries.hpp"
#include "messages/detail/peek.hpp"

namespace rmbus::messages {

namespace {

constexpr std::array<std::string_view, 7> root_keys{"base_seq", "added", "changed", "removed", "rm_epoch", "work",
                                                    "rm_cycle"};
constexpr std::uint64_t root_required = 0b1;  // base_seq; absent lists are empty

}  // namespace

std::string encode(const envelope& env, const workmap_delta& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 4 + (msg.rm_epoch ? 1 : 0) + (msg.rm_cycle ? 1 : 0));
  detail::pack_kv_uint(pk, "base_seq", msg.base_seq);
  if (msg.rm_epoch) detail::pack_kv_uint(pk, "rm_epoch", *msg.rm_epoch);
  if (msg.rm_cycle) detail::pack_kv_uint(pk, "rm_cycle", *msg.rm_cycle);
  for (const auto* list : {&msg.added, &msg.changed}) {
    detail::pack_key(pk, list == &msg.added ? "added" : "changed");
    pk.pack_array(static_cast<std::uint32_t>(list->size()));
    for (const auto& w : *list) detail::pack_work_item(pk, w);
  }
  detail::pack_key(pk, "removed");
  pk.pack_array(static_cast<std::uint32_t>(msg.removed.size()));
  for (const auto& id : msg.removed) detail::pack_str(pk, id);
  return detail::to_string(buf);
}

result<workmap_delta> decode_workmap_delta(std::string_view topic, std::string_view body,
                                           const decode_limits& limits, envelope* env_out) {
  return detail::guarded<workmap_delta>(topic, body, limits, env_out, false, [&](const msgpack::object& root) {
    workmap_delta msg;
    const detail::path at;
    std::size_t entries = 0;
    auto count = [&](const msgpack::object& v, const detail::path& f) {
      entries += detail::as_array(v, f).size;
      if (entries > workmap_delta_max_entries)
        detail::fail(f, "more than " + std::to_string(workmap_delta_max_entries) +
                            " entries in one delta; send a full map instead");
    };
    detail::read_fields(root, at, root_keys, root_required,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          switch (k) {
                            case 0: detail::read(v, f, msg.base_seq); break;
                            case 1: count(v, f); detail::read_array(v, f, msg.added, detail::read_work_item); break;
                            case 2:
                              count(v, f);
                              detail::read_array(v, f, msg.changed, detail::read_work_item);
                              break;
                            case 3:
                              count(v, f);
                              detail::read_array(v, f, msg.removed, [](const msgpack::object& o, const detail::path& p,
                                                                       std::string& id) {
                                detail::read(o, p, id);
                                if (id.empty()) detail::fail(p, "must not be empty");
                              });
                              break;
                            case 4: detail::read(v, f, msg.rm_epoch); break;
                            case 5: detail::fail(f, "a delta carries no work array (a map with one is a full map)");
                            case 6: detail::read(v, f, msg.rm_cycle); break;
                          }
                        });
    if (msg.base_seq == 0) detail::fail(at.key("base_seq"), "must be at least 1 (the seq of a map sent before)");
    // One id, one change: a delta naming an id twice has no single meaning.
    std::unordered_set<std::string_view> ids;
    ids.reserve(entries);
    auto once = [&](std::string_view list, std::size_t i, const std::string& id) {
      if (!ids.insert(id).second)
        detail::fail(at.key(list).index(i), "id '" + detail::printable(id) + "' named twice in one delta");
    };
    for (std::size_t i = 0; i < msg.added.size(); ++i) once("added", i, msg.added[i].id);
    for (std::size_t i = 0; i < msg.changed.size(); ++i) once("changed", i, msg.changed[i].id);
    for (std::size_t i = 0; i < msg.removed.size(); ++i) once("removed", i, msg.removed[i]);
    return msg;
  });
}

workmap_delta make_workmap_delta(std::uint64_t base_seq, const std::map<std::string, work_item>& before,
                                 const std::map<std::string, work_item>& after) {
  workmap_delta d;
  d.base_seq = base_seq;
  // One merge walk over both id orders.
  auto b = before.begin();
  auto a = after.begin();
  while (b != before.end() || a != after.end()) {
    if (a == after.end() || (b != before.end() && b->first < a->first)) {
      d.removed.push_back(b->first);
      ++b;
    } else if (b == before.end() || a->first < b->first) {
      d.added.push_back(a->second);
      ++a;
    } else {
      if (!(a->second == b->second)) d.changed.push_back(a->second);
      ++a;
      ++b;
    }
  }
  return d;
}

bool is_workmap_delta(std::string_view body) { return detail::peek_first_top_level_key(body, "base_seq", "work") == 1; }

}  // namespace rmbus::messages
