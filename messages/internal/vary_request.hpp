#pragma once
// rm.internal.vary — admin -> eviction: vary nodes off (no new work, fair-share work evicted) or back on;
// added: drain them (no new work, nothing evicted) or undrain them.
// Eviction answers on rm.internal.answer (admin_answer with `nodes` done and `unknown` names).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

struct vary_request {
  std::uint64_t qid = 0;
  bool off = true;  // wire key "op": "vary_off" | "vary_on", or with `drain` "drain" | "undrain"
  std::vector<std::string> nodes;
  bool drain = false;  // the drain mark rather than vary-off: `off` sets it, !off clears it

  friend bool operator==(const vary_request&, const vary_request&) = default;
};

std::string encode(const envelope& env, const vary_request& msg);
result<vary_request> decode_vary_request(std::string_view topic, std::string_view body,
                                         const decode_limits& limits = {}, envelope* env_out = nullptr);

}  // namespace rmbus::messages
