#pragma once
// What the configuration fuzz targets share: an input is several files in one, split at separator lines, and
// is written into a private folder (on /dev/shm when there is one) under fixed names before the real loader
// reads it from there, nodefiles and imports included. The seeds in fuzz_seeds_native/ and fuzz_seeds_ducc/
// follow the same layout, so they are readable sites.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rmbus::config::fuzz {

inline constexpr std::string_view file_separator = "\n----8<----\n";

// The input cut at each separator (at most `names.size()` parts; the last keeps any further separators).
inline std::vector<std::string_view> split_files(std::string_view input, std::size_t max_parts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    auto at = input.find(file_separator);
    if (at == std::string_view::npos) break;
    parts.push_back(input.substr(0, at));
    input.remove_prefix(at + file_separator.size());
  }
  parts.push_back(input);
  return parts;
}

// A folder of its own for this fuzzing process, made once and removed when the process ends normally (the
// replay runs in every ctest run; a crashing input leaves it for inspection).
inline const std::filesystem::path& scratch_dir() {
  struct owned_folder {
    std::filesystem::path path;
    ~owned_folder() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const owned_folder dir = [] {
    std::string tmpl = (std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp");
    tmpl += "/rmbus-fuzz-config-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    return owned_folder{std::filesystem::path{tmpl}};
  }();
  return dir.path;
}

// Writes part i to names[i]; names without a part are removed, so an earlier input leaves nothing behind.
inline void write_files(const std::vector<std::string_view>& parts, const std::vector<std::string>& names) {
  const auto& dir = scratch_dir();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto path = dir / names[i];
    if (i < parts.size()) {
      std::ofstream{path, std::ios::binary | std::ios::trunc}.write(parts[i].data(),
                                                                    static_cast<std::streamsize>(parts[i].size()));
    } else {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  }
}

}  // namespace rmbus::config::fuzz
