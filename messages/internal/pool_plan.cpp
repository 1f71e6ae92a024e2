#include "messages/internal/pool_plan.hpp"

#include "messages/detail/entries.hpp"

namespace rmbus::messages {

namespace {

constexpr std::array<std::string_view, 4> status_names{"up", "varied_off", "down", "blacklisted"};
constexpr std::array<std::string_view, 7> machine_keys{"node",      "nodepool", "state",      "quiesced",
                                                       "memory_mb", "quanta",   "free_quanta"};
constexpr std::array<std::string_view, 21> root_keys{
    "cycle",     "pool",    "quantum_mb", "total_us", "how_much_us", "what_of_us", "preempt_us", "defrag_us",
    "jobs_count", "nodes",  "given",      "preempted", "evicted",    "jobs",       "np_mb",      "machines",
    "machines_complete", "generation", "plan_seq", "base_plan_seq", "removed_jobs"};
// Every key but those added later (generation; plan_seq, base_plan_seq, removed_jobs).
constexpr std::uint64_t root_required = (std::uint64_t{1} << 17) - 1;

void read_machine(const msgpack::object& o, const detail::path& at, machine_summary& m) {
  detail::read_fields(o, at, machine_keys, 0x7f, [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
    switch (k) {
      case 0: detail::read(v, f, m.node); break;
      case 1: detail::read(v, f, m.nodepool); break;
      case 2: detail::read_enum(v, f, status_names, m.state); break;
      case 3: detail::read(v, f, m.quiesced); break;
      case 4: detail::read(v, f, m.memory_mb); break;
      case 5: detail::read(v, f, m.quanta); break;
      case 6: detail::read(v, f, m.free_quanta); break;
    }
  });
}

}  // namespace

std::string_view to_string(machine_status s) { return detail::enum_name(s, status_names); }

std::string encode(const envelope& env, const pool_plan& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env,
                             18 + (msg.plan_seq > 0 ? 1 : 0) + (msg.base_plan_seq > 0 ? 1 : 0) +
                                 (msg.removed_jobs.empty() ? 0 : 1));
  detail::pack_kv_uint(pk, "cycle", msg.cycle);
  detail::pack_kv_str(pk, "pool", msg.pool);
  detail::pack_kv_uint(pk, "quantum_mb", msg.quantum_mb);
  detail::pack_kv_uint(pk, "total_us", msg.total_us);
  detail::pack_kv_uint(pk, "how_much_us", msg.how_much_us);
  detail::pack_kv_uint(pk, "what_of_us", msg.what_of_us);
  detail::pack_kv_uint(pk, "preempt_us", msg.preempt_us);
  detail::pack_kv_uint(pk, "defrag_us", msg.defrag_us);
  detail::pack_kv_uint(pk, "jobs_count", msg.jobs_count);
  detail::pack_kv_uint(pk, "nodes", msg.nodes);
  detail::pack_kv_uint(pk, "given", msg.given);
  detail::pack_kv_uint(pk, "preempted", msg.preempted);
  detail::pack_kv_uint(pk, "evicted", msg.evicted);
  detail::pack_key(pk, "jobs");
  pk.pack_array(static_cast<std::uint32_t>(msg.jobs.size()));
  for (const auto& j : msg.jobs) detail::pack_job_schedule(pk, j);
  detail::pack_key(pk, "np_mb");
  detail::pack_uint_map(pk, msg.np_mb);
  detail::pack_key(pk, "machines");
  pk.pack_array(static_cast<std::uint32_t>(msg.machines.size()));
  for (const auto& m : msg.machines) {
    pk.pack_map(7);
    detail::pack_kv_str(pk, "node", m.node);
    detail::pack_kv_str(pk, "nodepool", m.nodepool);
    detail::pack_kv_str(pk, "state", detail::enum_name(m.state, status_names));
    detail::pack_kv_bool(pk, "quiesced", m.quiesced);
    detail::pack_kv_uint(pk, "memory_mb", m.memory_mb);
    detail::pack_kv_uint(pk, "quanta", m.quanta);
    detail::pack_kv_uint(pk, "free_quanta", m.free_quanta);
  }
  detail::pack_kv_bool(pk, "machines_complete", msg.machines_complete);
  detail::pack_kv_uint(pk, "generation", msg.generation);
  if (msg.plan_seq > 0) detail::pack_kv_uint(pk, "plan_seq", msg.plan_seq);
  if (msg.base_plan_seq > 0) detail::pack_kv_uint(pk, "base_plan_seq", msg.base_plan_seq);
  if (!msg.removed_jobs.empty()) {
    detail::pack_key(pk, "removed_jobs");
    pk.pack_array(static_cast<std::uint32_t>(msg.removed_jobs.size()));
    for (const auto& id : msg.removed_jobs) detail::pack_str(pk, id);
  }
  return detail::to_string(buf);
}

result<pool_plan> decode_pool_plan(std::string_view topic, std::string_view body, const decode_limits& limits,
                                   envelope* env_out) {
  return detail::guarded<pool_plan>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    pool_plan msg;
    detail::read_fields(root, detail::path{}, root_keys, root_required,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          switch (k) {
                            case 0: detail::read(v, f, msg.cycle); break;
                            case 1: detail::read(v, f, msg.pool); break;
                            case 2: detail::read(v, f, msg.quantum_mb); break;
                            case 3: detail::read(v, f, msg.total_us); break;
                            case 4: detail::read(v, f, msg.how_much_us); break;
                            case 5: detail::read(v, f, msg.what_of_us); break;
                            case 6: detail::read(v, f, msg.preempt_us); break;
                            case 7: detail::read(v, f, msg.defrag_us); break;
                            case 8: detail::read(v, f, msg.jobs_count); break;
                            case 9: detail::read(v, f, msg.nodes); break;
                            case 10: detail::read(v, f, msg.given); break;
                            case 11: detail::read(v, f, msg.preempted); break;
                            case 12: detail::read(v, f, msg.evicted); break;
                            case 13: detail::read_array(v, f, msg.jobs, detail::read_job_schedule); break;
                            case 14: detail::read_uint_map(v, f, msg.np_mb); break;
                            case 15: detail::read_array(v, f, msg.machines, read_machine); break;
                            case 16: detail::read(v, f, msg.machines_complete); break;
                            case 17: detail::read(v, f, msg.generation); break;
                            case 18: detail::read(v, f, msg.plan_seq); break;
                            case 19: detail::read(v, f, msg.base_plan_seq); break;
                            case 20:
                              detail::read_array(v, f, msg.removed_jobs,
                                                 [](const msgpack::object& o, const detail::path& p, std::string& id) {
                                                   detail::read(o, p, id);
                                                   if (id.empty()) detail::fail(p, "must not be empty");
                                                 });
                              break;
                          }
                        });
    if (msg.base_plan_seq > 0 && msg.base_plan_seq >= msg.plan_seq)
      detail::fail(detail::path{}.key("base_plan_seq"), "must be below plan_seq (a change builds on an earlier plan)");
    if (msg.base_plan_seq == 0 && !msg.removed_jobs.empty())
      detail::fail(detail::path{}.key("removed_jobs"), "only a change plan (base_plan_seq set) removes jobs");
    return msg;
  });
}

}  // namespace rmbus::messages
