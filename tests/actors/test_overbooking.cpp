// Publication's last line of defence (actors/overbooking.hpp), fed schedules directly: a node that a new
// share would put above its order is found with the share ids that make it so; evicted shares are not held,
// and a node above its order by running processes alone (what the orchestrator reported) is not refused.
#include <map>

#include <catch2/catch.hpp>

#include "actors/overbooking.hpp"

namespace msg = rmbus::messages;
using namespace rmbus::actors;

namespace {

msg::job_schedule job(const std::string& id, std::vector<msg::share_schedule> shares) {
  msg::job_schedule j;
  j.id = id;
  j.status = msg::job_status::scheduled;
  j.shares = std::move(shares);
  return j;
}

msg::share_schedule share(const std::string& id, const std::string& node, std::uint64_t quanta,
                          msg::share_status status = msg::share_status::running) {
  return {id, node, quanta, status, std::nullopt};
}

node_quanta_lookup orders(std::map<std::string, std::uint64_t> m) {
  return [m = std::move(m)](std::string_view node) -> std::optional<std::uint64_t> {
    auto it = m.find(std::string{node});
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

TEST_CASE("a schedule within every node's order passes") {
  // n01 (order 2): 1 + 1 new; n02 (order 4): 2 new + 2 being preempted.
  const auto fresh = msg::share_status::new_;
  const std::vector<msg::job_schedule> jobs{
      job("a", {share("a.1", "n01", 1, fresh), share("a.2", "n01", 1, fresh), share("a.3", "n02", 2, fresh)}),
      job("b", {share("b.1", "n02", 2, msg::share_status::preempt)})};
  CHECK(find_overbooked_nodes(jobs, orders({{"n01", 2}, {"n02", 4}})).empty());
}

TEST_CASE("two generations of shares on one node are found, with every share id") {
  // The failing run of the overload issue: n01 of order 2 listed with two shares of each generation.
  const std::vector<msg::job_schedule> jobs{
      job("j1", {share("old-0.1", "n01", 1), share("old-0.2", "n01", 1), share("new-0.1", "n01", 1, msg::share_status::new_),
                 share("new-0.2", "n01", 1, msg::share_status::new_), share("old-0.3", "n02", 1)})};
  const auto found = find_overbooked_nodes(jobs, orders({{"n01", 2}, {"n02", 2}}));
  REQUIRE(found.size() == 1);
  CHECK(found[0].node == "n01");
  CHECK(found[0].quanta == 2);
  CHECK(found[0].held == 4);
  CHECK(found[0].shares == std::vector<std::string>{"old-0.1", "old-0.2", "new-0.1", "new-0.2"});
  CHECK(describe(found) == "n01 holds 4 of 2 quanta (old-0.1 running, old-0.2 running, new-0.1 new, new-0.2 new)");
}

TEST_CASE("a share being preempted still holds its node, an evicted one does not") {
  // order 2: a new share of 1 beside 2 quanta being preempted = 3 > 2 (the new process would start before
  // the preempted one stops), while beside 2 evicted quanta it is 1 (a node back smaller lists the shares
  // above its new size as evict).
  const std::vector<msg::job_schedule> preempting{
      job("a", {share("a.1", "n01", 1, msg::share_status::new_), share("a.2", "n01", 2, msg::share_status::preempt)})};
  CHECK(find_overbooked_nodes(preempting, orders({{"n01", 2}})).size() == 1);
  const std::vector<msg::job_schedule> evicting{
      job("a", {share("a.1", "n01", 1, msg::share_status::new_), share("a.2", "n01", 2, msg::share_status::evict)})};
  CHECK(find_overbooked_nodes(evicting, orders({{"n01", 2}})).empty());
}

TEST_CASE("a node above its order by running processes alone is not refused: publishing it starts nothing") {
  // The orchestrator started a process late and the RM recovered it: 3 running quanta on a node of 2. The
  // schedule must go out, so that the preemption that resolves it can.
  const std::vector<msg::job_schedule> jobs{
      job("a", {share("a.1", "n01", 2), share("a.2", "n01", 1, msg::share_status::preempt)})};
  CHECK(find_overbooked_nodes(jobs, orders({{"n01", 2}})).empty());
}

TEST_CASE("one share id listed twice is counted twice, and nodes of unknown order are not judged") {
  const std::vector<msg::job_schedule> jobs{job("a", {share("a.1", "n01", 2, msg::share_status::new_)}),
                                            job("b", {share("a.1", "n01", 2, msg::share_status::new_)}),
                                            job("c", {share("c.1", "ghost", 64, msg::share_status::new_)})};
  const auto found = find_overbooked_nodes(jobs, orders({{"n01", 2}}));
  REQUIRE(found.size() == 1);
  CHECK(found[0].held == 4);
}

TEST_CASE("overbooked nodes come in name order") {
  const auto fresh = msg::share_status::new_;
  const std::vector<msg::job_schedule> jobs{
      job("a", {share("a.1", "z9", 2, fresh), share("a.2", "b2", 2, fresh), share("a.3", "m5", 2, fresh)})};
  const auto found = find_overbooked_nodes(jobs, orders({{"z9", 1}, {"b2", 1}, {"m5", 1}}));
  REQUIRE(found.size() == 3);
  CHECK(found[0].node == "b2");
  CHECK(found[1].node == "m5");
  CHECK(found[2].node == "z9");
}
