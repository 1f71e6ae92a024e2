#pragma once
// Hand-built RM publications shared by rmbus-top's tests: two nodepools and a small schedule whose every
// number is worked out in the tests that use it.

#include <string>
#include <utility>
#include <vector>

#include "messages/rm_cycle.hpp"
#include "messages/rm_event.hpp"
#include "messages/rm_nodes.hpp"
#include "messages/rm_state.hpp"

namespace rmbus::top::fixtures {

namespace msg = rmbus::messages;

// Shares of 2 quanta each on node n1, named <job>.1, <job>.2, ...
inline msg::job_schedule job(std::string id, std::string user, std::string cls, msg::job_status st,
                             std::vector<msg::share_status> shares, std::uint64_t given, std::uint64_t demand,
                             std::uint64_t fair, std::string reason = {}) {
  msg::job_schedule j;
  j.id = std::move(id);
  j.user = std::move(user);
  j.class_name = std::move(cls);
  j.status = st;
  j.reason = std::move(reason);
  j.memory_mb = 2048;
  int n = 0;
  for (auto s : shares) j.shares.push_back({j.id + "." + std::to_string(++n), "n1", 2, s, {}});
  j.given = given;
  j.demand = demand;
  j.fair_share = fair;
  return j;
}

// alpha: a1 up (8 quanta, 2 free), a2 up in the nested alpha-gpu (8, 0 free), a3 missing (8, 8 free).
// beta:  b1 down (16, 16 free), b2 up (16, 5 free), b3 varied off (16, 16 free).
inline msg::rm_nodes two_pools() {
  using st = msg::node_state;
  msg::rm_nodes n;
  n.nodes = {{"a1", "alpha", "alpha", st::up, 8192, 8, 2, 0},
             {"a2", "alpha", "alpha-gpu", st::up, 8192, 8, 0, 0},
             {"a3", "alpha", "alpha", st::missing, 8192, 8, 8, 1},
             {"b1", "beta", "beta", st::down, 16384, 16, 16, 6},
             {"b2", "beta", "beta", st::up, 16384, 16, 5, 0},
             {"b3", "beta", "beta", st::varied_off, 16384, 16, 16, 0}};
  return n;
}

// Round 42. In class normal, alice has two jobs (one pending) and bob one; carol's service in class fixed
// lost a share to an eviction; dave's job was refused before it reached a class.
inline msg::rm_state schedule() {
  using ss = msg::share_status;
  using js = msg::job_status;
  msg::rm_state s;
  s.cycle = 42;
  s.jobs = {job("j-bob", "bob", "normal", js::scheduled, {ss::running, ss::running, ss::new_}, 4, 10, 4),
            job("j-alice", "alice", "normal", js::scheduled, {ss::running, ss::preempt}, 1, 5, 4),
            job("j-alice2", "alice", "normal", js::pending, {}, 0, 2, 0, "Waiting for preemptions."),
            job("svc", "carol", "fixed", js::scheduled, {ss::running, ss::evict}, 1, 1, 0),
            job("lost", "dave", "", js::refused, {}, 0, 0, 0, "Cannot find class gpu for the work")};
  return s;
}

// The RM's clock when it sent grouped_schedule() (its envelope ts_ms): reclaim deadlines count from here.
inline constexpr std::uint64_t grouped_sent_at_ms = 1'700'000'000'000;

// Round 43, class normal with share groups. ann (two jobs) and cat are in group physics, bob in bio, dan in
// none; carol's service in class fixed has no group. Two of ann's processes run on under reclaim deadlines
// 1.5 s and 4 s after the state was sent; one of bob's under one 0.2 s before it (passed), and his preempted
// share still carries one (leaving already, so not counted as being reclaimed).
inline msg::rm_state grouped_schedule() {
  using ss = msg::share_status;
  using js = msg::job_status;
  auto in_group = [](msg::job_schedule j, std::string group) {
    j.group = std::move(group);
    return j;
  };
  msg::rm_state s;
  s.cycle = 43;
  s.jobs = {in_group(job("j-ann", "ann", "normal", js::scheduled, {ss::running, ss::running, ss::running}, 3, 8, 6),
                     "physics"),
            in_group(job("j-ann2", "ann", "normal", js::scheduled, {ss::running}, 1, 1, 1), "physics"),
            in_group(job("j-cat", "cat", "normal", js::scheduled, {ss::running, ss::new_}, 2, 2, 2), "physics"),
            in_group(job("j-bob", "bob", "normal", js::scheduled, {ss::running, ss::running, ss::preempt}, 2, 4, 2),
                     "bio"),
            job("j-dan", "dan", "normal", js::scheduled, {ss::running}, 1, 3, 1),
            job("svc", "carol", "fixed", js::scheduled, {ss::running}, 1, 1, 0)};
  s.jobs[0].shares[0].reclaim_at_ms = grouped_sent_at_ms + 4'000;
  s.jobs[0].shares[1].reclaim_at_ms = grouped_sent_at_ms + 1'500;
  s.jobs[3].shares[1].reclaim_at_ms = grouped_sent_at_ms - 200;
  s.jobs[3].shares[2].reclaim_at_ms = grouped_sent_at_ms + 1'000;
  return s;
}

inline msg::rm_cycle cycle(std::string pool, std::uint64_t round) {
  msg::rm_cycle c;
  c.pool = std::move(pool);
  c.cycle = round;
  c.jobs = 5;
  c.nodes = 2;
  c.given = 1;
  c.preempted = 1;
  c.evicted = 1;
  c.how_much_us = 120;
  c.what_of_us = 45;
  c.preempt_us = 7;
  c.defrag_us = 3;
  c.total_us = 200;
  return c;
}

inline msg::rm_event preempt_event(std::string job, std::string share) {
  return {"preempt",
          {{"job", std::move(job)}, {"node", "n1"}, {"reason", "fair share"}, {"share", std::move(share)}}};
}

inline msg::rm_event evict_event(std::string job, std::string share) {
  return {"evict",
          {{"job", std::move(job)}, {"node", "n1"}, {"reason", "node down"}, {"share", std::move(share)}}};
}

}  // namespace rmbus::top::fixtures
