// Share groups between a FAIR_SHARE class and its users (IBM EGO's consumer tree, shared/seeds/002): the
// seed's own example in quanta, priorities and water-filling through the levels, and the equivalence of a
// one-level tree with DUCC's class > user > job split on random workloads.
#include <catch2/catch.hpp>

#include <regex>
#include <set>

#include "core/share_tree.hpp"
#include "tests/core/random_spec.hpp"
#include "tests/core/scheduler_harness.hpp"
#include "tools/bench/workload.hpp"

using namespace rmbus;
using namespace rmbus::test;

namespace {

share_group group(std::string name, std::string parent, int weight, int priority, std::vector<std::string> users = {}) {
  share_group g;
  g.name = std::move(name);
  g.parent = std::move(parent);
  g.weight = weight;
  g.priority = priority;
  g.users = std::move(users);
  return g;
}

// The seed's tree under class "normal": A 1 and B 2 at share priority 0, C at the worse priority 1; under A,
// A1 1 and A2 2; under B, B1 at priority 0 and B2 at the worse priority 1. One user (and job) per leaf.
scheduler_config seed_tree() {
  auto cfg = one_pool({fair_class("normal")});
  cfg.groups = {group("A", "normal", 1, 0),           group("B", "normal", 2, 0),
                group("C", "normal", 1, 1, {"uc"}),   group("A1", "A", 1, 0, {"ua1"}),
                group("A2", "A", 2, 0, {"ua2"}),      group("B1", "B", 1, 0, {"ub1"}),
                group("B2", "B", 1, 1, {"ub2"})};
  return cfg;
}

void seed_jobs(harness& h) {
  for (const char* leaf : {"a1", "a2", "b1", "b2", "c"}) h.job(leaf, std::string("u") + leaf, "normal", 1);
}

const group_load& load_of(const pool_view& v, const std::string& name) {
  for (const auto& g : v.groups)
    if (g.name == name) return g;
  throw std::runtime_error("no group load for " + name);
}

}  // namespace

TEST_CASE("the seed's example in quanta: A 1/3, B 2/3, C 0, then A1 1/9, A2 2/9, B1 2/3, B2 0") {
  harness h(seed_tree());
  h.machines("n", 9, 4);  // 9 machines of 4 quanta = 36 quanta; every job has order 1 and wants 1000
  seed_jobs(h);
  h.round();
  // Root: C's priority is worse, so A and B share 36 by 1:2: A = 36 * 1/3 = 12, B = 36 * 2/3 = 24, C = 0.
  // Under A: A1 = 12 * 1/3 = 4 (36/9), A2 = 12 * 2/3 = 8 (2 * 36/9).
  // Under B: B1 is served first and can use all of B's 24 (2/3 of 36); B2 = 0.
  CHECK(h.count("a1") == 4);
  CHECK(h.count("a2") == 8);
  CHECK(h.count("b1") == 24);
  CHECK(h.count("b2") == 0);
  CHECK(h.count("c") == 0);
  // Pure fair shares follow the same fractions (order 1: quanta = processes).
  CHECK(h.plan("a1").fair_share == 4);
  CHECK(h.plan("a2").fair_share == 8);
  CHECK(h.plan("b1").fair_share == 24);
  CHECK(h.plan("b2").fair_share == 0);
  CHECK(h.plan("c").fair_share == 0);
  // The plan names each job's innermost group.
  CHECK(h.last.group_of(h.plan("a2")) == "A2");
  CHECK(h.last.group_of(h.plan("c")) == "C");
  // B2 waits with a reason naming its group (the award of 0 is explain's: it moves with other work).
  CHECK(h.plan("b2").reason == reason_code::no_share_counted);
  CHECK(
      h.plan("b2").reason_text ==
      "fair share counted nothing: user ub2's share of group B2 in class normal is smaller than one process: "
      "a process needs 1 (1 GB)");
  // qload's view lists every group with work: awards 12 / 24 / 0 at the root, 4 / 8 and 24 / 0 below.
  const auto v = h.s.view();
  REQUIRE(v.groups.size() == 7);
  CHECK(load_of(v, "A").awarded_by_order.at(1) == 12);
  CHECK(load_of(v, "B").awarded_by_order.at(1) == 24);
  CHECK(load_of(v, "C").awarded_by_order.at(1) == 0);
  CHECK(load_of(v, "A1").awarded_by_order.at(1) == 4);
  CHECK(load_of(v, "A2").awarded_by_order.at(1) == 8);
  CHECK(load_of(v, "B2").awarded_by_order.at(1) == 0);
  CHECK(load_of(v, "A2").parent == "A");
  CHECK(load_of(v, "A2").depth == 2);
  CHECK(load_of(v, "B").pure_fair_share_qshares == 24);
  // Parents are listed before their children.
  CHECK(v.groups.front().name == "A");
}

TEST_CASE("explain gives the path from class to job with each level's share") {
  harness h(seed_tree());
  h.machines("n", 9, 4);
  seed_jobs(h);
  h.round();
  const auto e = h.s.explain(job_id("a2"));
  CHECK(e.group == "A2");
  REQUIRE(e.path.size() == 5);
  // class normal 36 > group A 12 > group A2 8 > user ua2 8 > job a2 8 (quanta awarded)
  CHECK(e.path[0].level == "class");
  CHECK(e.path[0].awarded_qshares == 36);
  CHECK(e.path[1].name == "A");
  CHECK(e.path[1].awarded_qshares == 12);
  CHECK(e.path[2].name == "A2");
  CHECK(e.path[2].weight == 2);
  CHECK(e.path[2].awarded_qshares == 8);
  CHECK(e.path[3].level == "user");
  CHECK(e.path[3].name == "ua2");
  CHECK(e.path[3].awarded_qshares == 8);
  CHECK(e.path[4].level == "job");
  CHECK(e.path[4].awarded_qshares == 8);
  CHECK(e.text().find("group A 12 of") != std::string::npos);
  // Without groups the path is class > user > job.
  harness plain(one_pool({fair_class("normal")}));
  plain.machines("n", 4, 1);
  plain.job("j", "u", "normal", 1);
  plain.round();
  const auto p = plain.s.explain(job_id("j"));
  CHECK(p.group.empty());
  REQUIRE(p.path.size() == 3);
  CHECK(p.path[1].level == "user");
  CHECK(p.path[2].awarded_qshares == 4);
}

TEST_CASE("what a better share priority cannot use goes to the worse one, at every level") {
  harness h(seed_tree());
  h.machines("n", 9, 4);  // 36 quanta
  seed_jobs(h);
  h.work[job_id("b1")].items_total = 10;  // B1 wants 10 processes
  h.round();
  // B still deserves 24 against A's 12; B1 takes its 10 and B2, served after B1, the other 24 - 10 = 14.
  CHECK(h.count("b1") == 10);
  CHECK(h.count("b2") == 14);
  CHECK(h.count("a1") == 4);
  CHECK(h.count("a2") == 8);
  CHECK(h.count("c") == 0);
}

TEST_CASE("water-filling through the tree: what A and B cannot use goes to C") {
  harness h(seed_tree());
  h.machines("n", 9, 4);  // 36 quanta
  seed_jobs(h);
  for (const char* j : {"a1", "a2"}) h.work[job_id(j)].items_total = 2;  // A wants 2 + 2 = 4
  for (const char* j : {"b1", "b2"}) h.work[job_id(j)].items_total = 3;  // B wants 3 + 3 = 6
  h.round();
  // A and B (priority 0) are satisfied with 4 and 6; C (priority 1) gets the rest: 36 - 4 - 6 = 26.
  CHECK(h.count("a1") == 2);
  CHECK(h.count("a2") == 2);
  CHECK(h.count("b1") == 3);
  CHECK(h.count("b2") == 3);
  CHECK(h.count("c") == 26);
}

TEST_CASE("ungrouped users stand beside the groups: weight 1, priority 0") {
  auto cfg = one_pool({fair_class("normal")});
  cfg.groups = {group("proj", "normal", 2, 0, {"p1", "p2"}), group("first", "normal", 1, -1, {"f"})};
  harness h(cfg);
  h.machines("n", 30, 1);  // 30 quanta
  h.job("f", "f", "normal", 1).items_total = 6;  // group "first" (priority -1) wants 6
  h.job("p1", "p1", "normal", 1);
  h.job("p2", "p2", "normal", 1);
  h.job("x", "loner", "normal", 1);  // no group: directly under the class
  h.round();
  // "first" is served before everyone at priority 0: 6. The other 24 go to proj (weight 2) and loner
  // (weight 1): proj = 24 * 2/3 = 16, split 8 / 8 between its users; loner = 24 * 1/3 = 8.
  CHECK(h.count("f") == 6);
  CHECK(h.count("p1") == 8);
  CHECK(h.count("p2") == 8);
  CHECK(h.count("x") == 8);
  CHECK(h.last.group_of(h.plan("x")).empty());
  CHECK(h.last.group_of(h.plan("p1")) == "proj");
}

TEST_CASE("share_tree::of_class keeps only the class's own tree, parents first") {
  const std::vector<share_group> cfg = {group("deep", "mid", 1, 0, {"u"}), group("mid", "top", 1, 0),
                                        group("top", "normal", 3, 0), group("other", "high", 1, 0, {"u"})};
  const auto t = share_tree::of_class(cfg, "normal");
  REQUIRE(t.groups.size() == 3);
  CHECK(t.groups[0].name == "top");
  CHECK(t.groups[1].name == "mid");
  CHECK(t.groups[1].parent == 0);
  CHECK(t.groups[2].name == "deep");
  CHECK(t.groups[2].depth == 3);
  CHECK(t.group_of("u") == 2);
  CHECK(t.group_of("nobody") == -1);
  CHECK(share_tree::of_class(cfg, "high").group_of("u") == 0);
  CHECK(share_tree::of_class(cfg, "low").empty());
}

// ---- a one-level tree gives DUCC's counts --------------------------------------------------------------

namespace {

enum class one_level { group_per_user, one_group, chain_of_two };

// The workload's config with every FAIR_SHARE class given a one-level tree of the chosen shape.
scheduler_config with_one_level(scheduler_config cfg, const std::set<std::string>& users, one_level shape) {
  for (const auto& c : cfg.classes) {
    if (c.policy != policy::fair_share) continue;
    const std::vector<std::string> all(users.begin(), users.end());
    switch (shape) {
      case one_level::group_per_user:
        // Named so that the groups sort as their users do (equal weights tie-break on the name).
        for (const auto& u : users) cfg.groups.push_back(group(c.name + "/" + u, c.name, 1, 0, {u}));
        break;
      case one_level::one_group:
        cfg.groups.push_back(group(c.name + "/all", c.name, 7, 0, all));
        break;
      case one_level::chain_of_two:
        cfg.groups.push_back(group(c.name + "/outer", c.name, 3, 2));
        cfg.groups.push_back(group(c.name + "/inner", c.name + "/outer", 5, 1, all));
        break;
    }
  }
  return cfg;
}

std::vector<schedule_plan> run(const scheduler_config& cfg, const bench::workload& w, int rounds) {
  nodepool_scheduler s("default", cfg, "p");
  for (const auto& m : w.machines) s.update_machine(m);
  bench::orchestrator_model orch(w.arrivals);
  std::vector<schedule_plan> plans;
  for (int r = 0; r < rounds; ++r) {
    s.apply_work(orch.begin_round(r));
    plans.push_back(s.schedule({orch.now_ms(), {}}));
    orch.observe(plans.back());
  }
  return plans;
}

}  // namespace

TEST_CASE("a one-level tree gives today's counts on random workloads") {
  int grouped_jobs = 0, compared = 0;
  const std::regex group_part("of group [^ ]+ in ");
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    const auto spec = random_spec(seed);
    const auto w = bench::generate_workload(spec);
    std::set<std::string> users;
    for (const auto& a : w.arrivals) users.insert(a.item.user.str());
    const auto today = run(w.config, w, 8);
    for (auto shape : {one_level::group_per_user, one_level::one_group, one_level::chain_of_two}) {
      const auto cfg = with_one_level(w.config, users, shape);
      auto grouped = run(cfg, w, 8);
      INFO("seed " << seed << ", shape " << static_cast<int>(shape));
      REQUIRE(grouped.size() == today.size());
      for (std::size_t r = 0; r < grouped.size(); ++r) {
        INFO("round " << r);
        for (auto& jp : grouped[r].jobs) {
          grouped_jobs += jp.group >= 0 ? 1 : 0;
          // What a tree adds to the plan: the group's name, in the plan and in a "counted nothing" text.
          jp.group = -1;
          jp.reason_text = std::regex_replace(jp.reason_text, group_part, "of ");
        }
        grouped[r].group_names.clear();
        // Same counts, pure fair shares, shares, reasons: the whole plan.
        REQUIRE(grouped[r] == today[r]);
        ++compared;
      }
    }
  }
  CHECK(compared == 40 * 3 * 8);
  CHECK(grouped_jobs > 1000);  // the group path really ran
}
