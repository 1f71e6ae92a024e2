#pragma once
// A few insertions and erasures applied to a large vector in one pass.
//
// A change's round edits vectors of 100,000 entries by one or two elements: the plan's entries (216 bytes
// each), publication's listing. Erasing and then inserting one element each moved every element after it,
// two thirds of the vector on average for the pair. Here each kept element moves at most once, and only
// those between an insertion and an erasure that do not balance: for one of each, the elements between
// their two places.

#include <cstddef>
#include <utility>
#include <vector>

namespace rmbus::containers {

// The capacity a vector of `n` elements that will take a few more gets: an eighth more (see below).
inline std::size_t with_room_to_grow(std::size_t n) { return n + n / 8 + 16; }

enum class vector_edit_kind {
  insert_before,  // a new element before the element at `at` (at == size(): at the end)
  erase,          // the element at `at` goes
  in_place,       // the element at `at` stays, and is handed to the caller at its new index
};

struct vector_edit {
  vector_edit_kind what = vector_edit_kind::in_place;
  std::size_t at = 0;  // an index of the vector before any of the edits
};

// Applies `edits` to `v`. REQUIRES: edits in nondecreasing `at`, and at one index its insertions before
// its erasure or in_place edit (the order of a walk that merges two sorted lists). Each insert_before
// makes a default-constructed element, and then `visit(k, element)` is called for every insert_before and
// in_place edit k (its index in `edits`) with the element where it now lies.
template <class T, class Visit>
void apply_vector_edits(std::vector<T>& v, const std::vector<vector_edit>& edits, Visit visit) {
  if (edits.empty()) return;
  const std::size_t n = v.size();
  std::size_t inserts = 0, erases = 0;
  for (const auto& e : edits) {
    inserts += e.what == vector_edit_kind::insert_before ? 1 : 0;
    erases += e.what == vector_edit_kind::erase ? 1 : 0;
  }
  const std::size_t n_after = n + inserts - erases;
  // Room for an eighth more when the vector must grow: a vector built whole by one call (a first round's
  // 100,000 plan entries) has none, and std::vector would move it to a buffer twice its size at the next
  // single insertion, faulting in 20 MB on the path of one arrival (docs/architecture.md).
  if (n_after > v.capacity()) v.reserve(with_room_to_grow(n_after));
  if (n_after > n) v.resize(n_after);

  // The runs of kept elements between edits, each with the shift it takes (insertions before it minus
  // erasures before it).
  struct run {
    std::size_t from = 0, to = 0;  // [from, to) before the edits
    std::ptrdiff_t shift = 0;
  };
  std::vector<run> runs;
  runs.reserve(edits.size() + 1);
  std::size_t start = 0;
  std::ptrdiff_t shift = 0;
  for (const auto& e : edits) {
    if (e.what == vector_edit_kind::in_place) continue;
    if (e.at > start) runs.push_back({start, e.at, shift});
    if (e.what == vector_edit_kind::insert_before) {
      ++shift;
      start = std::max(start, e.at);
    } else {
      --shift;
      start = e.at + 1;
    }
  }
  if (n > start) runs.push_back({start, n, shift});

  // Runs moving left first, from the left; then runs moving right, from the right. A run's destination
  // never overlaps the source of a run not moved yet in that order (the runs keep their order).
  for (const auto& r : runs)
    if (r.shift < 0)
      std::move(v.begin() + static_cast<std::ptrdiff_t>(r.from),
                v.begin() + static_cast<std::ptrdiff_t>(r.to),
                v.begin() + static_cast<std::ptrdiff_t>(r.from) + r.shift);
  for (auto r = runs.rbegin(); r != runs.rend(); ++r)
    if (r->shift > 0)
      std::move_backward(v.begin() + static_cast<std::ptrdiff_t>(r->from),
                         v.begin() + static_cast<std::ptrdiff_t>(r->to),
                         v.begin() + static_cast<std::ptrdiff_t>(r->to) + r->shift);

  shift = 0;
  for (std::size_t k = 0; k < edits.size(); ++k) {
    const auto& e = edits[k];
    const auto now = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(e.at) + shift);
    if (e.what == vector_edit_kind::insert_before) {
      v[now] = T{};
      visit(k, v[now]);
      ++shift;
    } else if (e.what == vector_edit_kind::erase) {
      --shift;
    } else {
      visit(k, v[now]);
    }
  }
  if (n_after < n) v.erase(v.begin() + static_cast<std::ptrdiff_t>(n_after), v.end());
}

}  // namespace rmbus::containers
