// The checker of rmbus-sim-check can fail: fed a deliberately broken round, it names the rule broken. A checker
// that never fires would make every seed pass.
#include <algorithm>

#include <catch2/catch.hpp>

#include "tools/simcheck/round_checker.hpp"

using namespace rmbus::simcheck;
using rmbus::core::share_status;

namespace {

bool names_rule(const std::vector<violation>& found, const std::string& rule, const std::string& node) {
  return std::any_of(found.begin(), found.end(), [&](const violation& v) { return v.rule == rule && v.node == node; });
}

round_facts two_nodes() {
  round_facts f;
  f.round = 7;
  f.nodes.push_back({"n00", 4, false, false, false, false});
  f.nodes.push_back({"n01", 4, false, false, false, false});
  return f;
}

}  // namespace

TEST_CASE("a round that keeps every rule passes") {
  round_checker c;
  auto f = two_nodes();
  f.processes.push_back({"a.1", "n00", 2, true, false});
  f.plan.push_back({"a", "a.1", "n00", 2, share_status::running});
  f.plan.push_back({"a", "a.2", "n00", 2, share_status::new_share});
  CHECK(c.check(f).empty());
}

TEST_CASE("a new share on a node the intake reports down breaks new_on_dead_node") {
  round_checker c;
  auto f = two_nodes();
  f.nodes[1].down = true;
  f.plan.push_back({"a", "a.1", "n01", 1, share_status::new_share});
  const auto found = c.check(f);
  CHECK(names_rule(found, "new_on_dead_node", "n01"));
  CHECK(found.front().round == 7);
}

TEST_CASE("a new share granted earlier and left on a node since reported down breaks new_on_dead_node") {
  round_checker c;
  auto f = two_nodes();
  f.plan.push_back({"a", "a.1", "n01", 1, share_status::new_share});
  CHECK(c.check(f).empty());  // granted while n01 was up
  f.round = 8;
  f.nodes[1].down = true;
  CHECK(names_rule(c.check(f), "new_on_dead_node", "n01"));  // still new there, never started
  f.round = 9;
  f.processes.push_back({"a.1", "n01", 1, false, false});  // the orchestrator did start it before the silence
  CHECK(c.check(f).empty());
}

TEST_CASE("a new share on a varied-off node breaks new_on_dead_node") {
  round_checker c;
  auto f = two_nodes();
  f.nodes[0].varied_off = true;
  f.plan.push_back({"a", "a.1", "n00", 1, share_status::new_share});
  CHECK(names_rule(c.check(f), "new_on_dead_node", "n00"));
}

TEST_CASE("a node above its order by running processes and new shares breaks over_order") {
  round_checker c;
  auto f = two_nodes();
  f.processes.push_back({"a.1", "n00", 2, true, false});
  f.processes.push_back({"a.2", "n00", 2, true, false});
  f.plan.push_back({"a", "a.1", "n00", 2, share_status::running});
  f.plan.push_back({"a", "a.2", "n00", 2, share_status::running});
  f.plan.push_back({"b", "b.1", "n00", 1, share_status::new_share});  // 5 quanta of 4
  CHECK(names_rule(c.check(f), "over_order", "n00"));
}

TEST_CASE("a process the orchestrator still runs counts, even when the plan has preempted it") {
  round_checker c;
  auto f = two_nodes();
  f.processes.push_back({"a.1", "n01", 4, true, true});
  f.plan.push_back({"a", "a.1", "n01", 4, share_status::preempt});
  f.plan.push_back({"b", "b.1", "n01", 2, share_status::new_share});  // given before a.1 has gone
  CHECK(names_rule(c.check(f), "over_order", "n01"));
}

TEST_CASE("a late start of the orchestrator's own is excused, but must be repaired within two rounds") {
  round_checker c;
  auto f = two_nodes();
  f.nodes[0].rogue_process = true;
  f.processes.push_back({"a.1", "n00", 4, true, false});
  f.processes.push_back({"a.9", "n00", 2, true, false});  // started after the RM withdrew it
  f.plan.push_back({"a", "a.1", "n00", 4, share_status::running});
  f.plan.push_back({"a", "a.9", "n00", 2, share_status::running});
  CHECK(c.check(f).empty());
  f.round = 9;
  f.nodes[0].repair_due = true;
  CHECK(names_rule(c.check(f), "repair_late", "n00"));
  f.plan[1].status = share_status::preempt;  // repaired: the plan holds 4 of 4
  CHECK_FALSE(names_rule(c.check(f), "repair_late", "n00"));
}

TEST_CASE("a process the RM was shown and then dropped breaks process_lost") {
  round_checker c;
  auto f = two_nodes();
  f.processes.push_back({"a.1", "n00", 1, true, false});
  CHECK(names_rule(c.check(f), "process_lost", "n00"));
}

TEST_CASE("a share id granted again after it left the plan breaks share_id_reused") {
  round_checker c;
  auto f = two_nodes();
  f.plan.push_back({"a", "a.1", "n00", 1, share_status::new_share});
  CHECK(c.check(f).empty());
  f.plan.clear();
  CHECK(c.check(f).empty());
  f.plan.push_back({"b", "a.1", "n01", 1, share_status::new_share});
  CHECK(names_rule(c.check(f), "share_id_reused", "n01"));
}
