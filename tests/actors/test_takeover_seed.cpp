// What a new HA active starts from: the schedule heard from its predecessor, without the grants not started yet
// (actors/takeover_seed.hpp).
#include <catch2/catch.hpp>

#include "actors/takeover_seed.hpp"

namespace msg = rmbus::messages;

TEST_CASE("a new active's seed keeps what runs or is being stopped and drops the grants not started") {
  msg::rm_state heard;
  msg::job_schedule a;
  a.id = "a";
  a.shares = {{"a.1", "n1", 2, msg::share_status::running, {}},
              {"a.2", "n1", 2, msg::share_status::new_, {}},
              {"a.3", "n2", 2, msg::share_status::preempt, {}}};
  msg::job_schedule b;
  b.id = "b";
  b.shares = {{"b.1", "n2", 1, msg::share_status::new_, {}}, {"b.2", "n3", 1, msg::share_status::evict, {}}};
  heard.jobs = {a, b};

  CHECK(rmbus::actors::drop_unstarted_grants(heard) == 2);
  REQUIRE(heard.jobs.size() == 2);  // a job whose only grant went is still listed: the map decides about it
  REQUIRE(heard.jobs[0].shares.size() == 2);
  CHECK(heard.jobs[0].shares[0].id == "a.1");
  CHECK(heard.jobs[0].shares[1].id == "a.3");
  REQUIRE(heard.jobs[1].shares.size() == 1);
  CHECK(heard.jobs[1].shares[0].id == "b.2");
  CHECK(rmbus::actors::drop_unstarted_grants(heard) == 0);
}
