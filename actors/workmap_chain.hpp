#pragma once
// The chain of work-map deltas (docs/protocol.md 4.2.1), without CAF so that it can be tested alone.
//
// Differencing holds the orchestrator's map as items by id. A full map replaces them and starts a chain at
// its envelope seq; a delta of the same src whose base_seq is the chain's last seq is applied to them and
// moves the chain on to its own seq. Anything else cannot be applied safely:
//   - gap:      base_seq is not the last map applied (a map between was lost, or the base is one this RM never
//               had: it started or was reconfigured after it, or the src took over): the RM waits for a full map
//               and says so once (an rm.events `workmap_resync`), ignoring the deltas that follow until then.
//   - refused:  the delta contradicts the map it names (an added id already held, a changed or removed id not
//               held, or more items than max_items): nothing of it is applied, and the chain is broken as for a
//               gap, since the orchestrator's map and ours now differ (an rm.events `workmap_delta_refused`).
// A delta is applied whole or not at all: checked against the items first, then applied.
//
// Not thread-safe; one owner (the differencing actor).

#include <cstdint>
#include <map>
#include <string>

#include "messages/workmap.hpp"
#include "messages/workmap_delta.hpp"

namespace rmbus::actors {

class workmap_chain {
 public:
  using item_map = std::map<std::string, messages::work_item>;

  enum class outcome {
    applied,  // the items are now at the delta's seq
    gap,      // first delta that could not follow: report it, wait for a full map
    waiting,  // a further delta while waiting for a full map (already reported): ignored
    refused,  // contradicts its base: nothing applied; report it, wait for a full map
  };
  struct verdict {
    outcome what = outcome::applied;
    std::string reason;  // gap, refused: for a person (and the event's detail)
  };

  explicit workmap_chain(std::size_t max_items) : max_items_(max_items) {}

  // A full map of `src` with envelope seq `seq` was taken: the chain starts again from it.
  void full_map(const std::string& src, std::uint64_t seq) {
    src_ = src;
    seq_ = seq;
    broken_ = false;
  }
  // Forget the chain (a reconfiguration: the next map must be full).
  void reset() {
    src_.clear();
    seq_ = 0;
    broken_ = true;
  }
  void set_max_items(std::size_t n) { max_items_ = n; }
  // A delta of the chain's src could not be read: its change is lost, so later deltas wait for a full map.
  void break_chain() { broken_ = true; }

  // Applies the delta of envelope (src, seq) to `items`, or leaves them untouched and says why not.
  verdict apply(const std::string& src, std::uint64_t seq, const messages::workmap_delta& d, item_map& items);

  // Whether deltas are being ignored until the next full map.
  bool waiting_for_full_map() const { return broken_; }
  // The last map applied (full or delta): seq 0 when none.
  std::uint64_t last_seq() const { return seq_; }
  const std::string& last_src() const { return src_; }

 private:
  std::size_t max_items_;
  std::string src_;
  std::uint64_t seq_ = 0;
  bool broken_ = true;  // no full map yet
};

const char* to_string(workmap_chain::outcome o);

}  // namespace rmbus::actors
