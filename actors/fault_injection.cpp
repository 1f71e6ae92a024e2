#include "actors/fault_injection.hpp"

#include <charconv>
#include <stdexcept>

namespace rmbus::actors {

namespace {

constexpr std::size_t max_parts = 64;

bool read_cycle(std::string_view text, std::uint64_t& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && out >= 1;
}

}  // namespace

injected_fault parse_injected_fault(std::string_view spec) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("--inject-fault '" + std::string{spec} + "': " + why +
                                 " (expected throw:POOL:CYCLES or hang:POOL:CYCLES, CYCLES like 5, 3-8 or 3,5,9-11)");
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
  auto rest = spec.substr(last + 1);
  while (true) {
    const auto comma = rest.find(',');
    const auto part = rest.substr(0, comma);
    if (f.cycles.size() == max_parts) throw bad("more than " + std::to_string(max_parts) + " rounds or ranges");
    const auto dash = part.find('-');
    std::uint64_t from = 0, to = 0;
    if (dash == std::string_view::npos) {
      if (!read_cycle(part, from)) throw bad("'" + std::string{part} + "' is not a round number >= 1");
      to = from;
    } else if (!read_cycle(part.substr(0, dash), from) || !read_cycle(part.substr(dash + 1), to) || from > to) {
      throw bad("'" + std::string{part} + "' is not a range FIRST-LAST of rounds >= 1 with FIRST <= LAST");
    }
    f.cycles.emplace_back(from, to);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return f;
}

}  // namespace rmbus::actors
