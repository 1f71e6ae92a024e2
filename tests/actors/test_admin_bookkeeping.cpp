// What admin keeps and assembles beside the actors: the admin's marks on nodes, the nodes the configuration
// expects (matched by name or short name), the rival RMs warned of (once each, again after the period), and
// the replies assembled from the answers of pools and eviction (restarting pools, jobs with the work refused
// before any pool, users summed, status's counts).
#include <catch2/catch.hpp>

#include "actors/admin_marks.hpp"
#include "actors/admin_replies.hpp"
#include "actors/admin_values.hpp"
#include "actors/expected_nodes.hpp"
#include "actors/rival_rms.hpp"

using namespace rmbus::actors;
using rmbus::messages::value;

TEST_CASE("the admin's marks: set, cleared, and already so") {
  admin_marks m;
  CHECK_FALSE(m.set(admin_mark::varied_off, "a1", true));
  CHECK(m.set(admin_mark::varied_off, "a1", true));  // already varied off
  CHECK_FALSE(m.set(admin_mark::drained, "a1", true));
  CHECK(m.of("a1") == std::vector<admin_mark>{admin_mark::varied_off, admin_mark::drained});
  CHECK(m.set(admin_mark::drained, "a2", false));  // was not drained
  CHECK_FALSE(m.set(admin_mark::varied_off, "a1", false));
  CHECK(m.nodes(admin_mark::varied_off).empty());
  CHECK(m.nodes(admin_mark::drained) == std::set<std::string>{"a1"});
  CHECK(std::string{to_string(admin_mark::drained)} == "drained");
}

TEST_CASE("the nodes the configuration names, found by name or short name, in their pools") {
  rmbus::core::scheduler_config cfg;
  rmbus::core::nodepool_def alpha, late, beta;
  alpha.name = "alpha";
  alpha.nodes = {"a1", "a2.example.org"};
  late.name = "alpha-late";
  late.parent = "alpha";
  late.nodes = {"a5"};
  beta.name = "beta";
  beta.node_patterns = {"b[0-9]+"};  // patterns name no node
  cfg.nodepools = {alpha, late, beta};
  const expected_nodes x{cfg};
  REQUIRE(x.all().size() == 3);
  const auto* a5 = x.find("a5.example.org");  // the agent reports its long name
  REQUIRE(a5 != nullptr);
  CHECK(a5->node == "a5");
  CHECK(a5->pool == "alpha");
  CHECK(a5->nodepool == "alpha-late");
  REQUIRE(x.find("a2") != nullptr);  // listed long, reported short
  CHECK(x.find("a2")->node == "a2.example.org");
  CHECK(x.find("b1") == nullptr);
}

TEST_CASE("a rival RM is warned of once and again after the period: a matching one never") {
  rival_rms plain{"rmbus.1.me", false, 1000};
  CHECK_FALSE(plain.heard("rmbus.1.me", true, 0));  // its own
  CHECK_FALSE(plain.heard("rmbus.2.x", false, 0));  // another RM without HA is not what it listens for
  const auto first = plain.heard("rmbus.2.ha", true, 0);
  REQUIRE(first);
  CHECK(first->rfind("another RM with [ha] enabled publishes on this bus: rmbus.2.ha", 0) == 0);
  CHECK_FALSE(plain.heard("rmbus.2.ha", true, 999));
  CHECK_FALSE(plain.worth_reading("rmbus.2.ha", 999));
  CHECK(plain.heard("rmbus.2.ha", true, 1000));
  rival_rms candidate{"rmbus.3.c", true, 1000};
  CHECK_FALSE(candidate.heard("rmbus.4.peer", true, 0));  // another candidate: by design
  const auto unfenced = candidate.heard("rmbus.5.plain", false, 0);
  REQUIRE(unfenced);
  CHECK(unfenced->rfind("an RM without HA publishes rm.state on this bus: rmbus.5.plain", 0) == 0);
  // Bounded: past max_rivals, new names are not tracked (nor warned of).
  rival_rms few{"me", false, 1000, 1};
  CHECK(few.heard("r1", true, 0));
  CHECK_FALSE(few.worth_reading("r2", 0));
}

namespace {
value::map job_row(const char* id, const char* user, const char* status, std::uint64_t processes, std::uint64_t quanta) {
  return value::map{{"job", value{id}},           {"user", value{user}},        {"class", value{"normal"}},
                    {"status", value{status}},    {"processes", value{processes}}, {"quanta", value{quanta}},
                    {"demand", value{std::uint64_t{10}}}};
}
}  // namespace

TEST_CASE("replies: restarting pools named, jobs by id with refused work, users summed, status counted") {
  gathered_answers a;
  a["alpha"] = value::map{{"jobs", value{value::array{value{job_row("b-1", "bob", "pending", 0, 0)},
                                                      value{job_row("a-1", "alice", "scheduled", 8, 8)}}}}};
  a["beta"] = value::map{{"restarting", value{true}}};
  a[eviction_answer] = value::map{{"never_seen", value{value::array{}}}};
  CHECK(restarting_pools(a) == std::vector<std::string>{"beta"});
  const auto pools = pool_entries(a);
  REQUIRE(pools.size() == 2);  // eviction's answer is not a pool
  CHECK(str_of(*pools[1].as_map(), "pool") == "beta");

  std::map<std::string, rmbus::messages::refused_work> refused{{"d-1", {"d-1", "dave", "Cannot find class x"}}};
  const auto rows = job_rows(a, refused, {});
  REQUIRE(rows.size() == 3);
  CHECK(str_of(*rows[0].as_map(), "job") == "a-1");
  CHECK(str_of(*rows[0].as_map(), "pool") == "alpha");
  CHECK(str_of(*rows[2].as_map(), "job") == "d-1");
  CHECK(str_of(*rows[2].as_map(), "status") == "refused");
  CHECK(job_rows(a, refused, value::map{{"class", value{"normal"}}}).size() == 2);  // refused work has no class
  CHECK(job_rows(a, refused, value::map{{"state", value{"pending"}}}).size() == 2);  // the pools filter their own
  const auto users = user_rows(rows);
  REQUIRE(users.size() == 3);
  CHECK(str_of(*users[0].as_map(), "user") == "alice");
  CHECK(uint_of(*users[0].as_map(), "processes") == 8);
  CHECK(uint_of(*users[1].as_map(), "pending") == 1);

  gathered_answers s;
  s["alpha"] = value::map{{"jobs", value{value::map{{"scheduled", value{std::uint64_t{2}}},
                                                     {"pending", value{std::uint64_t{1}}},
                                                     {"refused", value{std::uint64_t{0}}}}}},
                          {"schedulable", value{std::uint64_t{3}}}};
  s["beta"] = value::map{{"jobs", value{value::map{{"scheduled", value{std::uint64_t{1}}}}}},
                         {"schedulable", value{std::uint64_t{2}}}};
  s[eviction_answer] = value::map{{"nodes", value{value::map{{"up", value{std::uint64_t{6}}}}}}};
  value::map r;
  add_status_counts(s, r);
  const auto* jobs = map_of(r, "jobs");
  REQUIRE(jobs != nullptr);
  CHECK(uint_of(*jobs, "total") == 4);
  CHECK(uint_of(*jobs, "scheduled") == 3);
  CHECK(uint_of(*map_of(r, "nodes"), "schedulable") == 5);
  CHECK(uint_of(*map_of(r, "nodes"), "up") == 6);
}
