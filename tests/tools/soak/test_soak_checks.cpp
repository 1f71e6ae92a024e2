// The rules rmbus-soak checks after each restart of rmbus (tools/soak/soak_checks.hpp), over hand-made
// rm.state messages: each test shows a schedule that breaks one rule and one that keeps it.
#include <catch2/catch.hpp>

#include "tools/soak/soak_checks.hpp"

namespace msg = rmbus::messages;
using namespace rmbus::soak;

namespace {

msg::share_schedule share(const std::string& id, const std::string& node, std::uint64_t quanta, msg::share_status st) {
  msg::share_schedule s;
  s.id = id;
  s.node = node;
  s.quanta = quanta;
  s.status = st;
  return s;
}

msg::job_schedule job(const std::string& id, std::vector<msg::share_schedule> shares) {
  msg::job_schedule j;
  j.id = id;
  j.status = msg::job_status::scheduled;
  j.shares = std::move(shares);
  return j;
}

msg::rm_state state(std::vector<msg::job_schedule> jobs) {
  msg::rm_state s;
  s.jobs = msg::schedule_listing(std::move(jobs));
  return s;
}

constexpr auto running = msg::share_status::running;
constexpr auto fresh = msg::share_status::new_;
constexpr auto preempt = msg::share_status::preempt;

}  // namespace

TEST_CASE("recovery counts a process only when listed with its id on its node and not as new") {
  const std::vector<running_process> procs{
      {"j1", "a.1", "s1"}, {"j1", "a.2", "s2"}, {"j2", "a.3", "s1"}, {"j2", "a.4", "s3"}, {"j2", "a.5", "s3"}};
  // a.1 running: recovered; a.2 preempt: recovered and taken back at once; a.3 on another node: lost;
  // a.4 listed as new: not recovered; a.5 absent: lost. 2 of 5 recovered, 3 problems.
  const auto s = state({job("j1", {share("a.1", "s1", 1, running), share("a.2", "s2", 1, preempt)}),
                        job("j2", {share("a.3", "s2", 1, running), share("a.4", "s3", 1, fresh)})});
  const auto c = count_recovered(s, procs);
  CHECK(c.running == 1);
  CHECK(c.preempted == 1);
  CHECK(c.recovered() == 2);
  CHECK(c.problems.size() == 3);

  const auto whole = state({job("j1", {share("a.1", "s1", 1, running), share("a.2", "s2", 1, running)}),
                            job("j2", {share("a.3", "s1", 1, running), share("a.4", "s3", 1, running),
                                       share("a.5", "s3", 1, running)})});
  CHECK(count_recovered(whole, procs).recovered() == 5);
  CHECK(count_recovered(whole, procs).problems.empty());
}

TEST_CASE("a node above its order is reported, counting shares being preempted") {
  const std::map<std::string, std::uint64_t> order{{"s1", 8}, {"s2", 8}};
  // s1: 2 x 2 + 3 running + 2 preempting = 9 quanta > 8; s2: 8 quanta = its order.
  const auto s = state({job("j1", {share("a.1", "s1", 2, running), share("a.2", "s1", 2, running),
                                   share("a.3", "s2", 8, running)}),
                        job("j2", {share("a.4", "s1", 3, fresh), share("a.5", "s1", 2, preempt)})});
  const auto p = over_order(s, order);
  REQUIRE(p.size() == 1);
  CHECK(p[0] == "node s1 holds 9 quanta, its order is 8 (cycle " + std::to_string(s.cycle) +
                ": j1/a.1(2 running) j1/a.2(2 running) j2/a.4(3 new) j2/a.5(2 preempt))");
  const auto ok = state({job("j1", {share("a.1", "s1", 8, running), share("a.3", "s2", 8, running)})});
  CHECK(over_order(ok, order).empty());
}

TEST_CASE("with the orchestrator's processes a share taken back counts only while its process runs") {
  const std::map<std::string, std::uint64_t> order{{"s1", 8}};
  // s1: 6 running + 2 new = 8, its order; a.5 (2 quanta) preempted as well.
  const auto s = state({job("j1", {share("a.1", "s1", 6, running), share("a.2", "s1", 2, fresh)}),
                        job("j2", {share("a.5", "s1", 2, preempt)})});
  // Taken back before it started (the orchestrator runs a.1 only): it holds no memory.
  const std::set<std::string> unstarted{"a.1"};
  CHECK(over_order(s, order, &unstarted).empty());
  // Its process still runs: 10 quanta on a node of 8.
  const std::set<std::string> running_still{"a.1", "a.5"};
  REQUIRE(over_order(s, order, &running_still).size() == 1);
  CHECK(over_order(s, order, &running_still)[0].rfind("node s1 holds 10 quanta, its order is 8", 0) == 0);
  // A running or new share counts whether or not the orchestrator has its process yet.
  const std::set<std::string> none;
  const auto crowded = state({job("j1", {share("a.1", "s1", 6, running), share("a.2", "s1", 3, fresh)})});
  CHECK(over_order(crowded, order, &none).size() == 1);
  // Without the processes every listed share counts (the RM's own accounting).
  CHECK(over_order(s, order).size() == 1);
}

TEST_CASE("a share id may not change job or node, nor come back as new in a later life of the RM") {
  share_ledger ledger;
  CHECK(ledger.observe(state({job("j1", {share("a.1", "s1", 1, fresh)})}), 0).empty());
  // Same life: a.1 still new, then running: fine.
  CHECK(ledger.observe(state({job("j1", {share("a.1", "s1", 1, fresh)})}), 0).empty());
  CHECK(ledger.observe(state({job("j1", {share("a.1", "s1", 1, running)})}), 0).empty());
  // After a restart (life 1) a.1 is recovered as running: fine; a new share b.1: fine.
  CHECK(ledger.observe(state({job("j1", {share("a.1", "s1", 1, running), share("b.1", "s2", 1, fresh)})}), 1).empty());
  // a.1 handed out again as new: reuse.
  CHECK(ledger.observe(state({job("j1", {share("a.1", "s1", 1, fresh)})}), 1).size() == 1);
  // b.1 naming another job, and on another node: reuse.
  CHECK(ledger.observe(state({job("j2", {share("b.1", "s2", 1, running)})}), 1).size() == 1);
  CHECK(ledger.observe(state({job("j1", {share("b.1", "s3", 1, running)})}), 1).size() == 1);
  CHECK(ledger.size() == 2);
}

TEST_CASE("processes per job count new and running shares only") {
  const auto s = state({job("j1", {share("a.1", "s1", 1, running), share("a.2", "s1", 1, fresh),
                                   share("a.3", "s1", 1, preempt)}),
                        job("j2", {share("a.4", "s1", 1, preempt)})});
  const std::map<std::string, std::uint64_t> want{{"j1", 2}};
  CHECK(processes_per_job(s) == want);
}

TEST_CASE("the fair share target: weighted water-fill of the quanta, one process of slack per job") {
  const std::vector<soak_class> classes{{"normal", 100, 10}, {"low", 50, 10}};
  // 48 quanta. normal (weight 100): u1 wants 40 (j1, order 2 x 20). low (weight 50): u2 wants 30 (j2, order 1
  // x 30). Classes: 48 x 100/150 = 32 for normal, 16 for low (both want more). u1 fair 32 +-2, u2 16 +-1.
  const std::vector<soak_job> jobs{{"j1", "u1", "normal", 2, 20}, {"j2", "u2", "low", 1, 30}};
  auto shares_of = [](const std::string& prefix, int n, std::uint64_t quanta) {
    std::vector<msg::share_schedule> out;
    for (int i = 0; i < n; ++i) out.push_back(share(prefix + std::to_string(i), "s1", quanta, running));
    return out;
  };
  std::string why;
  // u1 16 processes x 2 = 32, u2 16: exact.
  CHECK(at_fair_share(state({job("j1", shares_of("a.", 16, 2)), job("j2", shares_of("b.", 16, 1))}), jobs, classes, 48));
  // u1 15 x 2 = 30 (off by 2 = one process): still fair; u2 17 (off by 1): still fair.
  CHECK(at_fair_share(state({job("j1", shares_of("a.", 15, 2)), job("j2", shares_of("b.", 17, 1))}), jobs, classes, 48));
  // u1 12 x 2 = 24 (off by 8), u2 24: not fair.
  CHECK_FALSE(at_fair_share(state({job("j1", shares_of("a.", 12, 2)), job("j2", shares_of("b.", 24, 1))}), jobs,
                            classes, 48, &why));
  CHECK(why == "u1 holds 24 quanta, fair share 32 (+-2)");
}
