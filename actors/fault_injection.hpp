#pragma once
// Faults injected on purpose, so that the fault-injection tests (docs/reliability.md) can show what the RM
// does when a pool scheduler fails: `rmbus --inject-fault throw:POOL:CYCLES` makes the scheduler of POOL
// throw in the rounds named; `hang:POOL:CYCLES` makes it stall there for three round timeouts. CYCLES is one
// round (`5`), a range (`3-8`) or a list of both (`3,5,9-11`): the rounds are those of the RM, so every
// scheduler of the pool (each replacement too) fails in them. A test option only: off unless given, and
// parsed strictly. No CAF in this header.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rmbus::actors {

struct injected_fault {
  enum class kind { throw_exception, hang };
  kind what = kind::throw_exception;
  std::string pool;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> cycles;  // inclusive ranges, as given

  bool applies_to(std::uint64_t cycle) const {
    for (const auto& [first, last] : cycles)
      if (cycle >= first && cycle <= last) return true;
    return false;
  }
  bool operator==(const injected_fault&) const = default;
};

// Parses "throw:POOL:CYCLES" or "hang:POOL:CYCLES" (every cycle >= 1, a range's first <= its last, at most
// 64 parts). Throws std::invalid_argument naming what is wrong.
injected_fault parse_injected_fault(std::string_view spec);

}  // namespace rmbus::actors
