#pragma once
// Sequence accounting per (src, topic): decides, for each received envelope, whether it continues its
// stream, skips over lost messages (a gap), shows that the publisher restarted, or is a copy (or a late
// arrival) of a message that must not be handed on again.
//
// Copies exist because a client may connect to several forwarders (docs/bus.md, "Several forwarders"): a
// publisher connected to two sends every message through both, and a subscriber connected to both receives
// it twice, the two copies interleaved in any order with the stream's other messages. The stream handed on
// stays in seq order, each message at most once.
//
// Rules (docs/bus.md), per stream, with `last` the highest seq handed on and `newest_ts` the latest ts_ms
// seen on the stream. With one path (paths::one, a single forwarder) only the first three hold and any
// seq <= last is a restart, as before copies existed. With several paths (paths::several):
//  - The first message seen from a (src, topic) starts its stream, whatever its seq. A subscriber that joins
//    late, or a publisher whose first messages were dropped before its connection was up, is not charged a
//    gap for what came before: gaps are counted only between messages seen.
//  - seq == last + 1: in order.
//  - seq >  last + 1: a gap; `missing` grows by the seq numbers skipped (seq - last - 1).
//  - seq <= last with a ts_ms later than `newest_ts`: the publisher restarted (a running publisher never
//    repeats or lowers a seq, and a copy or a late message was sent before the newest one, so its ts_ms is
//    not later). The stream starts afresh at this seq; a restart, never disorder or a gap. Until the next
//    restart, a message stamped before the restart (a copy from the previous run still in flight through a
//    slower forwarder) is late, whatever its seq.
//  - seq <= last otherwise: a **duplicate** when the seq is one of the last `window` seqs and was seen
//    (handed on, or seen late) already; else **late** (it arrived after a higher seq of its stream, e.g.
//    through the other forwarder after this one dropped it, or is a copy older than the window). Neither is
//    handed on; neither is a gap or a restart.
// The table is bounded (untrusted senders choose src and topic): past max_streams new streams are not
// tracked; each such message is counted as untracked, and its copies are still recognised, as long as they
// arrive while a fixed table of recent fingerprints (65,536 x 8 bytes, allocated at the first untracked
// message) still holds the first copy.
//
// Thread-safety: none; owned by one subscriber thread.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bus/keyed_hash.hpp"

namespace rmbus::bus {

enum class seq_verdict {
  first,      // hand on: a new stream
  in_order,   // hand on
  gap,        // hand on; `missing` says how many seqs were skipped
  restart,    // hand on; the stream starts afresh at this seq
  untracked,  // hand on; beyond the stream table, not seq-checked
  duplicate,  // drop: a copy of a message already seen
  late,       // drop: older than a message already handed on, not known as a copy
};

// Whether a message with this verdict goes on to the receiver.
inline bool handed_on(seq_verdict v) { return v != seq_verdict::duplicate && v != seq_verdict::late; }

class sequence_tracker {
 public:
  static constexpr std::uint64_t window = 64;  // seqs below the newest remembered per stream (one word)
  static constexpr std::size_t fingerprint_slots = 65536;

  // Whether a message can arrive more than once: the subscriber is connected to several forwarders. With one
  // path (ZeroMQ keeps a connection's order) there are no copies and the rules are those before copies
  // existed: seq <= last is a restart, whatever its ts_ms, and nothing is a duplicate or late.
  enum class paths { one, several };

  explicit sequence_tracker(std::size_t max_streams = 65536, paths p = paths::one)
      : max_streams_(max_streams), several_(p == paths::several) {}

  // REQUIRES: seq >= 1 (the subscriber rejects seq 0 as a bad message before it gets here).
  // `missing` is set to the number of seq numbers skipped when the verdict is gap, else 0.
  seq_verdict observe(std::string_view src, std::string_view topic, std::uint64_t seq, std::uint64_t ts_ms,
                      std::uint64_t& missing);

  std::size_t streams() const { return streams_.size(); }

 private:
  struct stream {
    std::uint64_t last = 0;        // highest seq handed on
    std::uint64_t newest_ts = 0;   // latest ts_ms seen on the stream
    std::uint64_t run_start_ts = 0;  // ts_ms of the restart that began this run; 0 before any restart
    std::uint64_t seen = 0;        // bit i: seq last - i was seen
  };
  using key = std::pair<std::string, std::string>;  // (src, topic)
  // Stored keys and (src, topic) string_view pairs hash and compare alike, so a lookup allocates nothing. The
  // hash is keyed (bus/keyed_hash.hpp): senders choose src, and must not be able to fill one bucket.
  using view = std::pair<std::string_view, std::string_view>;
  struct stream_hash {
    using is_transparent = void;
    keyed_hash bytes;
    template <class K>
    std::size_t operator()(const K& k) const {
      return bytes(k.first) ^ (bytes(k.second) * 0x9e3779b97f4a7c15ull);
    }
  };
  struct stream_equal {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return view{a.first, a.second} == view{b.first, b.second};
    }
  };
  seq_verdict observe_untracked(std::string_view src, std::string_view topic, std::uint64_t seq,
                                std::uint64_t ts_ms);

  std::size_t max_streams_;
  bool several_;
  std::unordered_map<key, stream, stream_hash, stream_equal> streams_;
  std::vector<std::uint64_t> fingerprints_;  // empty until the first untracked message
};

}  // namespace rmbus::bus
