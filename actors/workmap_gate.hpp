#pragma once
// Which orchestrator.workmap the differencing actor takes, without CAF so that it can be tested alone.
//
// The work map is the orchestrator's complete view, published again and again; taking a wrong one would
// retire or recover work that is not so. Rules, by the map's envelope (src, seq, ts_ms):
//   - The first src heard owns the work map. A map from another src is refused (an rm.events
//     `workmap_refused` event), unless `accept_any` is configured, or the owner has been silent for
//     `takeover_ms`: then the new src takes over (an `orchestrator_takeover` event), as a restarted
//     orchestrator with a new name must be able to.
//   - From the owner: seq equal to the last taken one is the same map again (a duplicate): ignored. A lower
//     seq with an older ts_ms is a map that arrived late or out of order: ignored, with a `workmap_ignored`
//     event. A lower seq with a ts_ms not older is the orchestrator restarted (its seq starts again at 1):
//     taken.
// With `accept_any`, the same duplicate / order rules apply per src.
//
// Not thread-safe; one owner (the differencing actor).

#include <cstdint>
#include <map>
#include <string>

namespace rmbus::actors {

class workmap_gate {
 public:
  enum class verdict {
    take,        // a new map from the owner (or a restarted owner)
    takeover,    // a new owner, after the previous one fell silent
    duplicate,   // the map taken last, again
    stale,       // older than the map taken last (late or out of order)
    foreign,     // another src while the owner is alive
  };

  workmap_gate(bool accept_any, std::int64_t takeover_ms) : accept_any_(accept_any), takeover_ms_(takeover_ms) {}

  // Judges a map; taking it (take, takeover) makes it the last one. `now_ms` is the receiver's clock.
  verdict judge(const std::string& src, std::uint64_t seq, std::uint64_t ts_ms, std::int64_t now_ms);

  const std::string& owner() const { return owner_; }
  // The last map taken from `src` (seq 0 when none).
  std::uint64_t last_seq(const std::string& src) const;

 private:
  struct last_map {
    std::uint64_t seq = 0;
    std::uint64_t ts_ms = 0;
    std::int64_t heard_ms = 0;  // receiver's clock when the last map (of any verdict) came from it
  };

  bool accept_any_;
  std::int64_t takeover_ms_;
  std::string owner_;
  std::map<std::string, last_map> last_;  // owner only, or every src with accept_any (bounded: see judge)
};

const char* to_string(workmap_gate::verdict v);

}  // namespace rmbus::actors
