#include "bus/sequence_tracker.hpp"

namespace rmbus::bus {

seq_verdict sequence_tracker::observe(std::string_view src, std::string_view topic, std::uint64_t seq,
                                      std::uint64_t& missing) {
  missing = 0;
  const std::pair<std::string_view, std::string_view> wanted{src, topic};
  auto it = last_.lower_bound(wanted);
  const bool found = it != last_.end() && it->first.first == src && it->first.second == topic;
  if (!found) {
    if (last_.size() >= max_streams_) return seq_verdict::untracked;
    last_.emplace_hint(it, key{std::string{src}, std::string{topic}}, seq);
    return seq_verdict::first;
  }
  std::uint64_t& last = it->second;
  seq_verdict verdict;
  if (seq == last + 1) {
    verdict = seq_verdict::in_order;
  } else if (seq > last) {
    missing = seq - last - 1;
    verdict = seq_verdict::gap;
  } else {
    verdict = seq_verdict::restart;
  }
  last = seq;
  return verdict;
}

}  // namespace rmbus::bus
