// Replays committed fuzz inputs through a fuzz target's LLVMFuzzerTestOneInput, once each and unmutated, in the
// normal (gcc) build, so every ctest run re-checks every earlier finding (the `<target>_replay` entries,
// tests/CMakeLists.txt). libFuzzer is not involved: a target that traps or lets an exception escape aborts this
// process, which fails the test.
//
//   fuzz_decoders_replay DIR...   # every regular file of each DIR, in name order
//
// Exit status 0 after every input ran; 2 when a folder is missing or holds no input (a seed folder that moved
// must not turn the replay into a test of nothing).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::filesystem::path> inputs_of(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it{dir, ec}, end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(it->path());
  }
  if (ec) std::fprintf(stderr, "fuzz replay: cannot list %s: %s\n", dir.c_str(), ec.message().c_str());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR...\n", argv[0]);
    return 2;
  }
  std::size_t ran = 0;
  for (int i = 1; i < argc; ++i) {
    const auto files = inputs_of(argv[i]);
    if (files.empty()) {
      std::fprintf(stderr, "fuzz replay: no input in %s\n", argv[i]);
      return 2;
    }
    for (const auto& file : files) {
      std::ifstream in(file, std::ios::binary);
      const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      if (!in.good() && !in.eof()) {
        std::fprintf(stderr, "fuzz replay: cannot read %s\n", file.c_str());
        return 2;
      }
      // Named before it runs, so the input that aborts is the last one printed.
      std::printf("running %s (%zu bytes)\n", file.c_str(), bytes.size());
      std::fflush(stdout);
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++ran;
    }
  }
  std::printf("%zu inputs ran\n", ran);
  return 0;
}
