// rmbus's extensions beyond DUCC (issue 12), each through the real rmbus on loopback: EGO's share groups and
// reclaim grace, and CiGri's probe first. The configuration is the fixture's plus the tables each test adds.
#include <algorithm>

#include <catch2/catch.hpp>

#include "tests/e2e/rm_fixture.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::layout;
using rmbus::e2e::rm_fixture;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;

namespace {

constexpr auto deadline = 60s;

ts::job_spec job(const std::string& id, const std::string& user, const std::string& cls, std::uint64_t max_processes = 0) {
  ts::job_spec j;
  j.id = id;
  j.user = user;
  j.class_name = cls;
  j.memory_mb = 1024;
  j.max_processes = max_processes;
  return j;
}

std::string group_of(const msg::rm_state& s, const std::string& id) {
  const auto* j = ts::find_job(s, id);
  return j == nullptr ? std::string{} : j->group;
}

}  // namespace

TEST_CASE("share groups: two groups of weights 3 and 1 under one class split its award 3:1, named in rm.state and qload") {
  rm_fixture f{layout::single, {},
               rmbus::e2e::two_groups_config()};
  auto& c = f.cluster();
  c.start();
  c.submit(job("ann-1", "ann", "normal"));
  c.submit(job("bob-1", "bob", "normal"));
  // Pool alpha: 4 nodes x 8 GB = 32 quanta of 1 GB processes. physics : bio = 3 : 1 -> 24 and 8 (without
  // groups two users would split 16 / 16).
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) { return ts::active_shares(s, "ann-1") == 24 && ts::active_shares(s, "bob-1") == 8; },
      deadline));
  const auto s = *c.last_state();
  CHECK(group_of(s, "ann-1") == "physics");
  CHECK(group_of(s, "bob-1") == "bio");
  const auto q = f.admin({"qload"});
  REQUIRE(q.status == std::optional<int>{0});
  CHECK(q.output.find("physics") != std::string::npos);
  CHECK(q.output.find("bio") != std::string::npos);
  const auto e = f.admin({"explain", "ann-1"});
  REQUIRE(e.status == std::optional<int>{0});
  CHECK(e.output.find("physics") != std::string::npos);
}

namespace {

// Under either preemption policy: bob's claim on half of what alice holds is met by processes that run on with
// a deadline, and go when it passes.
void reclaim_grace_defers_preemption(const rmbus::e2e::config_lines& policy) {
  rm_fixture f{layout::single, {},
               "[[class]]\nname = \"graceful\"\npolicy = \"FAIR_SHARE\"\nnodepool = \"alpha\"\npriority = 10\n"
               "weight = 100\nreclaim_grace_ms = 3000\n",
               policy};
  auto& c = f.cluster();
  c.start();
  c.submit(job("alice-1", "alice", "graceful"));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 32; }, deadline));
  c.submit(job("bob-1", "bob", "graceful"));
  // bob's fair share is 16 of the 32 quanta alice holds: her processes chosen for it keep running, each with
  // reclaim_at_ms, and bob waits.
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::reclaiming_shares(s, "alice-1") > 0; }, deadline));
  const auto during = *c.last_state();
  CHECK(ts::active_shares(during, "alice-1") == 32);
  // After the 3 s grace the need still stands: they are preempted, and the two users end at 16 each.
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 16 && ts::active_shares(s, "bob-1") == 16; },
      deadline));
  CHECK(ts::reclaiming_shares(*c.last_state(), "alice-1") == 0);
}

}  // namespace

TEST_CASE("reclaim grace: the processes chosen for preemption run on with a deadline, then go when it passes") {
  reclaim_grace_defers_preemption({});
}

TEST_CASE("sparing policy: reclaim grace: the processes chosen for preemption run on with a deadline, then go when it passes") {
  reclaim_grace_defers_preemption(rmbus::e2e::sparing_policy());
}

TEST_CASE("probe first: a new job holds one process until it has initialized and finished a work item") {
  rm_fixture f{layout::single, {},
               "[[class]]\nname = \"probing\"\npolicy = \"FAIR_SHARE\"\nnodepool = \"alpha\"\npriority = 10\n"
               "weight = 100\ninitialization_cap = 8\nprobe_first = true\n"};
  auto& c = f.cluster();
  c.start();
  c.submit(job("p-1", "pat", "probing", 8));
  // The initialization cap alone would give 8 at once; the probe holds it at 1 while no item is done.
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "p-1") == 1; }, deadline));
  for (int i = 0; i < 5; ++i) {
    REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, deadline));
    CHECK(ts::active_shares(*c.last_state(), "p-1") == 1);
  }
  // Its process has finished a work item: the normal caps apply, 8 processes.
  c.set_progress("p-1", 10, 1000);
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "p-1") == 8; }, deadline));
}
