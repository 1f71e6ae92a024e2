#include "messages/rm_schedule_changes.hpp"

#include <unordered_map>
#include <unordered_set>

#include "messages/detail/entries.hpp"

namespace rmbus::messages {

namespace {

constexpr std::array<std::string_view, 7> root_keys{"cycle", "full", "base_cycle", "jobs", "removed", "workmap_seq",
                                                    "workmap_src"};
constexpr std::uint64_t root_required = 0b1011;  // cycle, full, jobs

}  // namespace

std::string encode(const envelope& env, const rm_schedule_changes& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env,
                             3 + (msg.full ? 0 : 2) + msg.workmap_seq.has_value() + msg.workmap_src.has_value());
  detail::pack_kv_uint(pk, "cycle", msg.cycle);
  detail::pack_kv_bool(pk, "full", msg.full);
  if (!msg.full) detail::pack_kv_uint(pk, "base_cycle", msg.base_cycle);
  if (msg.workmap_seq) detail::pack_kv_uint(pk, "workmap_seq", *msg.workmap_seq);
  if (msg.workmap_src) detail::pack_kv_str(pk, "workmap_src", *msg.workmap_src);
  if (!msg.full) {
    detail::pack_key(pk, "removed");
    pk.pack_array(static_cast<std::uint32_t>(msg.removed.size()));
    for (const auto& id : msg.removed) detail::pack_str(pk, id);
  }
  detail::pack_key(pk, "jobs");
  pk.pack_array(static_cast<std::uint32_t>(msg.jobs.size()));
  for (const auto& j : msg.jobs) detail::pack_job_schedule(pk, j);
  return detail::to_string(buf);
}

result<rm_schedule_changes> decode_rm_schedule_changes(std::string_view topic, std::string_view body,
                                                       const decode_limits& limits, envelope* env_out) {
  return detail::guarded<rm_schedule_changes>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    rm_schedule_changes msg;
    const detail::path at;
    bool has_base = false, has_removed = false;
    detail::read_fields(root, at, root_keys, root_required,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          switch (k) {
                            case 0: detail::read(v, f, msg.cycle); break;
                            case 1: detail::read(v, f, msg.full); break;
                            case 2: detail::read(v, f, msg.base_cycle); has_base = true; break;
                            case 3: detail::read_array(v, f, msg.jobs, detail::read_job_schedule); break;
                            case 4: detail::read(v, f, msg.removed); has_removed = true; break;
                            case 5: detail::read(v, f, msg.workmap_seq); break;
                            case 6: detail::read(v, f, msg.workmap_src); break;
                          }
                        });
    if (msg.full && (has_base || has_removed))
      detail::fail(at.key(has_base ? "base_cycle" : "removed"), "not allowed in a full message");
    if (!msg.full && (!has_base || msg.base_cycle == 0))
      detail::fail(at.key("base_cycle"), "a changes message needs the cycle it builds on (at least 1)");
    std::unordered_set<std::string_view> ids;
    for (std::size_t i = 0; i < msg.jobs.size(); ++i)
      if (!ids.insert(msg.jobs[i].id).second) detail::fail(at.key("jobs").index(i).key("id"), "job named twice");
    for (std::size_t i = 0; i < msg.removed.size(); ++i)
      if (!ids.insert(msg.removed[i]).second) detail::fail(at.key("removed").index(i), "job named twice");
    return msg;
  });
}

rm_schedule_changes make_schedule_changes(std::uint64_t base_cycle, const rm_state& before, const rm_state& after) {
  rm_schedule_changes out;
  out.cycle = after.cycle;
  out.base_cycle = base_cycle;
  out.workmap_seq = after.workmap_seq;
  out.workmap_src = after.workmap_src;
  std::unordered_map<std::string_view, const job_schedule*> old;
  old.reserve(before.jobs.size());
  for (const auto& j : before.jobs) old.emplace(j.id, &j);
  for (const auto& j : after.jobs) {
    auto it = old.find(j.id);
    if (it == old.end()) {
      out.jobs.push_back(j);
      continue;
    }
    if (!(*it->second == j)) out.jobs.push_back(j);
    old.erase(it);
  }
  for (const auto& j : before.jobs)
    if (old.count(j.id)) out.removed.push_back(j.id);
  return out;
}

rm_schedule_changes full_schedule(const rm_state& s) {
  rm_schedule_changes out;
  out.cycle = s.cycle;
  out.full = true;
  out.jobs.assign(s.jobs.begin(), s.jobs.end());
  out.workmap_seq = s.workmap_seq;
  out.workmap_src = s.workmap_src;
  return out;
}

}  // namespace rmbus::messages
