// libFuzzer target over every decoder of messages/. The libFuzzer build needs -DRMBUS_FUZZ=ON and clang (see
// tests/messages/CMakeLists.txt and docs/protocol.md for how to run it); every build replays the committed
// seeds through it as the ctest entry fuzz_decoders_replay.
//
// Each input is fed to every decode_* function under the default limits and under tight ones. The fuzzer
// (with ASan and UBSan) looks for crashes, leaks and undefined behaviour; on top of that, whatever a decoder
// accepts must re-encode to bytes that decode again to the same bytes (encode is a fixed point after one
// decode), or the target traps.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "messages/admin.hpp"
#include "messages/envelope.hpp"
#include "messages/heartbeat.hpp"
#include "messages/rm_cycle.hpp"
#include "messages/detail/peek.hpp"
#include "messages/rm_event.hpp"
#include "messages/rm_ha.hpp"
#include "messages/rm_marks.hpp"
#include "messages/rm_nodes.hpp"
#include "messages/rm_schedule_changes.hpp"
#include "messages/rm_state.hpp"
#include "messages/value.hpp"
#include "messages/workmap.hpp"
#include "messages/workmap_delta.hpp"

using namespace rmbus::messages;

namespace {

template <class Decode>
void check_fixed_point(std::string_view body, const decode_limits& limits, Decode decode) {
  envelope env;
  auto first = decode("fuzz", body, limits, &env);
  if (!first) {
    // Every error must render; touching it also lets ASan see any dangling string.
    if (first.error().message().empty()) __builtin_trap();
    return;
  }
  const auto once = encode(env, first.value());
  envelope env2;
  auto second = decode("fuzz", once, decode_limits{}, &env2);
  if (!second) __builtin_trap();
  if (encode(env2, second.value()) != once) __builtin_trap();
}

void run_all(std::string_view body, const decode_limits& limits) {
  (void)decode_envelope("fuzz", body, limits);
  check_fixed_point(body, limits, decode_heartbeat);
  check_fixed_point(body, limits, decode_workmap);
  (void)is_workmap_delta(body);
  check_fixed_point(body, limits, decode_workmap_delta);
  check_fixed_point(body, limits, decode_rm_schedule_changes);
  check_fixed_point(body, limits, decode_rm_state);
  check_fixed_point(body, limits, decode_rm_nodes);
  check_fixed_point(body, limits, decode_rm_cycle);
  check_fixed_point(body, limits, decode_rm_event);
  check_fixed_point(body, limits, decode_rm_ha);
  check_fixed_point(body, limits, decode_rm_marks);
  // What the actors peek at before (or instead of) a full decode: the epoch of a foreign schedule, a map's
  // sender, the head of a keyed array.
  (void)detail::peek_top_level_uint(body, "epoch");
  (void)detail::peek_top_level_str(body, "src");
  (void)detail::peek_first_top_level_key(body, "full", "work");
  (void)detail::peek_last_top_level_value(body, "work");
  (void)detail::peek_array_head(body);
  (void)detail::peek_keyed_map(body, "id");
  check_fixed_point(body, limits, decode_admin_request);
  check_fixed_point(body, limits, decode_admin_reply);
  if (auto v = decode_value("fuzz", body, limits)) {
    (void)to_text(v.value());
    const auto once = encode_value(v.value());
    auto again = decode_value("fuzz", once);
    if (!again || encode_value(again.value()) != once) __builtin_trap();
  }
  if (auto w = decode_work_item("fuzz", body, limits)) {
    const auto once = encode_work_item(w.value());
    auto again = decode_work_item("fuzz", once);
    if (!again || encode_work_item(again.value()) != once) __builtin_trap();
  }
  if (auto req = decode_admin_request("fuzz", body, limits)) (void)whatif_work(req.value(), limits);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body{reinterpret_cast<const char*>(data), size};
  run_all(body, decode_limits{});
  decode_limits tight;
  tight.max_body_bytes = 4096;
  tight.max_string_bytes = 16;
  tight.max_array_len = 8;
  tight.max_map_len = 24;
  tight.max_depth = 4;
  run_all(body, tight);
  return 0;
}
