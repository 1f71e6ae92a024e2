// apply_vector_edits (containers/vector_edits.hpp): insertions, erasures and in-place visits applied in one
// pass give exactly the vector that erasing and inserting one element at a time gives, with every element
// where a merge of two sorted lists puts it. Checked on seeded random merges of sorted lists of strings (a
// type that owns memory, so that an element moved twice or overwritten before it moved shows).
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "containers/vector_edits.hpp"

using namespace rmbus::containers;

namespace {

std::string name_of(int k) { return "element-with-a-long-name-" + std::to_string(1000 + k); }

// The edits that turn sorted `before` into sorted `after`, in the order a merge walk finds them; the
// elements in both and in `visit_also` are visited in place. `made`: the value of each edit that makes or
// visits an element.
struct merge_edits {
  std::vector<vector_edit> edits;
  std::vector<std::string> made;
};

merge_edits edits_between(const std::vector<std::string>& before, const std::vector<std::string>& after,
                          const std::set<std::string>& visit_also) {
  merge_edits out;
  std::size_t old = 0;
  for (const auto& x : after) {
    while (old < before.size() && before[old] < x) {
      out.edits.push_back({vector_edit_kind::erase, old++});
      out.made.emplace_back();
    }
    if (old < before.size() && before[old] == x) {
      if (visit_also.count(x) != 0) {
        out.edits.push_back({vector_edit_kind::in_place, old});
        out.made.push_back(x + " (visited)");
      }
      ++old;
    } else {
      out.edits.push_back({vector_edit_kind::insert_before, old});
      out.made.push_back(x);
    }
  }
  for (; old < before.size(); ++old) {
    out.edits.push_back({vector_edit_kind::erase, old});
    out.made.emplace_back();
  }
  return out;
}

std::vector<std::string> sorted_sample(std::mt19937& rng, int universe, int count) {
  std::set<std::string> s;
  std::uniform_int_distribution<int> pick(0, universe - 1);
  while (static_cast<int>(s.size()) < count) s.insert(name_of(pick(rng)));
  return {s.begin(), s.end()};
}

}  // namespace

TEST_CASE("one insertion and one erasure in one pass: the vector of an erase then an insert") {
  std::vector<std::string> v;
  for (int k = 0; k < 10; ++k) v.push_back(name_of(2 * k));
  // Erase the element at 2, insert before the one at 7.
  const std::vector<vector_edit> edits{{vector_edit_kind::erase, 2}, {vector_edit_kind::insert_before, 7}};
  std::vector<std::size_t> visited;
  apply_vector_edits(v, edits, [&](std::size_t k, std::string& s) {
    visited.push_back(k);
    s = "new";
  });
  CHECK(visited == std::vector<std::size_t>{1});
  const std::vector<std::string> expected{name_of(0),  name_of(2), name_of(6),  name_of(8),  name_of(10),
                                          name_of(12), "new",      name_of(14), name_of(16), name_of(18)};
  CHECK(v == expected);
}

TEST_CASE("edits at the ends and at one index: inserted before the erased element and the vector resized") {
  std::vector<std::string> v{"b", "d", "f"};
  // Insert before 0, insert before 1 and erase 1, append at the end twice.
  const std::vector<vector_edit> edits{
      {vector_edit_kind::insert_before, 0}, {vector_edit_kind::insert_before, 1},
      {vector_edit_kind::erase, 1},         {vector_edit_kind::in_place, 2},
      {vector_edit_kind::insert_before, 3}, {vector_edit_kind::insert_before, 3}};
  const std::vector<std::string> made{"a", "c", "", "F", "g", "h"};
  apply_vector_edits(v, edits, [&](std::size_t k, std::string& s) { s = made[k]; });
  CHECK(v == std::vector<std::string>{"a", "b", "c", "F", "g", "h"});

  std::vector<std::string> w{"a", "b", "c", "d"};
  apply_vector_edits(w, {{vector_edit_kind::erase, 0}, {vector_edit_kind::erase, 3}},
                     [](std::size_t, std::string&) {});
  CHECK(w == std::vector<std::string>{"b", "c"});
}

TEST_CASE("seeded random merges: one pass gives the merged list with every visited element at its place") {
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    const int universe = 40 + static_cast<int>(seed % 50);
    const auto before = sorted_sample(rng, universe, static_cast<int>(rng() % 30));
    const auto after = sorted_sample(rng, universe, static_cast<int>(rng() % 30));
    std::set<std::string> visit_also;
    for (const auto& x : after)
      if (rng() % 4 == 0) visit_also.insert(x);
    const auto e = edits_between(before, after, visit_also);

    std::vector<std::string> v = before;
    apply_vector_edits(v, e.edits, [&](std::size_t k, std::string& s) {
      REQUIRE(e.edits[k].what != vector_edit_kind::erase);
      if (e.edits[k].what == vector_edit_kind::insert_before) REQUIRE(s.empty());  // made fresh
      if (e.edits[k].what == vector_edit_kind::in_place)
        REQUIRE(s + " (visited)" == e.made[k]);  // still its own
      s = e.made[k];
    });

    std::vector<std::string> expected;
    for (const auto& x : after)
      expected.push_back(visit_also.count(x) != 0 && std::binary_search(before.begin(), before.end(), x)
                             ? x + " (visited)"
                             : x);
    INFO("seed " << seed << ", " << before.size() << " before, " << after.size() << " after");
    CHECK(v == expected);
  }
}

TEST_CASE("a vector that edits grow keeps room: the next insertions do not move it to another buffer") {
  // A first round builds 100,000 plan entries by insertions into an empty vector; the arrivals after it are
  // single insertions, which must not move every entry (the pointer to the first element stays).
  std::vector<std::string> v;
  std::vector<vector_edit> build;
  for (int k = 0; k < 1000; ++k) build.push_back({vector_edit_kind::insert_before, 0});
  apply_vector_edits(v, build, [](std::size_t k, std::string& s) { s = name_of(static_cast<int>(k)); });
  REQUIRE(v.size() == 1000);
  CHECK(v.capacity() >= with_room_to_grow(1000));
  const auto* buffer = v.data();
  for (int arrival = 0; arrival < 100; ++arrival) {
    apply_vector_edits(v, {{vector_edit_kind::insert_before, v.size() / 2}},
                       [&](std::size_t, std::string& s) { s = "arrival-" + std::to_string(arrival); });
    REQUIRE(v.data() == buffer);
  }
  CHECK(v.size() == 1100);
  CHECK(v[1099 / 2] == "arrival-99");  // the last arrival went to the middle of the vector as it then was
}
