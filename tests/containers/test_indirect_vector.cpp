// indirect_vector (core/indirect_vector.hpp): reads and writes like a std::vector of its elements, copies
// deeply, and under apply_vector_edits moves only its owners: an element keeps its address when others are
// inserted before it or erased around it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "containers/indirect_vector.hpp"

using namespace rmbus::containers;

namespace {

std::vector<std::string> as_vector(const indirect_vector<std::string>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("an indirect_vector reads as a sorted vector: indexing, iterators, lower_bound, equality") {
  indirect_vector<std::string> v{"b", "d", "f"};
  v.push_back("h");
  v.emplace_back(2, 'j');
  REQUIRE(v.size() == 5);
  CHECK(v[0] == "b");
  CHECK(v.front() == "b");
  CHECK(v.back() == "jj");
  CHECK(v.at(3) == "h");
  CHECK_THROWS_AS(v.at(5), std::out_of_range);
  CHECK(v.end() - v.begin() == 5);
  CHECK(std::lower_bound(v.begin(), v.end(), std::string{"e"}) - v.begin() == 2);
  CHECK(std::is_sorted(v.begin(), v.end()));
  CHECK(v.begin()->size() == 1);
  for (auto& s : v) s += "!";  // iterators write the elements
  CHECK(as_vector(v) == std::vector<std::string>{"b!", "d!", "f!", "h!", "jj!"});
  indirect_vector<std::string>::const_iterator from_mutable = v.begin();
  CHECK(*from_mutable == "b!");

  CHECK(v == indirect_vector<std::string>{"b!", "d!", "f!", "h!", "jj!"});
  CHECK_FALSE(v == indirect_vector<std::string>{"b!", "d!", "f!", "h!"});
  CHECK_FALSE(v == indirect_vector<std::string>{"b!", "d!", "f!", "h!", "jj"});
}

TEST_CASE("a copy of an indirect_vector owns its own elements") {
  indirect_vector<std::string> v{"a", "b"};
  indirect_vector<std::string> copy = v;
  copy[0] = "changed";
  CHECK(v[0] == "a");
  CHECK(&copy[1] != &v[1]);
  copy = v;
  CHECK(copy == v);
  CHECK(&copy[0] != &v[0]);
  indirect_vector<std::string> moved = std::move(copy);
  CHECK(moved == v);
}

TEST_CASE("edits of an indirect_vector move owners: kept elements stay at their addresses") {
  indirect_vector<std::string> v;
  for (int k = 0; k < 1000; ++k) v.push_back("job-" + std::to_string(1000 + k));
  std::vector<const std::string*> before;
  for (const auto& s : v) before.push_back(&s);
  // An id that sorts before every other, one erased from the middle, one visited in place.
  const std::vector<vector_edit> edits{{vector_edit_kind::insert_before, 0},
                                       {vector_edit_kind::erase, 500},
                                       {vector_edit_kind::in_place, 700}};
  std::vector<std::size_t> visited;
  apply_vector_edits(v, edits, [&](std::size_t k, std::string& s) {
    visited.push_back(k);
    s = k == 0 ? std::string{"event-0"} : s + " (visited)";
  });
  CHECK(visited == std::vector<std::size_t>{0, 2});
  REQUIRE(v.size() == 1000);
  CHECK(v[0] == "event-0");
  CHECK(v[700] == "job-1700 (visited)");
  CHECK(std::none_of(v.begin(), v.end(), [](const std::string& s) { return s == "job-1500"; }));
  // Each kept element is the same object it was, now one place later (before the erasure) or at its place.
  for (std::size_t k = 0; k < 1000; ++k) {
    if (k == 500) continue;
    const std::size_t now = k < 500 ? k + 1 : k;
    INFO("element " << k);
    REQUIRE(&v[now] == before[k]);
  }
  CHECK(std::is_sorted(v.begin() + 1, v.end()));
}
