#pragma once
// Every ducc.rm.* key rmbus accepts in a ducc.properties: the ones any released DUCC's shipped properties
// file carries (1.x ducc.properties, 2.x and 3.0 default.ducc.properties) and the ones DUCC's RM reads
// although no shipped file sets them. Each is either used (it configures rmbus) or ignored (it configures
// DUCC's JMS plumbing or its Java classes, or a feature DUCC itself no longer uses), with a line saying what
// rmbus does with it; docs/configuration.md carries the same table.
//
// A ducc.rm.* key outside this list is refused: it can only be a typo, and a typo must not silently fall back
// to a default. The refusal names the closest key of the list when one is close.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmbus::config::detail {

struct ducc_rm_key {
  std::string_view name;
  bool used = false;      // false: accepted and ignored (logged at debug level)
  std::string_view what;  // what rmbus does with it, for the log and the docs
};

// Sorted by name.
const std::vector<ducc_rm_key>& ducc_rm_keys();

// The entry for `name`, or nullptr when `name` is not a ducc.rm.* key rmbus knows.
const ducc_rm_key* find_ducc_rm_key(std::string_view name);

// The known key closest to a misspelt `name` (see closest_name.hpp), if one is close.
std::optional<std::string> closest_ducc_rm_key(std::string_view name);

}  // namespace rmbus::config::detail
