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
// `Out` is a std::string or a rewrite (below): anything with append(std::string_view).
template <class Out>
void append_part(Out& out, std::string_view text) {
  out.append(text);
}
template <class Out, class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
void append_part(Out& out, Int n) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out.append(std::string_view(digits, static_cast<std::size_t>(end - digits)));
}
template <class Out>
void append_part(Out& out, memory_size size) {
  if (size.mb % 1024 == 0) {
    append_part(out, size.mb / 1024);
    out.append(" GB");
  } else {
    append_part(out, size.mb);
    out.append(" MB");
  }
}

// Writes a text over the one in `text` piece by piece, comparing while the two agree and writing only from
// the first piece that differs: a text written again unchanged is read, never written.
class rewrite {
 public:
  explicit rewrite(std::string& text) : text_(text) {}
  void append(std::string_view piece) {
    if (!diverged_) {
      if (text_.compare(at_, piece.size(), piece) == 0) {  // at_ never passes the end: no throw
        at_ += piece.size();
        return;
      }
      text_.resize(at_);
      diverged_ = true;
    }
    text_.append(piece);
  }
  // Ends the text; whether it changed.
  bool finish() {
    if (diverged_) return true;
    if (at_ == text_.size()) return false;
    text_.resize(at_);  // the new text is a beginning of the old one
    return true;
  }

 private:
  std::string& text_;
  std::size_t at_ = 0;
  bool diverged_ = false;
};
}  // namespace detail

// out = the parts (texts and integers) one after the other, in out's own buffer.
template <class... Parts>
void write_text(std::string& out, const Parts&... parts) {
  out.clear();
  (detail::append_part(out, parts), ...);
}

// j.reason = code, and j.reason_text = the parts; j.reason_version moves only when the text changed. Most
// rounds give most waiting jobs the text they had: it is compared as it is built, and written only from
// where it differs.
template <class... Parts>
void set_reason(job_rec& j, reason_code code, const Parts&... parts) {
  j.reason = code;
  j.reason_key = 0;
  detail::rewrite text(j.reason_text);
  (detail::append_part(text, parts), ...);
  if (text.finish()) ++j.reason_version;
}

// The same for a fixed text (What Of's, preemption's and defragmentation's), given as a string literal. The
// literal's address is kept in j.reason_key (an address has bit 63 clear, How Much's keys set it): while no
// other text was written since, an equal key says the text standing is this one, and the 20,000 waiting jobs
// of a round at 50,000 nodes are not read past their record's second cache line.
template <std::size_t N>
void set_reason_text(job_rec& j, reason_code code, const char (&literal)[N]) {
  j.reason = code;
  const auto key = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(literal));
  if (j.reason_key == key) return;
  j.reason_key = key;
  const std::string_view text(literal, N - 1);
  if (j.reason_text == text) return;
  j.reason_text.assign(text);
  ++j.reason_version;
}

}  // namespace rmbus::core
