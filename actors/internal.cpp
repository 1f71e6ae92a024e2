#include "actors/internal.hpp"

#include <chrono>
#include <utility>

#include "messages/workmap.hpp"

namespace rmbus::actors {

std::string node_topic(std::string_view pool) { return std::string{topics::node_prefix} + std::string{pool}; }
std::string work_topic(std::string_view pool) { return std::string{topics::work_prefix} + std::string{pool}; }
std::string query_topic(std::string_view pool) { return std::string{topics::query_prefix} + std::string{pool}; }

std::string encode_internal(const messages::envelope& env, value::map fields) {
  fields["v"] = value{static_cast<std::uint64_t>(env.v)};
  fields["seq"] = value{env.seq};
  fields["ts_ms"] = value{env.ts_ms};
  fields["src"] = value{env.src};
  return messages::encode_value(value{std::move(fields)});
}

messages::result<internal_message> decode_internal(std::string_view topic, std::string_view body,
                                                   const messages::decode_limits& limits) {
  auto env = messages::decode_envelope(topic, body, limits);
  if (!env) return env.error();
  auto tree = messages::decode_value(topic, body, limits);
  if (!tree) return tree.error();
  auto* m = tree.value().as_map();
  if (m == nullptr) return messages::decode_error{std::string{topic}, {}, "body is not a map"};
  internal_message out;
  out.env = std::move(env.value());
  for (const char* k : {"v", "seq", "ts_ms", "src"}) m->erase(std::string{k});
  out.fields = std::move(*m);
  return out;
}

messages::envelope envelope_stamper::next(std::string_view topic) {
  auto it = seq_.find(topic);
  if (it == seq_.end()) it = seq_.emplace(std::string{topic}, 0).first;
  messages::envelope env;
  env.seq = ++it->second;
  env.ts_ms = static_cast<std::uint64_t>(wall_clock_ms());
  env.src = src_;
  return env;
}

std::int64_t wall_clock_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string str_of(const value::map& m, std::string_view key) {
  auto it = m.find(key);
  if (it == m.end()) return {};
  if (const auto* s = it->second.as_string()) return *s;
  return {};
}

std::uint64_t uint_of(const value::map& m, std::string_view key) {
  auto it = m.find(key);
  if (it == m.end()) return 0;
  if (const auto* u = it->second.as_uint()) return *u;
  return 0;
}

bool bool_of(const value::map& m, std::string_view key) {
  auto it = m.find(key);
  if (it == m.end()) return false;
  if (const auto* b = it->second.as_bool()) return *b;
  return false;
}

const value::array* array_of(const value::map& m, std::string_view key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : it->second.as_array();
}

const value::map* map_of(const value::map& m, std::string_view key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : it->second.as_map();
}

// ---- wire <-> core --------------------------------------------------------------------------------

namespace {

core::work_kind to_core(messages::work_kind k) {
  switch (k) {
    case messages::work_kind::job: return core::work_kind::job;
    case messages::work_kind::service: return core::work_kind::service;
    case messages::work_kind::ap: return core::work_kind::ap;
    case messages::work_kind::reservation: return core::work_kind::reservation;
  }
  return core::work_kind::job;
}

core::work_state to_core(messages::work_state s) {
  switch (s) {
    case messages::work_state::waiting: return core::work_state::waiting;
    case messages::work_state::running: return core::work_state::running;
    case messages::work_state::completing: return core::work_state::completing;
    case messages::work_state::completed: return core::work_state::completed;
  }
  return core::work_state::waiting;
}

core::process_state to_core(messages::process_state s) {
  switch (s) {
    case messages::process_state::starting: return core::process_state::starting;
    case messages::process_state::initializing: return core::process_state::initializing;
    case messages::process_state::running: return core::process_state::running;
    case messages::process_state::ended: return core::process_state::ended;
  }
  return core::process_state::starting;
}

// Wire counts are uint64; the core keeps int / int64. Clamp instead of wrapping on absurd values.
int clamp_int(std::uint64_t v) { return v > 1'000'000'000u ? 1'000'000'000 : static_cast<int>(v); }
std::int64_t clamp_i64(std::uint64_t v) {
  constexpr std::uint64_t top = static_cast<std::uint64_t>(INT64_MAX);
  return static_cast<std::int64_t>(v > top ? top : v);
}

}  // namespace

core::work_item to_core(const messages::work_item& w) {
  core::work_item c;
  c.id = core::job_id{w.id};
  c.kind = to_core(w.kind);
  c.user = core::user_id{w.user};
  c.class_name = w.class_name;
  c.memory_mb = w.memory_mb;
  c.submitted_ms = clamp_i64(w.submitted_ms);
  c.state = to_core(w.state);
  c.max_processes = clamp_int(w.max_processes);
  c.threads = w.threads == 0 ? 1 : clamp_int(w.threads);
  c.items_total = clamp_i64(w.items_total);
  c.items_done = clamp_i64(w.items_done);
  c.item_ms = clamp_i64(w.item_ms);
  c.service_id = w.service_id.value_or(0);
  c.hosts = w.hosts;
  for (const auto& p : w.processes) {
    core::process_report r;
    r.id = core::share_id{p.id};
    r.node = core::machine_id{p.node};
    r.state = to_core(p.state);
    r.init_ms = clamp_i64(p.init_ms);
    r.run_ms = clamp_i64(p.run_ms);
    r.node_memory_mb = p.node_memory_mb.value_or(0);
    c.processes.push_back(std::move(r));
  }
  return c;
}

value to_value(const messages::work_item& w) {
  // The work item codec of messages/ is the one definition of the item's map; reuse it rather than
  // writing a second, drifting one.
  auto v = messages::decode_value("rm.internal", messages::encode_work_item(w));
  return v ? std::move(v.value()) : value{};
}

messages::result<messages::work_item> work_item_of(std::string_view topic, const value& v) {
  return messages::decode_work_item(topic, messages::encode_value(v));
}

value to_value(const core::job_plan& p) {
  value::map m;
  m["id"] = value{p.id.str()};
  m["status"] = value{core::to_string(p.status)};
  m["reason"] = value{p.reason_text};
  m["memory_mb"] = value{p.memory_mb_per_process};
  m["given"] = value{static_cast<std::int64_t>(p.given)};
  m["order"] = value{static_cast<std::int64_t>(p.order)};
  m["user"] = value{p.user.str()};
  m["class"] = value{p.class_name};
  m["demand"] = value{p.demand};
  m["fair_share"] = value{p.fair_share};
  value::array shares;
  for (const auto& s : p.shares) {
    value::map sm;
    sm["id"] = value{s.id.str()};
    sm["node"] = value{s.node.str()};
    sm["quanta"] = value{static_cast<std::int64_t>(s.quanta)};
    sm["status"] = value{core::to_string(s.status)};
    shares.emplace_back(std::move(sm));
  }
  m["shares"] = value{std::move(shares)};
  return value{std::move(m)};
}

messages::job_schedule job_schedule_of(const value& v) {
  messages::job_schedule j;
  const auto* m = v.as_map();
  if (m == nullptr) return j;
  j.id = str_of(*m, "id");
  j.status = messages::parse_job_status(str_of(*m, "status")).value_or(messages::job_status::pending);
  j.reason = str_of(*m, "reason");
  j.memory_mb = uint_of(*m, "memory_mb");
  j.user = str_of(*m, "user");
  j.class_name = str_of(*m, "class");
  j.given = uint_of(*m, "given");
  j.demand = uint_of(*m, "demand");
  j.fair_share = uint_of(*m, "fair_share");
  if (const auto* shares = array_of(*m, "shares")) {
    for (const auto& s : *shares) {
      const auto* sm = s.as_map();
      if (sm == nullptr) continue;
      messages::share_schedule sh;
      sh.id = str_of(*sm, "id");
      sh.node = str_of(*sm, "node");
      sh.quanta = uint_of(*sm, "quanta");
      sh.status = messages::parse_share_status(str_of(*sm, "status")).value_or(messages::share_status::running);
      j.shares.push_back(std::move(sh));
    }
  }
  return j;
}

value to_value(const std::map<core::user_id, std::uint64_t>& mb) {
  value::map m;
  for (const auto& [u, n] : mb) m[u.str()] = value{n};
  return value{std::move(m)};
}

std::map<std::string, std::uint64_t> user_mb_of(const value* v) {
  std::map<std::string, std::uint64_t> out;
  if (v == nullptr || v->as_map() == nullptr) return out;
  for (const auto& [u, n] : *v->as_map())
    if (const auto* x = n.as_uint()) out[u] = *x;
  return out;
}

}  // namespace rmbus::actors
