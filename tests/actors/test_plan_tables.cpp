// Publication's tables of the pools' plans (actors/plan_tables.hpp), fed by real core schedulers: change plans
// (the jobs a round changed, the ids gone) give the same tables and node holdings as full plans over random
// sequences of work; a lost or late change plan breaks the chain and a full plan restores it; a refused
// round is taken back exactly, and the guard looks only at the nodes a change touched.
#include <catch2/catch.hpp>
#include <random>
#include <set>
#include <string>

#include "actors/internal.hpp"
#include "actors/plan_tables.hpp"
#include "config/loader.hpp"
#include "core/nodepool_scheduler.hpp"

using namespace rmbus;
using namespace rmbus::actors;
namespace msg = rmbus::messages;

namespace {

const char* config_text = R"toml(
[scheduling]
quantum = "1G"

[[nodepool]]
name = "alpha"
nodes = ["a1", "a2", "a3"]

[[nodepool]]
name = "beta"
nodes = ["b1", "b2"]

[[class]]
name = "normal"
policy = "FAIR_SHARE"
nodepool = "alpha"
priority = 10
default = true

[[class]]
name = "batch-b"
policy = "FAIR_SHARE"
nodepool = "beta"
priority = 10
)toml";

const std::vector<std::string>& nodes_of(const std::string& pool) {
  static const std::vector<std::string> alpha{"a1", "a2", "a3"}, beta{"b1", "b2"};
  return pool == "alpha" ? alpha : beta;
}

// A pool's scheduler with the numbering of actors/pool_scheduler.cpp: the plan of a round as a full plan and
// as the change plan the scheduler sends.
struct pool_under_test {
  std::string pool;
  core::nodepool_scheduler sched;
  core::work_map work;
  std::uint64_t seq = 0;

  pool_under_test(const config::rm_config& cfg, std::string name)
      : pool(std::move(name)), sched(pool, cfg.scheduling, "p-" + pool) {
    for (const auto& n : nodes_of(pool)) sched.update_machine({core::machine_id{n}, "", 4 * 1024, false});
  }

  std::pair<msg::pool_plan, msg::pool_plan> round(std::int64_t now_ms) {
    sched.apply_work(work);
    core::round_input in;
    in.now_ms = now_ms;
    const auto& plan = sched.schedule(in);
    msg::pool_plan full, change;
    full.pool = change.pool = pool;
    full.generation = change.generation = 1;
    ++seq;
    full.plan_seq = change.plan_seq = seq;
    change.base_plan_seq = seq - 1;  // 0 for the first: then it is full too
    for (const auto& j : plan.jobs) full.jobs.push_back(to_schedule(j, plan.group_of(j)));
    for (auto k : sched.plan_changed_entries()) change.jobs.push_back(to_schedule(plan.jobs[k], plan.group_of(plan.jobs[k])));
    if (!change.full())
      for (const auto& id : sched.plan_removed_jobs()) change.removed_jobs.push_back(id.str());
    return {full, change};
  }
};

// The orchestrator: a process started for each new share, gone for each preempted or evicted one.
void follow(core::work_map& work, const msg::pool_plan& plan) {
  for (const auto& j : plan.jobs) {
    auto it = work.find(core::job_id{j.id});
    if (it == work.end()) continue;
    auto& procs = it->second.processes;
    for (const auto& sh : j.shares) {
      auto p = std::find_if(procs.begin(), procs.end(), [&](const auto& x) { return x.id.str() == sh.id; });
      if (sh.status == msg::share_status::new_ && p == procs.end()) {
        core::process_report r;
        r.id = core::share_id{sh.id};
        r.node = core::machine_id{sh.node};
        r.state = core::process_state::running;
        procs.push_back(r);
      } else if ((sh.status == msg::share_status::preempt || sh.status == msg::share_status::evict) &&
                 p != procs.end()) {
        procs.erase(p);
      }
    }
  }
}

std::optional<std::uint64_t> four(std::string_view) { return 4; }

msg::share_schedule share(std::string id, std::string node, std::uint64_t q, msg::share_status s) {
  return msg::share_schedule{std::move(id), std::move(node), q, s, std::nullopt};
}

msg::job_schedule job(std::string id, std::vector<msg::share_schedule> shares) {
  msg::job_schedule j;
  j.id = std::move(id);
  j.status = msg::job_status::scheduled;
  j.shares = std::move(shares);
  return j;
}

// Pool alpha's plan `seq` of generation 1: full for seq 1, else a change on plan seq - 1.
msg::pool_plan alpha_plan(std::uint64_t seq, std::vector<msg::job_schedule> jobs,
                          std::vector<std::string> removed = {}) {
  msg::pool_plan p;
  p.pool = "alpha";
  p.generation = 1;
  p.plan_seq = seq;
  p.base_plan_seq = seq - 1;
  p.jobs = std::move(jobs);
  p.removed_jobs = std::move(removed);
  return p;
}

}  // namespace

TEST_CASE("change plans give publication the same tables and holdings as full plans, and a lost one is recovered") {
  const auto cfg = config::parse_native(config_text, "test.toml");
  std::mt19937 rng(GENERATE(11u, 12u, 13u));
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<pool_under_test> pools;
  pools.emplace_back(cfg, "alpha");
  pools.emplace_back(cfg, "beta");
  plan_tables by_changes, by_full;
  plan_tables by_taking;  // the same plans as by_changes, each given up to the table (apply(pool_plan&&))
  auto give_up = [&](msg::pool_plan p) {
    REQUIRE(by_taking.receive(p).follows);
    by_taking.apply(std::move(p));
    // Its entries went into the table, not copies of them: the plan is left without their shares.
    for (const auto& j : p.jobs) CHECK(j.shares.empty());
  };
  int next_id = 0, gaps = 0;
  bool starts_seen = false;
  std::size_t sent_changes = 0, sent_full = 0;
  for (int round = 1; round <= 60; ++round) {
    INFO("round " << round);
    std::set<std::string> lost;  // pools whose change plan of this round was lost
    for (auto& p : pools) {
      INFO("pool " << p.pool);
      for (int k = pick(0, 3); k > 0; --k) {
        if (pick(0, 2) > 0 || p.work.empty()) {
          core::work_item w;
          w.id = core::job_id{p.pool + "-j" + std::to_string(next_id++)};
          w.user = core::user_id{"u" + std::to_string(pick(1, 3))};
          w.class_name = p.pool == "alpha" ? "normal" : "batch-b";
          w.memory_mb = static_cast<std::uint64_t>(pick(1, 2)) * 1024;
          w.submitted_ms = 1000 + round;
          w.max_processes = pick(1, 4);
          w.items_total = 100;
          p.work[w.id] = w;
        } else {
          auto it = p.work.begin();
          std::advance(it, pick(0, static_cast<int>(p.work.size()) - 1));
          p.work.erase(it);
        }
      }
      auto [full, change] = p.round(10'000 + round);
      follow(p.work, full);
      sent_full += full.jobs.size();
      sent_changes += change.jobs.size() + change.removed_jobs.size();
      REQUIRE(by_full.receive(full).follows);
      by_full.apply(full);
      // Now and then a change plan is lost on the way: the next one does not follow, and a full plan (what
      // the scheduler sends when asked) brings the table back.
      if (round > 1 && pick(0, 9) == 0) {
        ++gaps;
        lost.insert(p.pool);
        continue;
      }
      auto v = by_changes.receive(change);
      if (!v.follows) {
        CHECK(v.reason.find("the last plan taken is") != std::string::npos);
        CHECK_FALSE(by_changes.in_step(p.pool));
        auto again = full;  // the full plan asked for, numbered on
        again.plan_seq = ++p.seq;
        REQUIRE(by_changes.receive(again).follows);
        by_changes.apply(again);
        by_taking.break_chain(p.pool);
        give_up(again);
        // The scheduler's chain goes on from the full plan.
        continue;
      }
      by_changes.apply(change);
      give_up(change);
    }
    // Every job applied names its entry in the table as its version now (none: gone), the same as a lookup.
    for (const auto* t : {&by_full, &by_changes, &by_taking})
      for (const auto& [pool, jobs] : t->applied()) {
        const auto* table = t->table(pool);
        REQUIRE(table != nullptr);
        for (const auto& [id, applied] : jobs) {
          const auto in_table = table->find(id);
          CHECK(applied.now == (in_table == table->end() ? nullptr : &in_table->second));
        }
      }
    by_full.commit();
    by_changes.commit();
    by_taking.commit();
    for (const auto& p : pools) {
      if (lost.count(p.pool)) continue;  // a round behind until its next plan
      // Both tables equal the scheduler's whole plan of the round.
      REQUIRE(by_changes.table(p.pool) != nullptr);
      REQUIRE(*by_changes.table(p.pool) == *by_full.table(p.pool));
      REQUIRE(by_taking.table(p.pool) != nullptr);
      REQUIRE(*by_taking.table(p.pool) == *by_full.table(p.pool));
      for (const auto& n : nodes_of(p.pool)) {
        CHECK(by_changes.held(n) == by_full.held(n));
        CHECK(by_changes.starting(n) == by_full.starting(n));
        CHECK(by_taking.held(n) == by_full.held(n));
        CHECK(by_taking.starting(n) == by_full.starting(n));
        starts_seen = starts_seen || by_full.starting(n) > 0;
      }
    }
  }
  CHECK(gaps > 0);
  // The point of it: the change plans carried a fraction of what full plans did.
  CHECK(sent_changes * 3 < sent_full);
  std::uint64_t held = 0;
  for (const auto& p : pools)
    for (const auto& n : nodes_of(p.pool)) held += by_full.held(n);
  CHECK(held > 0);  // the schedules placed work
  CHECK(starts_seen);  // and some of it was starting when compared
}

TEST_CASE("a refused round is taken back exactly, and the guard looks only at the nodes a change touched") {
  plan_tables t;
  msg::pool_plan first;
  first.pool = "alpha";
  first.generation = 1;
  first.plan_seq = 1;
  first.jobs = {job("a", {share("a.1", "n1", 2, msg::share_status::running)}),
                job("b", {share("b.1", "n2", 4, msg::share_status::new_)}),
                // n3 is above its order of 4 by running processes alone: not overbooked (nothing starts there)
                job("c", {share("c.1", "n3", 4, msg::share_status::running), share("c.2", "n3", 2, msg::share_status::running)})};
  REQUIRE(t.receive(first).follows);
  t.apply(first);
  CHECK(t.overbooked(four).empty());
  t.commit();
  CHECK(t.held("n1") == 2);
  CHECK(t.held("n3") == 6);

  // A change that puts 4 quanta more on n1 (6 of 4), removes b, and evicts nothing.
  msg::pool_plan change;
  change.pool = "alpha";
  change.generation = 1;
  change.plan_seq = 2;
  change.base_plan_seq = 1;
  change.jobs = {job("d", {share("d.1", "n1", 4, msg::share_status::new_)})};
  change.removed_jobs = {"b"};
  REQUIRE(t.receive(change).follows);
  const auto before = *t.table("alpha");
  t.apply(change);
  CHECK(t.held("n1") == 6);
  CHECK(t.held("n2") == 0);
  auto found = t.overbooked(four);
  REQUIRE(found.size() == 1);  // n1 only: n3 was not touched, and is not starting anything
  CHECK(found[0].node == "n1");
  CHECK(found[0].held == 6);
  CHECK(found[0].shares == std::vector<std::string>{"a.1", "d.1"});
  CHECK(t.touching({"n1"}) == std::vector<std::string>{"alpha"});
  CHECK(t.touching({"n3"}).empty());
  // When a node's order fell, naming it makes the guard look there too.
  CHECK(t.overbooked([](std::string_view n) -> std::optional<std::uint64_t> { return n == "n2" ? 0 : 8; }, {"n3"}).empty());

  t.rollback("alpha");
  CHECK(*t.table("alpha") == before);
  CHECK(t.held("n1") == 2);
  CHECK(t.held("n2") == 4);
  CHECK(t.overbooked(four).empty());
  t.break_chain("alpha");
  // The scheduler's next change builds on the refused plan: not taken until a full plan comes.
  msg::pool_plan next = change;
  next.plan_seq = 3;
  next.base_plan_seq = 2;
  next.removed_jobs.clear();
  CHECK_FALSE(t.receive(next).follows);
  msg::pool_plan whole = first;
  whole.plan_seq = 4;
  REQUIRE(t.receive(whole).follows);
  // A change plan of another generation does not follow either.
  msg::pool_plan other = next;
  other.generation = 2;
  other.plan_seq = 5;
  other.base_plan_seq = 4;
  auto v = t.receive(other);
  CHECK_FALSE(v.follows);
  CHECK(v.reason.find("generation 2") != std::string::npos);

  // A full plan replaces the table: every job before is remembered as it was (the versions moved out of the
  // table), the plan's new jobs as new, and a rollback gives the table back exactly.
  msg::pool_plan replacing;
  replacing.pool = "alpha";
  replacing.generation = 1;
  replacing.plan_seq = 6;
  replacing.jobs = {job("a", {share("a.1", "n1", 3, msg::share_status::running)}),
                    job("e", {share("e.1", "n2", 1, msg::share_status::new_)})};
  REQUIRE(t.receive(replacing).follows);
  const auto before_full = *t.table("alpha");
  t.apply(replacing);
  CHECK(*t.table("alpha") == plan_tables::job_table{{"a", replacing.jobs[0]}, {"e", replacing.jobs[1]}});
  CHECK(t.held("n1") == 3);
  CHECK(t.held("n3") == 0);
  const auto& remembered = t.applied().at("alpha");
  CHECK(remembered.size() == 4);  // a, b and c before, e new
  REQUIRE(remembered.at("a").before != nullptr);
  CHECK(*remembered.at("a").before == before_full.at("a"));
  REQUIRE(remembered.at("c").before != nullptr);
  CHECK(*remembered.at("c").before == before_full.at("c"));
  CHECK(remembered.at("e").before == nullptr);
  // And each one's version now is the table's entry itself, or none for a job gone.
  CHECK(remembered.at("a").now == &t.table("alpha")->at("a"));
  CHECK(remembered.at("e").now == &t.table("alpha")->at("e"));
  CHECK(remembered.at("c").now == nullptr);
  t.rollback("alpha");
  CHECK(*t.table("alpha") == before_full);
  CHECK(t.held("n1") == 2);
  CHECK(t.held("n3") == 6);
  CHECK(t.applied().empty());

  // A pool dropped by reconfiguration takes its holdings along.
  t.drop("alpha");
  CHECK(t.table("alpha") == nullptr);
  CHECK(t.held("n3") == 0);
}

TEST_CASE("the guard looks at the nodes counted up since the last commit and those named, not those counted down") {
  plan_tables t;
  // Job a starts 3 quanta on n1 and 3 on n2.
  const auto first = alpha_plan(1, {job("a", {share("a.1", "n1", 3, msg::share_status::new_),
                                              share("a.2", "n2", 3, msg::share_status::new_)})});
  REQUIRE(t.receive(first).follows);
  t.apply(first);
  CHECK(t.overbooked(four).empty());
  t.commit();

  // n1's order falls to 2 (its owner says so with the next round), and job a gives up its share on n2:
  // n2 was counted down only, and n1 not at all, so neither is looked at unless named.
  const auto n1_fell = [](std::string_view n) -> std::optional<std::uint64_t> { return n == "n1" ? 2 : 4; };
  const auto change = alpha_plan(2, {job("a", {share("a.1", "n1", 3, msg::share_status::new_)})});
  REQUIRE(t.receive(change).follows);
  t.apply(change);
  CHECK(t.held("n2") == 0);
  CHECK(t.overbooked(n1_fell).empty());
  const auto named = t.overbooked(n1_fell, {"n1", "n2"});
  REQUIRE(named.size() == 1);
  CHECK(named[0].node == "n1");
  CHECK(named[0].held == 3);
  CHECK(named[0].shares == std::vector<std::string>{"a.1"});
  t.commit();

  // A node counted up and then down again within one round is looked at with its holding at the end.
  const auto up = alpha_plan(3, {job("b", {share("b.1", "n2", 5, msg::share_status::new_)})});
  const auto down = alpha_plan(4, {job("b", {share("b.1", "n2", 1, msg::share_status::new_)})});
  REQUIRE(t.receive(up).follows);
  t.apply(up);
  REQUIRE(t.overbooked(four).size() == 1);  // n2 at 5 of 4
  REQUIRE(t.receive(down).follows);
  t.apply(down);
  CHECK(t.overbooked(four).empty());
  t.commit();
  CHECK(t.held("n2") == 1);

  // Counted down to nothing and committed, a node holds nothing, and counts up again from there.
  const auto gone = alpha_plan(5, {}, {"b"});
  REQUIRE(t.receive(gone).follows);
  t.apply(gone);
  t.commit();
  CHECK(t.held("n2") == 0);
  CHECK(t.starting("n2") == 0);
  const auto again = alpha_plan(6, {job("c", {share("c.1", "n2", 6, msg::share_status::new_)})});
  REQUIRE(t.receive(again).follows);
  t.apply(again);
  const auto found = t.overbooked(four);
  REQUIRE(found.size() == 1);
  CHECK(found[0].node == "n2");
  CHECK(found[0].held == 6);
}
