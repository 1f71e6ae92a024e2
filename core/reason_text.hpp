#pragma once
// Writing a job's reason text in place.
//
// How Much gives every waiting job a text with the numbers behind its count, every round: some 10,000
// texts at 10,000 nodes. Built by string concatenation each cost several allocations; written into the
// job's own string, whose capacity stays from round to round, they cost none once the text has been long
// enough before.

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/cluster_model.hpp"
#include "core/schedule_plan.hpp"

namespace rmbus::core {

// A memory size in people's units as a part of a text: "48 GB", or "1536 MB" when it is not a whole
// number of GB. A value rather than a string, so that a reason written every round allocates nothing.
struct memory_size {
  std::uint64_t mb = 0;
};

namespace detail {
inline void append_part(std::string& out, std::string_view text) { out.append(text); }
template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
void append_part(std::string& out, Int n) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out.append(digits, end);
}
inline void append_part(std::string& out, memory_size size) {
  if (size.mb % 1024 == 0) {
    append_part(out, size.mb / 1024);
    out.append(" GB");
  } else {
    append_part(out, size.mb);
    out.append(" MB");
  }
}
}  // namespace detail

// out = the parts (texts and integers) one after the other, in out's own buffer.
template <class... Parts>
void write_text(std::string& out, const Parts&... parts) {
  out.clear();
  (detail::append_part(out, parts), ...);
}

// j.reason = code, and j.reason_text = the parts; j.reason_version moves only when the text changed. The new
// text is written after the old one in the same buffer and compared there: most rounds write most texts
// again unchanged, and the buffer is at hand.
template <class... Parts>
void set_reason(job_rec& j, reason_code code, const Parts&... parts) {
  j.reason = code;
  auto& text = j.reason_text;
  const std::size_t before = text.size();
  (detail::append_part(text, parts), ...);
  if (std::string_view(text).substr(before) == std::string_view(text).substr(0, before)) {
    text.resize(before);
    return;
  }
  text.erase(0, before);
  ++j.reason_version;
}

// The same for a text that is one piece (the fixed texts of What Of, preemption and defragmentation):
// compared before it is written, so that an unchanged text is not written at all.
inline void set_reason_text(job_rec& j, reason_code code, std::string_view text) {
  j.reason = code;
  if (j.reason_text == text) return;
  j.reason_text.assign(text);
  ++j.reason_version;
}

}  // namespace rmbus::core
