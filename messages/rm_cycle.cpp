#include "messages/rm_cycle.hpp"

#include "messages/detail/codec.hpp"

namespace rmbus::messages {

namespace {

constexpr std::array<std::string_view, 13> keys{"pool",    "cycle",       "jobs",       "nodes",
                                                "given",   "preempted",   "evicted",    "how_much_us",
                                                "what_of_us", "preempt_us", "defrag_us", "total_us",
                                                "held"};
constexpr std::size_t held_key = 12;

// The eleven counters in wire order (keys[1..11]), so encoding and decoding walk one table; `held` (optional)
// comes last.
template <class M>
auto counters(M& m) {
  return std::array{&m.cycle,       &m.jobs,       &m.nodes,      &m.given,     &m.preempted, &m.evicted,
                    &m.how_much_us, &m.what_of_us, &m.preempt_us, &m.defrag_us, &m.total_us};
}

}  // namespace

std::string encode(const envelope& env, const rm_cycle& msg) {
  msgpack::sbuffer buf;
  detail::packer pk{buf};
  detail::pack_envelope_head(pk, env, keys.size() - (msg.held.empty() ? 1 : 0));
  detail::pack_kv_str(pk, "pool", msg.pool);
  const auto values = counters(msg);
  for (std::size_t i = 0; i < values.size(); ++i) detail::pack_kv_uint(pk, keys[i + 1], *values[i]);
  if (!msg.held.empty()) detail::pack_kv_str(pk, keys[held_key], msg.held);
  return detail::to_string(buf);
}

result<rm_cycle> decode_rm_cycle(std::string_view topic, std::string_view body, const decode_limits& limits,
                                 envelope* env_out) {
  return detail::guarded<rm_cycle>(topic, body, limits, env_out, false, [](const msgpack::object& root) {
    rm_cycle msg;
    const auto values = counters(msg);
    detail::read_fields(root, detail::path{}, keys, 0xfff,
                        [&](std::size_t k, const msgpack::object& v, const detail::path& f) {
                          if (k == 0)
                            detail::read(v, f, msg.pool);
                          else if (k == held_key)
                            detail::read(v, f, msg.held);
                          else
                            detail::read(v, f, *values[k - 1]);
                        });
    return msg;
  });
}

}  // namespace rmbus::messages
