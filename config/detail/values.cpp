#include "config/detail/values.hpp"

#include <charconv>
#include <limits>

namespace rmbus::config::detail {

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

std::string_view trim(std::string_view text) {
  const char* ws = " \t\r\n\f\v";
  auto first = text.find_first_not_of(ws);
  if (first == std::string_view::npos) return {};
  auto last = text.find_last_not_of(ws);
  return text.substr(first, last - first + 1);
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::int64_t value = 0;
  const char* begin = text.data();
  if (*begin == '+') ++begin;  // Java's Integer.parseInt accepts a leading '+'
  auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || begin == end) return std::nullopt;
  return value;
}

std::optional<bool> parse_boolean(std::string_view text) {
  auto l = lower(text);
  if (l == "true") return true;
  if (l == "false") return false;
  return std::nullopt;
}

std::optional<core::policy> parse_policy(std::string_view text) {
  auto l = lower(text);
  if (l == "fair_share") return core::policy::fair_share;
  if (l == "fixed_share") return core::policy::fixed_share;
  if (l == "reserve") return core::policy::reserve;
  return std::nullopt;
}

std::string_view policy_name(core::policy p) {
  switch (p) {
    case core::policy::fair_share: return "FAIR_SHARE";
    case core::policy::fixed_share: return "FIXED_SHARE";
    case core::policy::reserve: return "RESERVE";
  }
  return "?";
}

std::optional<core::preemption_policy> parse_preemption_policy(std::string_view text) {
  auto l = lower(text);
  if (l == "ducc") return core::preemption_policy::ducc;
  if (l == "sparing") return core::preemption_policy::sparing;
  return std::nullopt;
}

std::string_view preemption_policy_name(core::preemption_policy p) {
  switch (p) {
    case core::preemption_policy::ducc: return "ducc";
    case core::preemption_policy::sparing: return "sparing";
  }
  return "?";
}

std::optional<std::uint64_t> parse_size_mb(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return std::nullopt;
  std::uint64_t number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + digits, number);
  if (ec != std::errc{} || end != text.data() + digits) return std::nullopt;
  auto unit = lower(text.substr(digits));
  std::uint64_t factor = 0;
  if (unit == "m" || unit == "mb") factor = 1;
  else if (unit == "g" || unit == "gb") factor = 1024;
  else if (unit == "t" || unit == "tb") factor = 1024 * 1024;
  else return std::nullopt;
  if (number > std::numeric_limits<std::uint64_t>::max() / factor) return std::nullopt;
  return number * factor;
}

std::string size_text(std::uint64_t mb) {
  if (mb != 0 && mb % (1024 * 1024) == 0) return std::to_string(mb / (1024 * 1024)) + "T";
  if (mb != 0 && mb % 1024 == 0) return std::to_string(mb / 1024) + "G";
  return std::to_string(mb) + "M";
}

}  // namespace rmbus::config::detail
