#pragma once
// rm.internal.done — publication -> work-map differencing: round `cycle` is published (or timed out), the
// next may start.

#include <cstdint>
#include <string>
#include <string_view>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

struct round_done {
  std::uint64_t cycle = 0;

  friend bool operator==(const round_done&, const round_done&) = default;
};

std::string encode(const envelope& env, const round_done& msg);
result<round_done> decode_round_done(std::string_view topic, std::string_view body, const decode_limits& limits = {},
                                     envelope* env_out = nullptr);

}  // namespace rmbus::messages
