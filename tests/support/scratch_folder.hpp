#pragma once
// A fresh folder under the system's temporary folder for the files a test writes, removed with everything in
// it when the object goes. Header-only: unit tests use it without the end-to-end support library.

#include <stdlib.h>  // mkdtemp

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace rmbus::test_support {

class scratch_folder {
 public:
  // The folder is named `<prefix>-XXXXXX`, so a leftover one says which tests made it.
  explicit scratch_folder(const std::string& prefix = "rmbus-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~scratch_folder() {
    std::error_code ec;  // a destructor must not throw; a folder left behind is only clutter
    std::filesystem::remove_all(path_, ec);
  }
  scratch_folder(const scratch_folder&) = delete;
  scratch_folder& operator=(const scratch_folder&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace rmbus::test_support
