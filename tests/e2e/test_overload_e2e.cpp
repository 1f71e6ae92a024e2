// A pool scheduler replaced right after it granted new shares, before the orchestrator's map lists them
// (issue: "Under overload the RM double-books nodes"). The real rmbus on loopback; the fake orchestrator is
// slow to launch (it holds the starts), so the work maps the fresh schedulers see do not show the shares
// their predecessor granted. Every rm.state is checked as it arrives: no node above its order, and no share
// vanishing without having been withdrawn (published as preempt or evict) or its job ending.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <csignal>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "tests/e2e/rm_fixture.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::layout;
using rmbus::e2e::rm_fixture;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;

namespace {

constexpr auto deadline = 90s;

// What every rm.state must keep, checked on each one the orchestrator receives.
struct schedule_watch {
  std::mutex mu;
  std::vector<std::string> problems;
  std::map<std::string, std::pair<std::string, msg::share_status>> last;  // share -> (job, status)
  std::uint64_t states = 0;
  std::optional<std::uint64_t> first_grant_cycle;  // the round that first listed carol's shares
  std::set<std::string> first_grant;

  void observe(const msg::rm_state& s) {
    std::lock_guard<std::mutex> lock(mu);
    ++states;
    for (const auto& p : ts::double_bookings(s, rmbus::e2e::node_quanta()))
      problems.push_back("round " + std::to_string(s.cycle) + ": " + p);
    std::map<std::string, std::pair<std::string, msg::share_status>> now;
    std::set<std::string> jobs;
    for (const auto& j : s.jobs) {
      jobs.insert(j.id);
      for (const auto& sh : j.shares) now[sh.id] = {j.id, sh.status};
    }
    for (const auto& [id, was] : last) {
      if (now.count(id) != 0 || jobs.count(was.first) == 0) continue;
      if (was.second == msg::share_status::preempt || was.second == msg::share_status::evict) continue;
      problems.push_back("round " + std::to_string(s.cycle) + ": share " + id + " of " + was.first + " (" +
                         std::string{msg::to_string(was.second)} + ") vanished without being withdrawn");
    }
    last = std::move(now);
    if (std::getenv("RMBUS_TRACE_STATES") != nullptr)
      if (const auto* carol = ts::find_job(s, "carol-1")) {
        std::fprintf(stderr, "round %llu carol:", static_cast<unsigned long long>(s.cycle));
        for (const auto& sh : carol->shares)
          std::fprintf(stderr, " %s@%s(%s)", sh.id.c_str(), sh.node.c_str(), std::string{msg::to_string(sh.status)}.c_str());
        std::fprintf(stderr, "\n");
      }
    if (!first_grant_cycle)
      if (const auto* carol = ts::find_job(s, "carol-1"); carol != nullptr && !carol->shares.empty()) {
        first_grant_cycle = s.cycle;
        for (const auto& sh : carol->shares) first_grant.insert(sh.id);
      }
  }
};

// The fixture's configuration with round_timeout_ms = `ms` (3000 there).
void set_round_timeout(const rm_fixture& f, int ms) {
  std::string text = rmbus::e2e::test_config();
  const std::string anchor = "round_timeout_ms = 3000\n";
  text.replace(text.find(anchor), anchor.size(), "round_timeout_ms = " + std::to_string(ms) + "\n");
  std::ofstream{f.config_path()} << text;
}

std::size_t count_events(const ts::fake_cluster& c, const std::string& kind, const std::string& pool) {
  std::size_t n = 0;
  for (const auto& e : c.events()) {
    auto it = e.detail.find("pool");
    n += e.kind == kind && it != e.detail.end() && it->second == pool ? 1 : 0;
  }
  return n;
}

bool nodes_up(const msg::rm_nodes& n, const std::vector<std::string>& names) {
  return std::all_of(names.begin(), names.end(), [&](const std::string& name) {
    return std::any_of(n.nodes.begin(), n.nodes.end(),
                       [&](const auto& r) { return r.node == name && r.state == msg::node_state::up; });
  });
}

std::set<std::string> running_shares(const msg::rm_state& s, const std::string& job) {
  std::set<std::string> out;
  if (const auto* j = ts::find_job(s, job))
    for (const auto& sh : j->shares)
      if (sh.status == msg::share_status::running) out.insert(sh.id);
  return out;
}

// Carol asks 16 processes of 1 GB (beta's two 8 GB nodes); round 1 grants her first process (the
// initialization cap holds the rest until one has initialized). The scheduler of beta fails in every round
// of `rounds` (2-N): each replacement sees work maps without carol's process (the orchestrator holds the
// start). When the starts are released, the share granted in round 1 runs, and carol grows to 16.
void grants_survive_replacements(const std::string& fault, const std::string& rounds, std::size_t min_replacements) {
  rm_fixture f{layout::single};
  set_round_timeout(f, 1000);
  f.set_extra_args({"--inject-fault", fault + ":beta:" + rounds});
  f.kill_rm(SIGKILL);
  f.wait_rm(10s);
  f.start_rm();
  auto& c = f.cluster();
  schedule_watch watch;
  c.set_state_observer([&](const msg::rm_state& s) { watch.observe(s); });
  c.hold_starts();
  c.pause_maps(true);
  c.submit(rmbus::e2e::job("carol-1", "carol", "beta-normal", 1024, 16));
  c.start();
  // Round 1 must find beta's machines: maps start once the intake has announced both nodes.
  REQUIRE(c.wait_nodes([](const msg::rm_nodes& n) { return nodes_up(n, {"b1", "b2"}); }, deadline));
  c.pause_maps(false);

  // Round 1 grants carol her first share; its start is held.
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "carol-1") >= 1; }, deadline));
  std::set<std::string> granted;
  {
    std::lock_guard<std::mutex> lock(watch.mu);
    REQUIRE(watch.first_grant_cycle == std::optional<std::uint64_t>{1});
    granted = watch.first_grant;
  }
  REQUIRE(!granted.empty());
  // The failures come and go: the pool is replaced, and then answers again (a round past the range).
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return s.cycle >= 12; }, deadline));
  const auto replacements = count_events(c, "pool_restarted", "beta");
  CHECK(replacements >= min_replacements);
  // The orchestrator finally starts what it was told to start: the share of round 1 runs under its id, and
  // carol grows to her 16 processes with nothing doubled.
  c.release_starts();
  CHECK(c.wait_state(
      [&](const msg::rm_state& s) {
        const auto running = running_shares(s, "carol-1");
        return running.size() == 16 && std::includes(running.begin(), running.end(), granted.begin(), granted.end());
      },
      deadline));
  // A few rounds more with everything running.
  std::uint64_t seen = 0;
  {
    std::lock_guard<std::mutex> lock(watch.mu);
    seen = watch.states;
  }
  REQUIRE(c.wait_state([&](const msg::rm_state& s) { return s.cycle >= 12 && watch.states >= seen + 5; }, deadline));
  std::lock_guard<std::mutex> lock(watch.mu);
  std::string problems;  // the first few, for the report
  for (std::size_t i = 0; i < watch.problems.size() && i < 8; ++i) problems += watch.problems[i] + "\n";
  INFO("replacements of beta's scheduler: " << replacements << "; rm.state seen: " << watch.states);
  CHECK(watch.problems.size() == 0);
  CHECK(problems == "");
}

}  // namespace

TEST_CASE("a scheduler hanging in the rounds right after its grant neither loses nor doubles the grant") {
  // Hangs of 3 s against a 1 s timeout: replaced at least once (then the timeout backs off).
  grants_survive_replacements("hang", "2-4", 1);
}

TEST_CASE("a scheduler throwing in six rounds in a row is replaced six times and the grant survives every one") {
  grants_survive_replacements("throw", "2-7", 6);
}

namespace {

// CPU hogs on every core this process may use, for a bounded time: each is a child that spins until it is
// killed (or its own deadline passes), so the RM is starved as on a machine with a load average of that many.
class cpu_hogs {
 public:
  cpu_hogs(int count, std::chrono::seconds lifetime) {
    for (int i = 0; i < count; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        const auto until = std::chrono::steady_clock::now() + lifetime;
        volatile std::uint64_t spin = 0;
        while (std::chrono::steady_clock::now() < until)
          for (int k = 0; k < 100000; ++k) spin = spin + 1;
        std::_Exit(0);
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~cpu_hogs() { stop(); }
  void stop() {
    for (pid_t p : pids_) ::kill(p, SIGKILL);
    for (pid_t p : pids_) ::waitpid(p, nullptr, 0);
    pids_.clear();
  }
  std::size_t running() const { return pids_.size(); }

 private:
  std::vector<pid_t> pids_;
};

}  // namespace

TEST_CASE("under real CPU starvation, 2000 nodes and 2000 jobs: no rm.state puts a node above its order, and no plan would") {
  rm_fixture f{layout::single};
  set_round_timeout(f, 1000);
  f.kill_rm(SIGKILL);
  f.wait_rm(10s);
  f.start_rm();
  auto& c = f.cluster();
  // 2000 more nodes of 8 GB (named nowhere in the configuration: pool alpha, as in DUCC).
  auto quanta = rmbus::e2e::node_quanta();
  for (int i = 0; i < 2000; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "n%04d", i);
    c.add_node(name, 8192);
    quanta[name] = 8;
  }
  std::mutex mu;
  std::vector<std::string> problems;
  std::uint64_t states = 0;
  // Per node, what each rm.state listed there ("round 7: job-1:12 3 new, ..."): on a failure, the history of
  // the node named shows how it came to be above its order.
  std::map<std::string, std::vector<std::string>> history;
  c.set_state_observer([&](const msg::rm_state& s) {
    std::lock_guard<std::mutex> lock(mu);
    ++states;
    std::map<std::string, std::string> per_node;
    for (const auto& j : s.jobs)
      for (const auto& sh : j.shares)
        per_node[sh.node] += (per_node[sh.node].empty() ? "" : ", ") + j.id + ":" + sh.id + " " +
                             std::to_string(sh.quanta) + " " + std::string{msg::to_string(sh.status)};
    for (const auto& [node, held] : per_node) history[node].push_back("round " + std::to_string(s.cycle) + ": " + held);
    for (const auto& p : ts::double_bookings(s, quanta))
      if (problems.size() < 20) problems.push_back("round " + std::to_string(s.cycle) + ": " + p);
  });
  // 2000 jobs of 50 users, 1 to 4 GB, up to 8 processes each: more than the cluster's 16,048 quanta.
  for (int i = 0; i < 2000; ++i)
    c.submit(rmbus::e2e::job("job-" + std::to_string(i), "u" + std::to_string(i % 50), "normal",
                             1024u * static_cast<std::uint64_t>(1 + i % 4), 8));
  c.start();
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return s.jobs.size() >= 2000; }, 120s));

  // 20 s of starvation: 80 spinning processes on the same 2 cores (a load average of about 80, as in the
  // report), with churn (jobs ending, new ones coming) so that rounds keep granting new shares.
  {
    cpu_hogs hogs{80, 25s};
    const auto until = std::chrono::steady_clock::now() + 20s;
    int next = 2000;
    while (std::chrono::steady_clock::now() < until) {
      for (int k = 0; k < 20; ++k) {
        c.complete("job-" + std::to_string(next - 2000));
        c.submit(rmbus::e2e::job("job-" + std::to_string(next), "u" + std::to_string(next % 50), "normal",
                                 1024u * static_cast<std::uint64_t>(1 + next % 4), 8));
        ++next;
      }
      std::this_thread::sleep_for(1s);
    }
  }
  // The RM recovers once the hogs are gone: it publishes rounds again.
  std::uint64_t seen = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    seen = states;
  }
  REQUIRE(c.wait_state([&](const msg::rm_state&) { return states >= seen + 5; }, 120s));

  std::size_t restarted = 0, timeouts = 0, backoffs = 0, violations = 0;
  const auto events = c.events();
  c.stop();  // no more rm.state observed while `history` is read below
  for (const auto& e : events) {
    restarted += e.kind == "pool_restarted";
    timeouts += e.kind == "round_timeout";
    backoffs += e.kind == "scheduler_backoff";
    violations += e.kind == "invariant_violation";
  }
  std::lock_guard<std::mutex> lock(mu);
  // Figures for docs/reliability.md: printed, never asserted (they depend on how starved the machine was).
  WARN("overload: rm.state checked " << states << ", scheduler replacements " << restarted << ", rounds published "
                                     << "without a pool (round_timeout) " << timeouts << ", backoff events " << backoffs
                                     << ", invariant_violation " << violations);
  std::string first;
  for (const auto& p : problems) first += p + "\n";
  auto history_of = [&](const std::string& node) {
    std::string out;
    for (const auto& r : history[node]) out += "  " + r + "\n";
    return out;
  };
  for (const auto& e : events)
    if (e.kind == "invariant_violation") {
      // The core planned a node above its order and the guard refused the plan: a bug, even though nothing
      // of it was published.
      auto node = e.detail.at("nodes");
      node = node.substr(0, node.find(','));
      FAIL_CHECK("round " << e.detail.at("cycle") << ": the guard refused a plan that put " << node
                          << " above its order; what rm.state listed there:\n" << history_of(node));
      break;
    }
  if (!problems.empty()) {
    auto node = problems.front().substr(problems.front().find("node ") + 5);
    node = node.substr(0, node.find(' '));
    WARN("what rm.state listed on " << node << ":\n" << history_of(node));
  }
  CHECK(problems.empty());
  CHECK(first == "");
}
