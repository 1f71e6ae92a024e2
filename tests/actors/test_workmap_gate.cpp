// Which work map is taken: the first src owns it; duplicates, late maps and strangers are not taken; a
// restarted orchestrator (seq from 1 again, later ts_ms) is, and so is a successor once the owner fell silent.
#include <catch2/catch.hpp>

#include "actors/workmap_gate.hpp"

using namespace rmbus::actors;
using verdict = workmap_gate::verdict;

TEST_CASE("the owner's maps are taken in order: the same map again is a duplicate, an older one stale") {
  workmap_gate g{false, 30000};
  CHECK(g.judge("orch", 1, 1000, 0) == verdict::take);
  CHECK(g.owner() == "orch");
  CHECK(g.judge("orch", 2, 2000, 10) == verdict::take);
  CHECK(g.judge("orch", 2, 2000, 20) == verdict::duplicate);
  CHECK(g.judge("orch", 1, 1000, 30) == verdict::stale);  // arrived late: older seq and older ts_ms
  CHECK(g.last_seq("orch") == 2);
  CHECK(g.judge("orch", 5, 5000, 40) == verdict::take);  // a gap is fine: maps are complete
}

TEST_CASE("a restarted orchestrator counts from 1 again with a later ts_ms: taken") {
  workmap_gate g{false, 30000};
  REQUIRE(g.judge("orch", 900, 9000, 0) == verdict::take);
  CHECK(g.judge("orch", 1, 9500, 100) == verdict::take);
  CHECK(g.last_seq("orch") == 1);
  CHECK(g.judge("orch", 2, 9600, 200) == verdict::take);
}

TEST_CASE("a second orchestrator is refused while the owner speaks, and takes over after 3 silent periods") {
  workmap_gate g{false, 30000};  // 3 x a 10 s orchestrator period
  REQUIRE(g.judge("orch-a", 1, 1000, 0) == verdict::take);
  CHECK(g.judge("orch-b", 1, 1000, 5000) == verdict::foreign);
  CHECK(g.judge("orch-a", 2, 2000, 10000) == verdict::take);
  CHECK(g.judge("orch-b", 2, 2000, 39999) == verdict::foreign);  // a was heard 29,999 ms ago
  CHECK(g.owner() == "orch-a");
  CHECK(g.judge("orch-b", 3, 3000, 40000) == verdict::takeover);  // 30,000 ms of silence
  CHECK(g.owner() == "orch-b");
  CHECK(g.judge("orch-a", 3, 3000, 40001) == verdict::foreign);  // the old owner is now the stranger
}

TEST_CASE("accept_any takes every src, with the order rules per src") {
  workmap_gate g{true, 30000};
  CHECK(g.judge("orch-a", 1, 1000, 0) == verdict::take);
  CHECK(g.judge("orch-b", 7, 1000, 0) == verdict::take);
  CHECK(g.judge("orch-b", 7, 1000, 1) == verdict::duplicate);
  CHECK(g.judge("orch-a", 2, 2000, 2) == verdict::take);
}
