#include "tools/top/monitored_message.hpp"

#include <type_traits>

#include "messages/topics.hpp"

namespace rmbus::top {

namespace {

template <class T>
monitored_message decoded(messages::result<T> r) {
  if (r) return std::move(r).value();
  return r.error();
}

}  // namespace

std::vector<std::string> monitored_topics(bool schedule_changes) {
  namespace t = messages::topics;
  return {std::string{schedule_changes ? t::rm_schedule_changes : t::rm_state}, std::string{t::rm_nodes},
          std::string{t::rm_cycle}, std::string{t::rm_events}};
}

monitored_message decode_monitored(std::string_view topic, std::string_view body,
                                   const messages::decode_limits& limits) {
  namespace t = messages::topics;
  if (topic == t::rm_state) return decoded(messages::decode_rm_state(topic, body, limits));
  if (topic == t::rm_nodes) return decoded(messages::decode_rm_nodes(topic, body, limits));
  if (topic == t::rm_cycle) return decoded(messages::decode_rm_cycle(topic, body, limits));
  if (topic == t::rm_events) return decoded(messages::decode_rm_event(topic, body, limits));
  if (topic == t::rm_schedule_changes) return decoded(messages::decode_rm_schedule_changes(topic, body, limits));
  return ignored_topic{std::string{topic}};
}

void fold(monitor_model& model, monitored_message message, millis now_ms, const std::string& src,
          std::optional<std::uint64_t> sent_at_ms, std::optional<std::uint64_t> epoch) {
  std::visit(
      [&](auto&& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, messages::rm_state>) {
          model.on_state(std::move(m), now_ms, src, sent_at_ms, epoch);
        } else if constexpr (std::is_same_v<T, messages::rm_schedule_changes>) {
          model.on_schedule_changes(m, now_ms, src, sent_at_ms, epoch);
        } else if constexpr (std::is_same_v<T, messages::rm_nodes>) {
          model.on_nodes(std::move(m), now_ms);
        } else if constexpr (std::is_same_v<T, messages::rm_cycle>) {
          model.on_cycle(std::move(m), now_ms);
        } else if constexpr (std::is_same_v<T, messages::rm_event>) {
          model.on_event(m, now_ms);
        } else if constexpr (std::is_same_v<T, messages::decode_error>) {
          model.on_bad_message(m.message() + (src.empty() ? "" : " (from " + src + ")"), now_ms, false);
        }
      },
      std::move(message));
}

}  // namespace rmbus::top
