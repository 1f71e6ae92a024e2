// Differencing's per-job table forgets jobs that left the map, and stays bounded however many jobs pass.
#include <catch2/catch.hpp>

#include "actors/departed_jobs.hpp"

using rmbus::actors::forget_departed_jobs;

TEST_CASE("the per-job table keeps what it says of jobs in the map and forgets departed ones past its bound") {
  std::map<std::string, int> items;
  std::map<std::string, bool> wants_more;
  std::size_t largest = 0;
  // 20,000 jobs pass through a map that holds 100 at a time, each answered by a plan once.
  for (int j = 0; j < 20000; ++j) {
    const auto id = "job-" + std::to_string(j);
    items[id] = j;
    if (items.size() > 100) items.erase(items.begin());
    wants_more[id] = j % 2 == 0;
    forget_departed_jobs(wants_more, items);
    largest = std::max(largest, wants_more.size());
  }
  CHECK(largest <= 2 * 100 + 1024 + 1);  // bounded by the map, not by the jobs seen
  for (const auto& [id, value] : items) {
    REQUIRE(wants_more.count(id) == 1);  // nothing said of a job still in the map is lost
    CHECK(wants_more.at(id) == (std::stoi(id.substr(4)) % 2 == 0));
  }
}

TEST_CASE("below its bound the per-job table is left as it is") {
  std::map<std::string, int> items{{"a", 1}};
  std::map<std::string, bool> wants_more{{"a", true}, {"gone", false}};
  forget_departed_jobs(wants_more, items);
  CHECK(wants_more.size() == 2);  // 2 <= 2 x 1 + 1024: no walk yet
}
