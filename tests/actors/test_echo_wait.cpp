// The takeover handshake alone: a new HA active grants nothing new until a work map echoes its own epoch; an
// orchestrator that is seen not to echo at all lets it grant at once (the behaviour before the handshake).
#include <catch2/catch.hpp>

#include "actors/echo_wait.hpp"
#include "messages/ha_ballot.hpp"

using rmbus::actors::echo_wait;
using rmbus::messages::ballot;

TEST_CASE("a new active waits for the echo of its own epoch, and an older echo keeps it waiting", "[ha]") {
  echo_wait w;
  const auto old = ballot(1, 0), own = ballot(2, 1);
  w.note_map(old, old);  // as a standby: the orchestrator echoes the old active's epoch
  CHECK(w.orchestrator() == echo_wait::echo::echoes);
  auto v = w.judge(own, old);
  CHECK(v.hold);
  CHECK(v.reason == "waiting for the orchestrator to accept epoch 20001 (its last map echoes epoch 10000)");
  // A map without rm_epoch from an orchestrator known to echo (restarted, say) does not release it.
  w.note_map(std::nullopt, own);
  w.note_map(std::nullopt, own);
  CHECK(w.judge(own, std::nullopt).hold);
  CHECK(w.judge(own, std::nullopt).reason ==
        "waiting for the orchestrator to accept epoch 20001 (its last map echoes no epoch)");
  // Its own epoch: granting.
  w.note_map(own, own);
  CHECK_FALSE(w.judge(own, own).hold);
  // A higher one: it is being deposed and publishes nothing more; no reason to hold what nobody sees.
  CHECK_FALSE(w.judge(own, ballot(2, 3)).hold);
}

TEST_CASE("an orchestrator that echoes no rm_epoch: two maps in a row without one after an epoch is known let the "
          "active grant",
          "[ha]") {
  echo_wait w;
  // A first start: maps without rm_epoch before any RM was active tell nothing.
  for (int i = 0; i < 5; ++i) w.note_map(std::nullopt, 0);
  CHECK(w.orchestrator() == echo_wait::echo::unknown);
  const auto own = ballot(1, 2);
  CHECK(w.judge(own, std::nullopt).hold);
  // Active now: the first map may predate its first schedule, the second settles it.
  w.note_map(std::nullopt, own);
  CHECK(w.orchestrator() == echo_wait::echo::unknown);
  CHECK(w.judge(own, std::nullopt).hold);
  w.note_map(std::nullopt, own);
  CHECK(w.orchestrator() == echo_wait::echo::silent);
  CHECK_FALSE(w.judge(own, std::nullopt).hold);
  // One that starts echoing after all is an echoing orchestrator again.
  w.note_map(ballot(0, 0), own);
  CHECK(w.orchestrator() == echo_wait::echo::echoes);
  CHECK(w.judge(own, ballot(0, 0)).hold);
}

TEST_CASE("a map in between that echoes resets the count of maps without an echo", "[ha]") {
  echo_wait w;
  const auto own = ballot(3, 0);
  w.note_map(std::nullopt, own);
  w.note_map(ballot(2, 5), own);
  w.note_map(std::nullopt, own);
  w.note_map(std::nullopt, own);
  CHECK(w.orchestrator() == echo_wait::echo::echoes);
  CHECK(w.judge(own, std::nullopt).hold);
}
