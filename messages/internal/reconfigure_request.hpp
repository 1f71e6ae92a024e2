#pragma once
// rm.internal.reconfigure — admin or SIGHUP -> every rmbus process: reload the configuration from its
// source. It carries nothing but its envelope.

#include <string>
#include <string_view>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

struct reconfigure_request {
  friend bool operator==(const reconfigure_request&, const reconfigure_request&) = default;
};

std::string encode(const envelope& env, const reconfigure_request& msg);
result<reconfigure_request> decode_reconfigure_request(std::string_view topic, std::string_view body,
                                                       const decode_limits& limits = {}, envelope* env_out = nullptr);

}  // namespace rmbus::messages
