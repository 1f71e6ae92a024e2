#include "tools/admin/clock_text.hpp"

#include <cctype>
#include <ctime>

namespace rmbus::tools::admin {

namespace {

std::tm local_of(std::int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm out{};
  localtime_r(&t, &out);
  return out;
}

}  // namespace

std::string clock_time(std::int64_t at_ms, std::int64_t now_ms) {
  const auto at = local_of(at_ms);
  const auto now = local_of(now_ms);
  const bool same_day = at.tm_year == now.tm_year && at.tm_yday == now.tm_yday;
  char buf[32];
  const auto n = std::strftime(buf, sizeof buf, same_day ? "%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &at);
  return std::string(buf, n);
}

std::string with_clock_times(std::string_view text, std::int64_t now_ms) {
  std::string out;
  out.reserve(text.size());
  constexpr std::string_view lead = "at ";
  std::size_t i = 0;
  while (i < text.size()) {
    const auto at = text.find(lead, i);
    if (at == std::string_view::npos) break;
    // "at " then digits then " ms": a time since the epoch (more than 10 digits: not a duration).
    std::size_t d = at + lead.size();
    while (d < text.size() && std::isdigit(static_cast<unsigned char>(text[d]))) ++d;
    const auto digits = d - (at + lead.size());
    const bool time = digits >= 11 && digits <= 15 && text.substr(d, 3) == " ms" &&
                      (d + 3 == text.size() || !std::isalnum(static_cast<unsigned char>(text[d + 3])));
    if (!time) {
      out.append(text.substr(i, at + lead.size() - i));
      i = at + lead.size();
      continue;
    }
    out.append(text.substr(i, at + lead.size() - i));
    out += clock_time(std::stoll(std::string{text.substr(at + lead.size(), digits)}), now_ms);
    i = d + 3;
  }
  out.append(text.substr(i));
  return out;
}

}  // namespace rmbus::tools::admin
