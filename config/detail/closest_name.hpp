#pragma once
// "Did you mean ...?" for a misspelt configuration key: the known name nearest to what was written, by edit
// distance, offered only when it is close enough to be the likely intent. A suggestion that is far off would
// send a reader the wrong way, so none is better than a poor one.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmbus::config::detail {

// The optimal string alignment distance: insertions, deletions, substitutions and swaps of two neighbouring
// characters each cost 1 ("quantom" -> "quantum" is 1, "wieght" -> "weight" is 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `name`, if it is within 3 edits and the edits are at most a third of `name`'s
// length (a 5-letter word at most 1 edit away, a 2-letter word never). Ties go to the earlier candidate, so
// the answer never depends on anything but the list's order.
std::optional<std::string> closest_name(std::string_view name,
                                        const std::vector<std::string_view>& candidates);

}  // namespace rmbus::config::detail
