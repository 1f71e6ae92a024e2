// libFuzzer target over every decoder of messages/internal/ (the typed actor-to-actor messages, which travel
// the bus when roles are split over processes). The libFuzzer build needs -DRMBUS_FUZZ=ON and clang
// (tools/fuzz.sh runs it); every build replays the committed seeds as fuzz_internal_decoders_replay.
//
// An input's first byte picks the topic (internal_fuzz_topics.hpp), the rest is the body, decoded by
// decode_payload as the router decodes it, under the default limits and under tight ones. Beyond what ASan and
// UBSan catch, whatever a decoder accepts must re-encode to bytes that decode again to the same bytes, or the
// target traps.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "messages/internal/payload.hpp"
#include "tests/messages/internal_fuzz_topics.hpp"

using namespace rmbus::messages;

namespace {

void check_fixed_point(std::string_view topic, std::string_view body, const decode_limits& limits) {
  envelope env;
  auto first = decode_payload(topic, body, limits, &env);
  if (!first) {
    // Every error must render; touching it also lets ASan see any dangling string.
    if (first.error().message().empty()) __builtin_trap();
    return;
  }
  const auto once = encode_payload(env, first.value());
  envelope env2;
  auto second = decode_payload(topic, once, decode_limits{}, &env2);
  if (!second) __builtin_trap();
  if (encode_payload(env2, second.value()) != once) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto topic = fuzz::internal_topics[data[0] % fuzz::internal_topics.size()];
  const std::string_view body{reinterpret_cast<const char*>(data) + 1, size - 1};
  check_fixed_point(topic, body, decode_limits{});
  decode_limits tight;
  tight.max_body_bytes = 4096;
  tight.max_string_bytes = 16;
  tight.max_array_len = 8;
  tight.max_map_len = 24;
  tight.max_depth = 4;
  check_fixed_point(topic, body, tight);
  return 0;
}
