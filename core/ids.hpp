#pragma once
// Small strong id types, so that a share id can never be passed where a job id is expected.
// Ids are ordered by their text: every tie-break that falls back to an id is therefore deterministic.

#include <compare>
#include <functional>
#include <ostream>
#include <string>
#include <utility>

namespace rmbus::core {

template <class Tag>
class strong_id {
 public:
  strong_id() = default;
  explicit strong_id(std::string value) : value_(std::move(value)) {}
  const std::string& str() const { return value_; }
  bool empty() const { return value_.empty(); }
  auto operator<=>(const strong_id&) const = default;
  bool operator==(const strong_id&) const = default;

 private:
  std::string value_;
};

template <class Tag>
std::ostream& operator<<(std::ostream& os, const strong_id<Tag>& id) {
  return os << id.str();
}

using job_id = strong_id<struct job_id_tag>;          // work id from the orchestrator's map
using share_id = strong_id<struct share_id_tag>;      // one nshare (= one process); the RM assigns it
using machine_id = strong_id<struct machine_id_tag>;  // node name as the agent reports it
using user_id = strong_id<struct user_id_tag>;

}  // namespace rmbus::core

template <class Tag>
struct std::hash<rmbus::core::strong_id<Tag>> {
  std::size_t operator()(const rmbus::core::strong_id<Tag>& id) const noexcept {
    return std::hash<std::string>{}(id.str());
  }
};
