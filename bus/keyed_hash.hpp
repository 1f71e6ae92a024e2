#pragma once
// A hash of untrusted names (a sender's src, a node's name) for hash tables that names from the bus fill:
// SipHash-2-4 (libsodium's crypto_shorthash) under a key drawn at random for each instance. A sender who
// cannot learn the key cannot choose names that share a bucket, so a storm of crafted names cannot turn each
// lookup into a walk of the whole table (with an unkeyed hash, std::hash included, it can).

#include <array>
#include <cstdint>
#include <string_view>

namespace rmbus::bus {

class keyed_hash {
 public:
  using is_transparent = void;  // a table of std::string keys looks names up by std::string_view

  keyed_hash();  // a fresh random key; throws std::runtime_error if libsodium cannot start

  std::uint64_t operator()(std::string_view bytes) const;

 private:
  std::array<unsigned char, 16> key_{};
};

}  // namespace rmbus::bus
