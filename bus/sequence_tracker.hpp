#pragma once
// Sequence accounting per (src, topic): decides, for each received envelope, whether it continues its
// stream, skips over lost messages (a gap), or shows that the publisher restarted.
//
// Rules (docs/bus.md):
//  - The first message seen from a (src, topic) starts its stream, whatever its seq. A subscriber that joins
//    late, or a publisher whose first messages were dropped before its connection was up, is not charged a
//    gap for what came before: gaps are counted only between messages seen.
//  - seq == last + 1: in order.
//  - seq >  last + 1: a gap; `missing` grows by the seq numbers skipped (seq - last - 1).
//  - seq <= last: the publisher restarted (a publisher never repeats or lowers a seq within one run). The
//    stream starts afresh at this seq; it is counted as a restart, never as disorder or a gap.
// The table is bounded (untrusted senders choose src and topic): past max_streams new streams are not
// tracked; each such message is counted as untracked.
//
// Thread-safety: none; owned by one subscriber thread.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace rmbus::bus {

enum class seq_verdict { first, in_order, gap, restart, untracked };

class sequence_tracker {
 public:
  explicit sequence_tracker(std::size_t max_streams = 65536) : max_streams_(max_streams) {}

  // REQUIRES: seq >= 1 (the subscriber rejects seq 0 as a bad message before it gets here).
  // `missing` is set to the number of seq numbers skipped when the verdict is gap, else 0.
  seq_verdict observe(std::string_view src, std::string_view topic, std::uint64_t seq,
                      std::uint64_t& missing);

  std::size_t streams() const { return last_.size(); }

 private:
  using key = std::pair<std::string, std::string>;  // (src, topic)
  // Orders stored keys and (src, topic) string_view pairs alike, so a lookup allocates nothing.
  struct key_less {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return std::pair<std::string_view, std::string_view>{a.first, a.second} <
             std::pair<std::string_view, std::string_view>{b.first, b.second};
    }
  };
  std::size_t max_streams_;
  std::map<key, std::uint64_t, key_less> last_;
};

}  // namespace rmbus::bus
