#pragma once
// Reader of DUCC's class file (`ducc.classes`) and user registry (`ducc.users`): the lexical rules of
// shared/ducc-rm.md section 4.1, exactly. Lines whose first non-blank character is `#` are comments (there
// are no trailing comments: a `#` after a value is a token like any other, and the error says so); every line
// end acts as `;`; tokens split on whitespace and `{ } = , ;`, commas count as whitespace, `=` between key and
// value is optional; a value is every token up to `;` or `}` joined by single spaces. A duplicate key within a
// stanza is an error.
//
// Stanzas: `Nodepool <name> { ... }`, `Class <name> [<parent-class>] { ... }`, `User <name> { ... }`. The
// reader checks keys and the type of each value; cross-references are checked by resolve_site().

#include <string>
#include <string_view>
#include <vector>

#include "config/detail/declarations.hpp"

namespace rmbus::config::detail {

// A `nodefile` key, read once every pool is known (imports of another pool's nodefile are skipped).
struct nodefile_ref {
  std::size_t pool = 0;  // index into site_decls::nodepools
  located<std::string> file;
};

// Appends the stanzas of `text` (named `file_name` in errors) to `site`.
void parse_ducc_classes(std::string_view text, const std::string& file_name, site_decls& site,
                        std::vector<nodefile_ref>& nodefiles, error_list& errors);

}  // namespace rmbus::config::detail
