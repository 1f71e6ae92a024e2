#pragma once
// Decides which repeats of a keyed message the forwarder sheds. A key may send `burst` messages back to back,
// then one per `min_gap`: with burst 1, a message whose key was forwarded less than min_gap ago is a repeat
// (shed); with burst 2 (what rmbus uses) a key that was quiet may send one extra right after its periodic
// one (an agent reporting a change at once, a second sender of the same name) before the gap applies. The
// forwarder uses it for one topic (rmbus: a node's heartbeats, so that one node flooding the bus cannot crowd
// the other nodes' heartbeats out of the forwarder's queue toward a slower subscriber; docs/bus.md "Shedding
// repeats"). It is the generic cell rate algorithm: each key keeps a theoretical arrival time `tat`; a message
// at `now` passes when now >= tat - (burst - 1) * min_gap, and then tat = max(tat, now) + min_gap.
//
// Memory is fixed whatever the number of distinct keys: a table of `slots` entries (a power of two), each a
// 64-bit key hash and its tat. A key maps to one slot. The rules that keep it safe:
//   - only a slot holding the very same hash can shed, so a storm of distinct keys fills slots but never
//     sheds anyone else's message;
//   - a slot holding a different key (a collision) forwards the message. It hands the slot over only when its
//     occupant is stale (now >= its tat: its full burst is back, so forgetting it changes nothing), so a
//     flooding key keeps its slot and its repeats stay shed.
// A key that collides with a busy slot is thus forwarded every time: memory bounds what can be shed, never
// what is delivered.
//
// Time is an input (nanoseconds of any monotonic clock), so tests drive it. Thread-safety: none; one owner.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace rmbus::bus {

// FNV-1a, 64 bits: cheap, deterministic (tests can reason about slots). Not keyed: a publisher that could
// craft a colliding name could as well send the other node's own name, so a keyed hash would protect nothing.
std::uint64_t key_hash(std::string_view key);

class repeat_filter {
 public:
  // Throws std::invalid_argument unless slots is a power of two >= 1, min_gap >= 0 (0: nothing is ever shed)
  // and 1 <= burst <= 64.
  repeat_filter(std::size_t slots, std::chrono::nanoseconds min_gap, int burst = 1);

  // true: forward (and account it when the slot is this key's or free); false: shed, a repeat.
  bool admit(std::uint64_t hash, std::int64_t now_ns);

  void set_min_gap(std::chrono::nanoseconds min_gap) { min_gap_ns_ = min_gap.count(); }
  std::chrono::nanoseconds min_gap() const { return std::chrono::nanoseconds{min_gap_ns_}; }
  std::size_t slots() const { return table_.size(); }
  // Slots in use (for tests and logs).
  std::size_t used() const;

 private:
  struct slot {
    std::uint64_t hash = 0;
    std::int64_t tat_ns = 0;  // theoretical arrival time: with burst 1, when the key may next send
    bool used = false;
  };
  std::vector<slot> table_;
  std::int64_t min_gap_ns_;
  std::int64_t burst_;
};

}  // namespace rmbus::bus
