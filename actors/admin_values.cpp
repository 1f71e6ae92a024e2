#include "actors/admin_values.hpp"

#include <utility>

namespace rmbus::actors {

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

value to_value(const core::end_estimate& e) {
  value::map m;
  m["at_ms"] = value{e.at_ms};
  m["in_ms"] = value{e.in_ms};
  m["items_left"] = value{e.items_left};
  m["processes"] = value{static_cast<std::int64_t>(e.processes)};
  m["threads"] = value{static_cast<std::int64_t>(e.threads)};
  m["item_ms"] = value{e.item_ms};
  m["basis"] = value{e.basis};
  return value{std::move(m)};
}

value to_value(const core::start_estimate& e) {
  value::map m;
  m["first_at_ms"] = value{e.first_at_ms};
  m["first_in_ms"] = value{e.first_in_ms};
  // No time for all of them when nothing known frees enough: the keys are left out, not zero.
  if (e.all_at_ms) m["all_at_ms"] = value{*e.all_at_ms};
  if (e.all_in_ms) m["all_in_ms"] = value{*e.all_in_ms};
  m["processes"] = value{static_cast<std::int64_t>(e.processes)};
  m["free_quanta_now"] = value{static_cast<std::int64_t>(e.free_quanta_now)};
  m["preemptions"] = value{static_cast<std::int64_t>(e.preemptions)};
  if (e.reclaims > 0) m["reclaims"] = value{static_cast<std::int64_t>(e.reclaims)};
  value::array jobs;
  for (const auto& j : e.jobs_ending) jobs.emplace_back(j.str());
  m["jobs_ending"] = value{std::move(jobs)};
  m["basis"] = value{e.basis};
  return value{std::move(m)};
}

value machines_of(const core::pool_view& v) {
  value::array out;
  for (const auto& mv : v.machines) {
    value::map m;
    m["node"] = value{mv.name.str()};
    m["nodepool"] = value{mv.nodepool};
    m["state"] = value{core::to_string(mv.state)};
    m["quiesced"] = value{mv.quiesced};
    m["drained"] = value{mv.drained};
    m["memory_mb"] = value{mv.memory_mb};
    m["quanta"] = value{static_cast<std::int64_t>(mv.quanta)};
    m["free_quanta"] = value{static_cast<std::int64_t>(mv.free_quanta)};
    value::array shares;
    for (const auto& h : mv.shares) {
      value::map sm;
      sm["job"] = value{h.job.str()};
      sm["share"] = value{h.share.id.str()};
      sm["quanta"] = value{static_cast<std::int64_t>(h.share.quanta)};
      sm["status"] = value{core::to_string(h.share.status)};
      shares.emplace_back(std::move(sm));
    }
    m["shares"] = value{std::move(shares)};
    out.emplace_back(std::move(m));
  }
  return value{std::move(out)};
}

}  // namespace rmbus::actors
