#pragma once
// A reader of Java properties files (ducc.properties), tolerant as java.util.Properties is: `key = value`,
// `key: value` or `key value`; `#` and `!` comment lines; a line ending in an odd number of backslashes
// continues on the next one; backslash escapes (\t \n \r \f, and \x for any other x). Later keys replace
// earlier ones. ${name} in a value is replaced by the property `name` when asked (DUCC's own files use it).

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace rmbus::config::detail {

struct property {
  std::string value;
  int line = 0;  // where the key starts
};

using property_map = std::map<std::string, property>;

property_map parse_java_properties(std::string_view text);

// The value with ${name} references replaced (up to 16 levels deep); unknown references are left as they are.
std::string expand_property(const property_map& props, const std::string& value);

}  // namespace rmbus::config::detail
