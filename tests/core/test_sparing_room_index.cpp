// The sparing policy's room index (core/sparing_room_index.hpp): which candidate machine it offers a claimed
// process, by R1's order (fewest quanta preempted, then by name), only where the machine's reach (spare plus
// takeable victims) holds the process, only in the class's pool or below it, and as the figures change in the
// middle of a round's choice. Each answer computed by hand from the table below.
#include <catch2/catch.hpp>

#include "core/sparing_room_index.hpp"
#include "tests/core/scheduler_harness.hpp"

using namespace rmbus::test;

namespace {

// Pools: default (0) > A (1). Machines by slot: n3, n1, n2 (order 4, default), a1 (order 4, A), n0 (order 2,
// default). By name: a1, n0, n1, n2, n3.
enum slot : int { n3 = 0, n1 = 1, n2 = 2, a1 = 3, n0 = 4 };

cluster_model two_pools() {
  cluster_model m;
  m.pools = {pool_rec{"default", -1, {1}, 0, 100}, pool_rec{"A", 0, {}, 1, 100}};
  const auto add = [&](const char* name, int order, int pool) {
    machine_rec mc;
    mc.name = machine_id(name);
    mc.order = order;
    mc.pool = pool;
    m.machines.push_back(mc);
  };
  add("n3", 4, 0);
  add("n1", 4, 0);
  add("n2", 4, 0);
  add("a1", 4, 1);
  add("n0", 2, 0);
  m.machine_rank = {4, 2, 3, 0, 1};
  return m;
}

}  // namespace

TEST_CASE("sparing room index: fewest quanta preempted first, then by name, only where the victims reach") {
  const auto m = two_pools();
  //            slot:  n3 n1 n2 a1 n0
  std::vector<int> spare{1, 0, 2, 0, 0};
  std::vector<int> reach{4, 4, 2, 4, 2};  // n2: 2 spare and nothing to take
  sparing_room_index rooms(m, {1, 1, 1, 1, 1}, spare, reach);
  // Order 4 from the top pool: no spare holds 4; reach 4 on n3 (cost 4 - 1 = 3), n1 and a1 (cost 4). n2's 2
  // spare would cost 2, but its victims cannot make up the rest: it is never offered for 4.
  CHECK(rooms.best(4, 0) == n3);
  // From pool A only a1 may be used.
  CHECK(rooms.best(4, 1) == a1);
  // Order 2: n2's spare alone holds it (cost 0), before a1 and n0 by name (cost 2).
  CHECK(rooms.best(2, 0) == n2);
  // Order 5: no machine is that large.
  CHECK(rooms.best(5, 0) == -1);
  // Order 1: n3 and n2 cost 0; n3 comes after n2 by name.
  CHECK(rooms.best(1, 0) == n2);
}

TEST_CASE("sparing room index: a machine whose victims go out of reach mid-choice is no longer offered") {
  const auto m = two_pools();
  sparing_room_index rooms(m, {1, 1, 1, 1, 0}, {1, 0, 2, 0, 0}, {4, 4, 2, 4, 0});  // n0 no candidate
  REQUIRE(rooms.best(4, 0) == n3);
  // An earlier claim took n3's victims' job down to its count: n3 offers only its spare now. Of n1 and a1
  // (cost 4 each), a1 comes first by name; a nested pool's machine is usable from the pool above it.
  rooms.set(n3, 1, 1);
  CHECK(rooms.best(4, 0) == a1);
  // a1's plan could not make room after all (two victims of one user whose budget holds one): the next is
  // n1, until the next process, for which a1 is offered again.
  rooms.pass_over(a1);
  CHECK(rooms.best(4, 0) == n1);
  rooms.pass_over(n1);
  CHECK(rooms.best(4, 0) == -1);
  rooms.restore();
  CHECK(rooms.best(4, 0) == a1);
  // A claim placed on n1 left it 4 quanta being freed and spare: now it costs nothing.
  rooms.set(n1, 4, 4);
  CHECK(rooms.best(4, 0) == n1);
  CHECK(rooms.best(2, 0) == n1);  // n1 and n2 both cost 0 for 2; n1 first by name
  // n0 was never a candidate (nothing to take and nothing being freed): not offered even for 1.
  rooms.set(n2, 0, 0);
  rooms.set(n1, 0, 0);
  rooms.set(n3, 0, 0);
  rooms.set(a1, 0, 0);
  CHECK(rooms.best(1, 0) == -1);
}
