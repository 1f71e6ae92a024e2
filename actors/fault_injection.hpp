#pragma once
// Faults injected on purpose, so that the fault-injection tests (docs/reliability.md) can show what the RM
// does when a pool scheduler fails: `rmbus --inject-fault throw:POOL:CYCLE` makes the scheduler of POOL throw
// in round CYCLE; `hang:POOL:CYCLE` makes it stall there for three round timeouts. A test option only: off
// unless given, and parsed strictly. No CAF in this header.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rmbus::actors {

struct injected_fault {
  enum class kind { throw_exception, hang };
  kind what = kind::throw_exception;
  std::string pool;
  std::uint64_t cycle = 0;

  bool operator==(const injected_fault&) const = default;
};

// Parses "throw:POOL:CYCLE" or "hang:POOL:CYCLE" (CYCLE >= 1). Throws std::invalid_argument naming what is
// wrong.
injected_fault parse_injected_fault(std::string_view spec);

}  // namespace rmbus::actors
