#pragma once
// A pool's work map kept between rounds by a reader of rm.internal.work.<pool> (the pool's scheduler, and
// accounting), brought up to date by the numbered slices (messages/internal/work_slice.hpp), without CAF so
// that it can be tested alone.
//
// A full slice replaces the map and starts the chain at its seq; a change slice from the same sender whose
// base_seq is the chain's last seq is applied (its items added or replaced, its removed ids erased) and moves
// the chain on. Anything else is a gap: a slice was lost between processes, or the reader is fresh (a
// replacement, a new process) and never had the base. The map is then left as it is, the reader asks for a
// full slice (rm.internal.worksync), and every change slice is a gap until a full one comes.
//
// The scheduler holds the map as core items (slice_chain): only the items a slice carries are converted, so
// a round's input costs what changed. Accounting holds the wire items (wire_slice_chain).
//
// Not thread-safe; one owner.

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "core/work.hpp"
#include "messages/internal/work_slice.hpp"

namespace rmbus::actors {

enum class slice_outcome {
  applied,  // the map is now at the slice's seq
  gap,      // cannot apply: ask for a full slice
};
struct slice_verdict {
  slice_outcome what = slice_outcome::applied;
  std::string reason;  // gap: for a person (the log)
};

// Map: id -> item; Convert: turns a wire item into a (key, item) pair of the map.
template <class Map, class Convert>
class basic_slice_chain {
 public:
  using outcome = slice_outcome;
  using verdict = slice_verdict;

  // The slice `s` sent by `src`.
  verdict take(const std::string& src, const messages::work_slice& s) {
    if (s.full()) {
      work_.clear();
      for (const auto& w : s.work) {
        auto kv = Convert{}(w);
        work_.insert_or_assign(work_.end(), std::move(kv.first), std::move(kv.second));
      }
      src_ = src;
      seq_ = s.seq;
      in_step_ = true;
      return {};
    }
    if (!in_step_) return {outcome::gap, "no full slice since the last gap or since start"};
    if (src != src_ || s.base_seq != seq_) {
      in_step_ = false;
      if (src != src_)
        return {outcome::gap, "a change from " + src + ", the last full slice came from " + src_};
      return {outcome::gap, "a change on slice " + std::to_string(s.base_seq) +
                                ", the last slice applied is " + std::to_string(seq_)};
    }
    // As core::apply (removed ids erased, an id not held ignored; items stored, replacing any with the same
    // id), in place: the map is not copied.
    for (const auto& id : s.removed) work_.erase(typename Map::key_type{id});
    for (const auto& w : s.work) {
      auto kv = Convert{}(w);
      work_.insert_or_assign(std::move(kv.first), std::move(kv.second));
    }
    seq_ = s.seq;
    return {};
  }
  // Forget the chain: the next change slice is a gap (the map stays until a full slice replaces it).
  void reset() { in_step_ = false; }

  const Map& work() const { return work_; }
  // Whether change slices are being applied (false before the first full slice and after a gap).
  bool in_step() const { return in_step_; }
  std::uint64_t last_seq() const { return seq_; }

 private:
  Map work_;
  std::string src_;
  std::uint64_t seq_ = 0;
  bool in_step_ = false;
};

struct to_core_item {
  std::pair<core::job_id, core::work_item> operator()(const messages::work_item& w) const;
};
struct as_wire_item {
  std::pair<std::string, messages::work_item> operator()(const messages::work_item& w) const {
    return {w.id, w};
  }
};

using slice_chain = basic_slice_chain<core::work_map, to_core_item>;
using wire_slice_chain = basic_slice_chain<std::map<std::string, messages::work_item>, as_wire_item>;

}  // namespace rmbus::actors
