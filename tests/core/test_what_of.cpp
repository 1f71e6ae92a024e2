// What Of's choice of machine for fair-share work: the smallest free space the process fits in, then the
// machine's name; a machine whose free space shrinks moves to its new place in that order. What Of keeps
// its machines in buckets by free space, rebuilt every round; these scenarios give machines names whose
// order differs from the order they joined in, so that an index built or kept in the wrong order is seen.
#include <catch2/catch.hpp>

#include "tests/core/scheduler_harness.hpp"

using namespace rmbus::test;

TEST_CASE("What Of: the smallest free space that fits first, then the machine's name") {
  harness h(one_pool({fair_class("normal")}));
  h.machine("m3", 8);  // joined first, last by name
  h.machine("m1", 8);
  h.machine("m2", 4);
  h.machine("m0", 16);
  h.job("a", "alice", "normal", 8, 2);  // two processes of 8 GB
  h.round();
  REQUIRE(h.count("a") == 2);
  // 8 GB of free space is the smallest that fits: m1 and m3, not the 16 GB machine m0.
  CHECK(h.on_machine("a", "m1") == 1);
  CHECK(h.on_machine("a", "m3") == 1);
  CHECK(h.on_machine("a", "m0") == 0);
}

TEST_CASE("What Of: a machine is filled, then the next by name in the same amount of free space") {
  harness h(one_pool({fair_class("normal")}));
  h.machine("x2", 4);
  h.machine("x1", 4);
  h.machine("x0", 8);
  h.job("c", "carol", "normal", 2, 3);  // three processes of 2 GB
  h.round();
  REQUIRE(h.count("c") == 3);
  CHECK(h.on_machine("c", "x1") == 2);  // first by name among the 4 GB machines, filled
  CHECK(h.on_machine("c", "x2") == 1);
  CHECK(h.on_machine("c", "x0") == 0);
}

TEST_CASE("What Of: a machine partly used moves to the bucket of what is left of it") {
  harness h(one_pool({fair_class("normal")}));
  h.machine("y1", 8);
  h.machine("y0", 16);
  h.job("first", "u1", "normal", 12, 1);  // 12 of y0's 16 GB: 4 GB left on y0
  h.round();
  REQUIRE(h.on_machine("first", "y0") == 1);
  h.job("second", "u2", "normal", 4, 1);  // 4 GB: y0's 4 GB left is smaller than y1's 8
  h.round();
  REQUIRE(h.count("second") == 1);
  CHECK(h.on_machine("second", "y0") == 1);
  CHECK(h.on_machine("first", "y0") == 1);
}

TEST_CASE("What Of: a job whose own pool is full is placed in a nested pool with room") {
  // What Of passes over a waiting job when no machine of its pool's subtree has room for a process of it:
  // the subpool's machines count as room for the parent's class.
  scheduler_config cfg = one_pool({fair_class("normal")});
  add_subpool(cfg, "sub", {"s000", "s001", "s002"});
  harness h(cfg);
  h.machines("p", 2, 1);
  h.machines("s", 3, 1);
  h.job("a", "u1", "normal", 1, 2);  // its own pool's machines first: p000 and p001
  h.round();
  REQUIRE(h.on_machine("a", "p000") == 1);
  REQUIRE(h.on_machine("a", "p001") == 1);
  h.job("b", "u2", "normal", 1, 1);  // the parent's machines are full now; the subpool has room
  h.round();
  REQUIRE(h.plan("b").given == 1);  // How Much counted it
  CHECK(h.count("b") == 1);          // and What Of placed it
  CHECK(h.on_machine("b", "s000") == 1);
}

TEST_CASE("What Of: a host list that a running job's item gains or loses decides where its next processes go") {
  // The scheduler notes with the job's record whether its item lists hosts; a map that changes the list of
  // a job it already holds must change where the job's next processes may go.
  harness h(one_pool({fair_class("normal")}));
  h.machine("h1", 4);
  h.machine("h2", 4);
  h.machine("h3", 4);
  h.job("a", "alice", "normal", 4, 1);  // one process, anywhere: h1 first by name
  h.round();
  REQUIRE(h.on_machine("a", "h1") == 1);

  SECTION("a list gained: only the hosts named") {
    h.work[job_id("a")].hosts = {"h3"};
    h.work[job_id("a")].items_total = 1000;  // more work: as many processes as fit
    h.round();
    CHECK(h.on_machine("a", "h1") == 1);
    CHECK(h.on_machine("a", "h2") == 0);
    CHECK(h.on_machine("a", "h3") == 1);
  }
  SECTION("a list naming no machine of the pool: the job waits, and says why") {
    h.work[job_id("a")].hosts = {"elsewhere"};
    h.work[job_id("a")].items_total = 1000;
    h.round();
    CHECK(h.count("a") == 1);
    CHECK(h.plan("a").reason_text == "No machines match user specified list.");
  }
  SECTION("a list lost: anywhere again") {
    h.work[job_id("a")].hosts = {"h3"};
    h.round();
    h.work[job_id("a")].hosts.clear();
    h.work[job_id("a")].items_total = 1000;
    h.round();
    CHECK(h.count("a") == 3);
    CHECK(h.on_machine("a", "h2") == 1);
  }
}
