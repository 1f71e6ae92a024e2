#pragma once
// What every actor of one process is given at spawn: the router it sends through, the process's instance
// name (the prefix of every `src` it stamps, so echoes of its own messages can be told apart on the bus),
// and the resolved configuration. Included only by actors/*.cpp (CAF headers are heavy).

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>

#include "actors/detail/atoms.hpp"
#include "actors/fault_injection.hpp"
#include "actors/ha_gate.hpp"
#include "actors/internal.hpp"
#include "bus/in_flight_bound.hpp"
#include "config/rm_config.hpp"
#include "messages/envelope.hpp"
#include "messages/internal/payload.hpp"

namespace rmbus::actors {

using config_ptr = std::shared_ptr<const config::rm_config>;

struct actor_env {
  caf::actor router;
  std::string instance;  // unique per process run, e.g. "rmbus.4711.kx3a9z"
  config_ptr cfg;
  std::optional<injected_fault> fault;  // rmbus --inject-fault (tests only)
  // Heartbeats the bus subscriber handed on and the intake has not yet taken ([limits]
  // max_heartbeats_queued); the intake leaves one per heartbeat it takes. None: no bound (tests, or a
  // process without the intake).
  std::shared_ptr<bus::in_flight_bound> heartbeats_in_flight{};
  // With [ha] enabled in a process that runs the head roles: whether it is the active RM (actors/ha_gate.hpp).
  // None: HA off, or a process of schedulers only, which serves whichever head is active.
  std::shared_ptr<ha_gate> ha{};

  // The `src` an actor stamps: "<instance>:<role>", so per-(src, topic) sequence numbers stay one stream.
  std::string src(std::string_view role) const { return instance + ":" + std::string{role}; }
  // Whether `src` is one of this process's own actors.
  bool is_local(std::string_view src) const {
    return src.size() > instance.size() && src.compare(0, instance.size(), instance) == 0 && src[instance.size()] == ':';
  }
};

// How recently a node's heartbeat must have been handed to the intake for the next one to pass the in-flight
// bound when it is full: four heartbeat intervals, so a node heartbeating on time stays known through a
// storm, while invented names (each heard once) are shed first.
inline std::chrono::nanoseconds known_node_window(const config::runtime_settings& rt) {
  return std::chrono::milliseconds(4 * rt.heartbeat_interval_ms);
}

inline messages::decode_limits limits_of(const config::rm_config& cfg) {
  messages::decode_limits l;
  l.max_body_bytes = cfg.runtime.limits.max_body_bytes;
  l.max_string_bytes = cfg.runtime.limits.max_string_bytes;
  l.max_array_len = cfg.runtime.limits.max_array_len;
  l.max_map_len = cfg.runtime.limits.max_map_len;
  l.max_depth = cfg.runtime.limits.max_depth;
  return l;
}

// Sends one typed message through the router (local delivery, and the bus where its topic must go), stamped
// by `stamper`. The payload is built once and shared read-only by every local receiver; it is not a const
// object, so that a receiver left its sole holder may take from it (publication's plans).
template <class Self, class T>
void route(Self* self, const caf::actor& router, envelope_stamper& stamper, std::string topic, T msg) {
  auto env = stamper.next(topic);
  self->send(router, atoms::route::value,
             messages::routed_message{std::move(topic), std::move(env),
                                      std::make_shared<messages::payload>(std::move(msg))});
}

}  // namespace rmbus::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(rmbus::actors::config_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(rmbus::messages::routed_message)
