#include "messages/internal/payload.hpp"

#include "messages/internal/topics.hpp"
#include "messages/topics.hpp"

namespace rmbus::messages {

namespace {

namespace it = internal_topics;

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Decodes `body` with `decode` and wraps the result into the payload.
template <class T>
result<payload> as_payload(result<T> r) {
  if (!r) return r.error();
  return payload{std::move(r.value())};
}

}  // namespace

std::string encode_payload(const envelope& env, const payload& p) {
  return std::visit([&](const auto& msg) { return encode(env, msg); }, p);
}

result<payload> decode_payload(std::string_view topic, std::string_view body, const decode_limits& limits,
                               envelope* env_out) {
  if (starts_with(topic, it::node_prefix)) return as_payload(decode_node_ops(topic, body, limits, env_out));
  if (starts_with(topic, it::work_prefix)) return as_payload(decode_work_slice(topic, body, limits, env_out));
  if (starts_with(topic, it::query_prefix)) return as_payload(decode_admin_query(topic, body, limits, env_out));
  if (topic == it::node_changes) return as_payload(decode_node_changes(topic, body, limits, env_out));
  if (topic == it::node_snapshot) return as_payload(decode_node_snapshot(topic, body, limits, env_out));
  if (topic == it::node_sync) return as_payload(decode_node_sync_request(topic, body, limits, env_out));
  if (topic == it::round) return as_payload(decode_round_start(topic, body, limits, env_out));
  if (topic == it::plan) return as_payload(decode_pool_plan(topic, body, limits, env_out));
  if (topic == it::done) return as_payload(decode_round_done(topic, body, limits, env_out));
  if (topic == it::answer) return as_payload(decode_admin_answer(topic, body, limits, env_out));
  if (topic == it::vary) return as_payload(decode_vary_request(topic, body, limits, env_out));
  if (topic == it::marks_query) return as_payload(decode_admin_query(topic, body, limits, env_out));
  if (topic == it::recovered) return as_payload(decode_recovered_nodes(topic, body, limits, env_out));
  if (topic == it::reconfigure) return as_payload(decode_reconfigure_request(topic, body, limits, env_out));
  if (topic == it::forgotten) return as_payload(decode_machines_forgotten(topic, body, limits, env_out));
  if (topic == it::seed_request) return as_payload(decode_seed_request(topic, body, limits, env_out));
  if (topic == it::work_sync) return as_payload(decode_work_sync_request(topic, body, limits, env_out));
  if (topic == it::plan_sync) return as_payload(decode_plan_sync_request(topic, body, limits, env_out));
  if (starts_with(topic, it::seed_prefix)) return as_payload(decode_rm_state(topic, body, limits, env_out));
  if (topic == topics::rm_state) return as_payload(decode_rm_state(topic, body, limits, env_out));
  if (topic == topics::rm_cycle) return as_payload(decode_rm_cycle(topic, body, limits, env_out));
  if (topic == topics::rm_nodes) return as_payload(decode_rm_nodes(topic, body, limits, env_out));
  if (topic == topics::rm_events) return as_payload(decode_rm_event(topic, body, limits, env_out));
  if (topic == topics::rm_ha) return as_payload(decode_rm_ha(topic, body, limits, env_out));
  if (topic == topics::rm_marks) return as_payload(decode_rm_marks(topic, body, limits, env_out));
  if (topic == topics::rm_schedule_changes)
    return as_payload(decode_rm_schedule_changes(topic, body, limits, env_out));
  return decode_error{std::string{topic}, {}, "no message is known on this topic"};
}

}  // namespace rmbus::messages
