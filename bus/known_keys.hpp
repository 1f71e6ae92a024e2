#pragma once
// Which keys (node names) the bus subscriber has handed on recently, so that over its in-flight bound it can
// still let through a key it hears regularly (a real node's heartbeat) while it sheds first-heard keys (a
// storm of invented names, each heard once). Memory is fixed: a table of `slots` entries (a power of two),
// each a 64-bit key hash and when it was last handed on. A slot is taken over only from a key not heard
// within the window, so a storm of distinct keys cannot push out a key heard every heartbeat interval; a key
// that finds its slot held by another live key is simply not known (the bound applies to it as before).
//
// Time is an input (nanoseconds of any monotonic clock), so tests drive it. Thread-safety: none; one owner
// (the subscriber's thread).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rmbus::bus {

class known_keys {
 public:
  // Throws std::invalid_argument unless slots is a power of two >= 1.
  explicit known_keys(std::size_t slots);

  // `hash` was handed on at now_ns: it takes (or refreshes) its slot unless another key heard within
  // window_ns holds it.
  void heard(std::uint64_t hash, std::int64_t now_ns, std::int64_t window_ns);
  // True when `hash` holds its slot and was handed on within window_ns before now_ns.
  bool known(std::uint64_t hash, std::int64_t now_ns, std::int64_t window_ns) const;

 private:
  struct slot {
    std::uint64_t hash = 0;
    std::int64_t heard_ns = 0;
    bool used = false;
  };
  std::vector<slot> table_;
};

}  // namespace rmbus::bus
