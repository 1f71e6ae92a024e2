// Control's watch over the rounds handed to pool schedulers: a round is overdue when its timer fires with no
// plan back, even when later rounds were handed meanwhile (publication's timeout starts them).
#include <catch2/catch.hpp>

#include "actors/round_watch.hpp"

using rmbus::actors::round_watch;

TEST_CASE("a hung round stays overdue while later rounds are handed to the same scheduler") {
  round_watch w;
  w.handed("beta", 30);
  w.handed("beta", 31);  // publication timed round 30 out and the next round began
  w.handed("beta", 32);
  CHECK(w.overdue("beta", 30));  // control's timer for round 30 fires: the scheduler is replaced
  CHECK(w.overdue("beta", 31));
  CHECK(w.outstanding("beta") == 3);
}

TEST_CASE("a plan answers its round and the earlier ones, not the later ones") {
  round_watch w;
  w.handed("alpha", 7);
  w.handed("alpha", 8);
  w.handed("alpha", 9);
  w.answered("alpha", 8);
  CHECK_FALSE(w.overdue("alpha", 7));
  CHECK_FALSE(w.overdue("alpha", 8));
  CHECK(w.overdue("alpha", 9));
  w.answered("alpha", 9);
  CHECK(w.outstanding("alpha") == 0);
  CHECK_FALSE(w.overdue("alpha", 9));
}

TEST_CASE("pools are watched apart, and a replaced scheduler's rounds are no longer waited for") {
  round_watch w;
  w.handed("alpha", 4);
  w.handed("beta", 4);
  w.answered("alpha", 4);
  CHECK_FALSE(w.overdue("alpha", 4));
  CHECK(w.overdue("beta", 4));
  w.forget("beta");
  CHECK_FALSE(w.overdue("beta", 4));
  w.handed("beta", 5);
  w.handed("gamma", 5);
  w.clear();
  CHECK(w.outstanding("beta") + w.outstanding("gamma") == 0);
}
