#pragma once
// radix_sort: a stable sort by a 64-bit integer key, for the stages that order tens of thousands of jobs
// every round by keys made of ranks (How Much's split of a class, What Of's short jobs). A comparison sort
// of those cost several percent of a round's time; these keys have only a few bytes that differ.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rmbus::core {

// Sorts v ascending by key(x), stable, by bytes from the least significant up (a byte all keys share is
// skipped). `tmp` is scratch, kept by the caller for its capacity.
template <class T, class Key>
void radix_sort(std::vector<T>& v, std::vector<T>& tmp, Key key) {
  if (v.size() < 2) return;
  std::array<std::array<std::size_t, 256>, 8> count{};
  for (const T& x : v) {
    const std::uint64_t k = key(x);
    for (std::size_t b = 0; b < 8; ++b) ++count[b][(k >> (8 * b)) & 0xff];
  }
  tmp.resize(v.size());
  for (std::size_t b = 0; b < 8; ++b) {
    auto& c = count[b];
    if (c[(key(v.front()) >> (8 * b)) & 0xff] == v.size()) continue;  // every key has this byte
    std::size_t at = 0;
    for (auto& n : c) {
      const std::size_t here = n;
      n = at;
      at += here;
    }
    for (const T& x : v) tmp[c[(key(x) >> (8 * b)) & 0xff]++] = x;
    v.swap(tmp);
  }
}

}  // namespace rmbus::core
