#pragma once
// Which bus messages rmbus-top reads, and how each becomes a change to the monitor_model.
//
// The monitor subscribes to the four topics the RM publishes for monitors (monitored_topics()) rather than
// to all of `rm.` and dropping `rm.internal.*` itself: the forwarder then filters on the publishing side, so
// the RM's private actor traffic (work maps per pool, plans) never crosses the network to a monitor on
// another host, and never enters the monitor's sequence accounting. A ZeroMQ subscription is a prefix, so a
// topic that merely starts with one of ours ("rm.statex") still arrives; decode_monitored ignores it.
//
// Decoding is separate from folding so that the executable decodes on the subscriber's thread without holding
// the lock the screen needs, and then folds under the lock. A body that does not decode becomes the decode
// error, which fold() lists and counts as a bad message: the monitor shows what it could not read.
//
// Thread-safety: plain functions and values.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"
#include "messages/rm_schedule_changes.hpp"
#include "tools/top/monitor_model.hpp"

namespace rmbus::top {

struct ignored_topic {
  std::string topic;
};

using monitored_message = std::variant<ignored_topic, messages::rm_state, messages::rm_nodes, messages::rm_cycle,
                                       messages::rm_event, messages::decode_error, messages::rm_schedule_changes>;

// rm.state, rm.nodes, rm.cycle, rm.events: the subscription prefixes. With `schedule_changes` (rmbus-top and
// rmbus-web --schedule-changes), rm.schedule.changes instead of rm.state (docs/protocol.md 4.3.1).
std::vector<std::string> monitored_topics(bool schedule_changes = false);

monitored_message decode_monitored(std::string_view topic, std::string_view body,
                                   const messages::decode_limits& limits = {});

// `src` is the envelope's sender and `sent_at_ms` its ts_ms (the subscriber has checked the envelope already);
// `epoch` the envelope's HA epoch (absent with HA off).
void fold(monitor_model& model, monitored_message message, millis now_ms, const std::string& src,
          std::optional<std::uint64_t> sent_at_ms = std::nullopt, std::optional<std::uint64_t> epoch = std::nullopt);

}  // namespace rmbus::top
