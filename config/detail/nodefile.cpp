#include "config/detail/nodefile.hpp"

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "config/detail/text_checks.hpp"
#include "config/detail/values.hpp"

namespace rmbus::config::detail {

namespace {

constexpr int max_import_depth = 16;  // deeper than any real site; bounds a runaway chain

std::filesystem::path canonical_or_same(const std::filesystem::path& path) {
  std::error_code ec;
  auto canonical = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : canonical;
}

bool read_lines(const std::filesystem::path& path, std::vector<std::string>& lines) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return true;
}

void read_regex_file(const std::filesystem::path& path, const std::vector<std::string>& lines, nodepool_decl& pool,
                     error_list& errors) {
  std::optional<located<std::string>> pattern;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto text = trim(lines[i]);
    if (text.empty() || text.front() == '#') continue;
    source_loc loc{path.string(), static_cast<int>(i + 1)};
    if (pattern) {
      errors.add(loc, "a .regex nodefile holds exactly one regular expression (the first is at line " +
                          std::to_string(pattern->loc.line) + ")");
      continue;
    }
    pattern = located<std::string>{std::string(text), loc};
  }
  if (!pattern) {
    errors.add(path.string(), 0, "the .regex nodefile holds no regular expression");
    return;
  }
  pool.patterns.push_back(*pattern);
}

void read_host_file(const std::filesystem::path& path, const source_loc& named_at,
                    const std::set<std::filesystem::path>& pool_files, std::vector<std::filesystem::path>& chain,
                    nodepool_decl& pool, error_list& errors) {
  auto canonical = canonical_or_same(path);
  if (std::find(chain.begin(), chain.end(), canonical) != chain.end()) {
    errors.add(named_at, "import cycle: '" + path.string() + "' is already being read");
    return;
  }
  if (static_cast<int>(chain.size()) >= max_import_depth) {
    errors.add(named_at, "imports nested deeper than " + std::to_string(max_import_depth) + " files");
    return;
  }
  std::vector<std::string> lines;
  if (!read_lines(path, lines)) {
    errors.add(named_at, "cannot read nodefile '" + path.string() + "'");
    return;
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!valid_utf8(lines[i])) {
      errors.add({path.string(), static_cast<int>(i + 1)}, "line is not valid UTF-8 (configuration files are UTF-8 text)");
      lines[i].clear();  // its hosts would be names no heartbeat can carry
    }
  }
  if (path.extension() == ".regex") {
    read_regex_file(path, lines, pool, errors);
    return;
  }
  chain.push_back(canonical);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view text = lines[i];
    if (auto hash = text.find('#'); hash != std::string_view::npos) text = text.substr(0, hash);
    std::istringstream words{std::string(text)};
    std::vector<std::string> tokens;
    for (std::string word; words >> word;) tokens.push_back(word);
    if (tokens.empty() || tokens.front() == "domain") continue;
    source_loc loc{path.string(), static_cast<int>(i + 1)};
    if (tokens.front() == "import") {
      if (tokens.size() != 2) {
        errors.add(loc, "expected 'import <file>'");
        continue;
      }
      std::filesystem::path target = tokens[1];
      if (target.is_relative()) target = path.parent_path() / target;
      if (pool_files.contains(canonical_or_same(target))) continue;  // read for its own pool
      read_host_file(target, loc, pool_files, chain, pool, errors);
      continue;
    }
    for (auto& host : tokens) pool.nodes.push_back({host, loc});
  }
  chain.pop_back();
}

}  // namespace

void read_nodefile(const std::filesystem::path& path, const source_loc& named_at,
                   const std::set<std::filesystem::path>& pool_files, nodepool_decl& pool, error_list& errors) {
  std::vector<std::filesystem::path> chain;
  read_host_file(path, named_at, pool_files, chain, pool, errors);
}

}  // namespace rmbus::config::detail
