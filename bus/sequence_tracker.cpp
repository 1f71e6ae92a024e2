#include "bus/sequence_tracker.hpp"

namespace rmbus::bus {

namespace {

// FNV-1a over the bytes of a stream's identity and one message's (seq, ts_ms): the fingerprint of a message
// on a stream beyond the table. Never 0, so 0 marks an empty slot.
std::uint64_t fingerprint(std::string_view src, std::string_view topic, std::uint64_t seq, std::uint64_t ts_ms) {
  std::uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](unsigned char c) {
    h ^= c;
    h *= 1099511628211ull;
  };
  for (const char c : src) mix(static_cast<unsigned char>(c));
  mix(0);  // ("a", "bc") and ("ab", "c") differ
  for (const char c : topic) mix(static_cast<unsigned char>(c));
  mix(0);
  for (int i = 0; i < 8; ++i) mix(static_cast<unsigned char>(seq >> (8 * i)));
  for (int i = 0; i < 8; ++i) mix(static_cast<unsigned char>(ts_ms >> (8 * i)));
  return h == 0 ? 1 : h;
}

}  // namespace

seq_verdict sequence_tracker::observe(std::string_view src, std::string_view topic, std::uint64_t seq,
                                      std::uint64_t ts_ms, std::uint64_t& missing) {
  missing = 0;
  auto it = streams_.find(view{src, topic});
  if (it == streams_.end()) {
    if (streams_.size() >= max_streams_)
      return several_ ? observe_untracked(src, topic, seq, ts_ms) : seq_verdict::untracked;
    streams_.emplace(key{std::string{src}, std::string{topic}}, stream{seq, ts_ms, 0, 1});
    return seq_verdict::first;
  }
  stream& s = it->second;
  if (seq > s.last) {
    // Stamped before the restart that began this run: a copy from the run before, whatever its seq.
    if (ts_ms < s.run_start_ts) return seq_verdict::late;
    const std::uint64_t step = seq - s.last;
    s.seen = (step >= window ? 0 : s.seen << step) | 1;
    missing = step - 1;
    s.last = seq;
    if (ts_ms > s.newest_ts) s.newest_ts = ts_ms;
    return missing == 0 ? seq_verdict::in_order : seq_verdict::gap;
  }
  if (!several_ || ts_ms > s.newest_ts) {
    // Lower or equal seq, sent after everything seen: only a new run of the publisher does that.
    s = stream{seq, ts_ms, several_ ? ts_ms : 0, 1};
    return seq_verdict::restart;
  }
  if (ts_ms < s.run_start_ts) return seq_verdict::late;  // from the run before the restart
  const std::uint64_t age = s.last - seq;
  if (age >= window) return seq_verdict::late;  // a copy or a late message beyond what is remembered
  const std::uint64_t bit = std::uint64_t{1} << age;
  if ((s.seen & bit) != 0) return seq_verdict::duplicate;
  s.seen |= bit;  // its own copy, arriving later still, is then a duplicate
  return seq_verdict::late;
}

seq_verdict sequence_tracker::observe_untracked(std::string_view src, std::string_view topic, std::uint64_t seq,
                                                std::uint64_t ts_ms) {
  if (fingerprints_.empty()) fingerprints_.assign(fingerprint_slots, 0);
  const std::uint64_t fp = fingerprint(src, topic, seq, ts_ms);
  std::uint64_t& slot = fingerprints_[fp & (fingerprint_slots - 1)];
  if (slot == fp) return seq_verdict::duplicate;
  slot = fp;
  return seq_verdict::untracked;
}

}  // namespace rmbus::bus
