#include "actors/fault_injection.hpp"

#include <charconv>
#include <stdexcept>

namespace rmbus::actors {

injected_fault parse_injected_fault(std::string_view spec) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("--inject-fault '" + std::string{spec} + "': " + why +
                                 " (expected throw:POOL:CYCLE or hang:POOL:CYCLE)");
  };
  const auto first = spec.find(':');
  const auto last = spec.rfind(':');
  if (first == std::string_view::npos || first == last) throw bad("three fields separated by ':'");
  injected_fault f;
  const auto kind = spec.substr(0, first);
  if (kind == "throw") f.what = injected_fault::kind::throw_exception;
  else if (kind == "hang") f.what = injected_fault::kind::hang;
  else throw bad("unknown fault '" + std::string{kind} + "'");
  f.pool = std::string{spec.substr(first + 1, last - first - 1)};
  if (f.pool.empty()) throw bad("no pool");
  const auto cycle = spec.substr(last + 1);
  const auto [end, ec] = std::from_chars(cycle.data(), cycle.data() + cycle.size(), f.cycle);
  if (ec != std::errc{} || end != cycle.data() + cycle.size() || f.cycle == 0) throw bad("the cycle must be a whole number >= 1");
  return f;
}

}  // namespace rmbus::actors
