#include "messages/rm_state.hpp"

#include "messages/detail/entries.hpp"

namespace rmbus::messages {

namespace {

constexpr std::array<std::string_view, 3> job_status_names{"scheduled", "pending", "refused"};
constexpr std::array<std::string_view, 4> share_status_names{"running", "new", "preempt", "evict"};

// The first four are required; reclaim_at_ms was added later and is optional.
constexpr std::array<std::string_view, 5> share_keys{"id", "node", "quanta", "status", "reclaim_at_ms"};
// The first five are required; the rest were added later and are optional.
constexpr std::array<std::string_view, 12> job_keys{"id",     "status",     "reason", "memory_mb",
                                                    "shares", "user",       "class",  "given",
                                                    "demand", "fair_share", "group",  "capped_by"};
constexpr std::array<std::string_view, 4> root_keys{"cycle", "jobs", "workmap_seq", "workmap_src"};

void read_share(const msgpack::object& o, const detail::path& at, share_schedule& s) {
  detail::read_fields(o, at, share_keys, 0b1111, [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
    switch (k) {
      case 0: detail::read(v, f, s.id); break;
      case 1: detail::read(v, f, s.node); break;
      case 2: detail::read(v, f, s.quanta); break;
      case 3: detail::read_enum(v, f, share_status_names, s.status); break;
      case 4: detail::read(v, f, s.reclaim_at_ms); break;
    }
  });
}

}  // namespace

void detail::read_job_schedule(const msgpack::object& o, const detail::path& at, job_schedule& j) {
  detail::read_fields(o, at, job_keys, 0b11111, [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
    switch (k) {
      case 0: detail::read(v, f, j.id); break;
      case 1: detail::read_enum(v, f, job_status_names, j.status); break;
      case 2: detail::read(v, f, j.reason); break;
      case 3: detail::read(v, f, j.memory_mb); break;
      case 4: detail::read_array(v, f, j.shares, read_share); break;
      case 5: detail::read(v, f, j.user); break;
      case 6: detail::read(v, f, j.class_name); break;
      case 7: detail::read(v, f, j.given); break;
      case 8: detail::read(v, f, j.demand); break;
      case 9: detail::read(v, f, j.fair_share); break;
      case 10: detail::read(v, f, j.group); break;
      case 11:
        detail::read(v, f, j.capped_by);
        break;
    }
  });
}

void detail::pack_job_schedule(detail::packer& pk, const job_schedule& j) {
  pk.pack_map(10 + (j.group.empty() ? 0 : 1) + (j.capped_by.empty() ? 0 : 1));
  detail::pack_kv_str(pk, "id", j.id);
  detail::pack_kv_str(pk, "status", detail::enum_name(j.status, job_status_names));
  detail::pack_kv_str(pk, "reason", j.reason);
  detail::pack_kv_uint(pk, "memory_mb", j.memory_mb);
  detail::pack_key(pk, "shares");
  pk.pack_array(static_cast<std::uint32_t>(j.shares.size()));
  for (const auto& s : j.shares) {
    pk.pack_map(4 + (s.reclaim_at_ms.has_value() ? 1 : 0));
    detail::pack_kv_str(pk, "id", s.id);
    detail::pack_kv_str(pk, "node", s.node);
    detail::pack_kv_uint(pk, "quanta", s.quanta);
    detail::pack_kv_str(pk, "status", detail::enum_name(s.status, share_status_names));
    if (s.reclaim_at_ms) detail::pack_kv_uint(pk, "reclaim_at_ms", *s.reclaim_at_ms);
  }
  detail::pack_kv_str(pk, "user", j.user);
  detail::pack_kv_str(pk, "class", j.class_name);
  detail::pack_kv_uint(pk, "given", j.given);
  detail::pack_kv_uint(pk, "demand", j.demand);
  detail::pack_kv_uint(pk, "fair_share", j.fair_share);
  if (!j.group.empty()) detail::pack_kv_str(pk, "group", j.group);
  if (!j.capped_by.empty()) detail::pack_kv_str(pk, "capped_by", j.capped_by);
}

std::string_view to_string(job_status s) { return detail::enum_name(s, job_status_names); }
std::string_view to_string(share_status s) { return detail::enum_name(s, share_status_names); }
std::optional<job_status> parse_job_status(std::string_view s) {
  return detail::parse_enum<job_status>(s, job_status_names);
}
std::optional<share_status> parse_share_status(std::string_view s) {
  return detail::parse_enum<share_status>(s, share_status_names);
}

std::string encode(const envelope& env, const rm_state& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, 2 + msg.workmap_seq.has_value() + msg.workmap_src.has_value());
  detail::pack_kv_uint(pk, "cycle", msg.cycle);
  if (msg.workmap_seq) detail::pack_kv_uint(pk, "workmap_seq", *msg.workmap_seq);
  if (msg.workmap_src) detail::pack_kv_str(pk, "workmap_src", *msg.workmap_src);
  detail::pack_key(pk, "jobs");
  pk.pack_array(static_cast<std::uint32_t>(msg.jobs.size()));
  if (msg.encoded_jobs.size() == msg.jobs.size() && !msg.jobs.empty())
    return detail::to_string(buf, msg.encoded_jobs);
  for (const auto& j : msg.jobs) detail::pack_job_schedule(pk, j);
  return detail::to_string(buf);
}

std::string encode_job_entry(const job_schedule& j) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_job_schedule(pk, j);
  return detail::to_string(buf);
}

result<rm_state> decode_rm_state(std::string_view topic, std::string_view body, const decode_limits& limits,
                                 envelope* env_out) {
  return detail::guarded<rm_state>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    rm_state msg;
    detail::read_fields(root, detail::path{}, root_keys, 0b11,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          switch (k) {
                            case 0: detail::read(v, f, msg.cycle); break;
                            case 1: detail::read_array(v, f, msg.jobs, detail::read_job_schedule); break;
                            case 2: detail::read(v, f, msg.workmap_seq); break;
                            case 3: detail::read(v, f, msg.workmap_src); break;
                          }
                        });
    return msg;
  });
}

}  // namespace rmbus::messages
