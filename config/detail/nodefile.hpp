#pragma once
// DUCC node files (shared/ducc-rm.md section 4.2). One host per line (several whitespace-separated hosts on a
// line are each taken); `#` starts a comment anywhere on a line; `import <file>` pulls in another list,
// resolved relative to the directory of the file naming it, and is skipped when that file is some pool's own
// nodefile (it will be read for that pool); lines starting with `domain` are ignored, as DUCC's parser does.
// A file whose name ends in `.regex` holds one regular expression instead (comment lines allowed), matched
// against a node's name, short name or address.
//
// Import cycles and unreadable files are errors naming the file and line of the import.

#include <filesystem>
#include <set>

#include "config/detail/declarations.hpp"

namespace rmbus::config::detail {

// Appends the hosts (or the pattern) of `path` to `pool`. `named_at` is where the file was named (for "cannot
// be read"). `pool_files` holds the weakly-canonical paths of every pool's nodefile.
void read_nodefile(const std::filesystem::path& path, const source_loc& named_at,
                   const std::set<std::filesystem::path>& pool_files, nodepool_decl& pool, error_list& errors);

}  // namespace rmbus::config::detail
