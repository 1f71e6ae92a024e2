// libFuzzer target over the CURVE file parsers of bus/curve.hpp: the keys file (the allowed keys, which the
// forwarder and the RM read at start and on reconfigure) and a key file (a key pair or a public key). The
// libFuzzer build needs -DRMBUS_FUZZ=ON and clang (tools/fuzz.sh runs it); every build replays the committed
// seeds as fuzz_curve_files_replay.
//
// Each input is parsed as both kinds of file. Only curve_error may escape, and its message must name the file.
// What is accepted must survive its own writing: keys_file_line / key_file_text read back to the same keys.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "bus/curve.hpp"

using namespace rmbus::bus;

namespace {

const std::string file_name = "fuzz.keys";

void check_error(const curve_error& e) {
  if (std::string_view{e.what()}.find(file_name) == std::string_view::npos) __builtin_trap();
}

void keys_file(std::string_view text) {
  std::vector<allowed_key> keys;
  try {
    keys = parse_keys_file(text, file_name);
  } catch (const curve_error& e) {
    check_error(e);
    return;
  }
  std::string written;
  for (const auto& k : keys) written += keys_file_line(k);
  const auto again = parse_keys_file(written, file_name);  // a curve_error here escapes: a finding
  if (again.size() != keys.size()) __builtin_trap();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (again[i].name != keys[i].name || again[i].public_key != keys[i].public_key ||
        again[i].roles != keys[i].roles)
      __builtin_trap();
  }
}

void key_file(std::string_view text) {
  curve_keypair keys;
  try {
    keys = parse_key_file(text, file_name);
  } catch (const curve_error& e) {
    check_error(e);
    return;
  }
  const bool with_secret = !keys.secret_key.empty();
  const auto again = parse_key_file(key_file_text(keys, with_secret), file_name);
  if (again.public_key != keys.public_key || again.secret_key != keys.secret_key) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text{reinterpret_cast<const char*>(data), size};
  keys_file(text);
  key_file(text);
  return 0;
}
