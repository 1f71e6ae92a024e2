#include "bus/keyed_hash.hpp"

#include <sodium.h>

#include <cstring>
#include <stdexcept>

namespace rmbus::bus {

static_assert(crypto_shorthash_KEYBYTES == 16 && crypto_shorthash_BYTES == 8);

keyed_hash::keyed_hash() {
  if (sodium_init() < 0) throw std::runtime_error("keyed_hash: libsodium failed to initialise");
  randombytes_buf(key_.data(), key_.size());
}

std::uint64_t keyed_hash::operator()(std::string_view bytes) const {
  unsigned char out[crypto_shorthash_BYTES];
  crypto_shorthash(out, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), key_.data());
  std::uint64_t h = 0;
  std::memcpy(&h, out, sizeof h);
  return h;
}

}  // namespace rmbus::bus
