// rmbus-top --once against the real rmbus on loopback: what the RM publishes for share groups and reclaim
// grace (docs/configuration.md) is what the monitor shows, read off the RM's own rm.state.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>

#include "tests/e2e/rm_fixture.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::layout;
using rmbus::e2e::rm_fixture;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;

namespace {

constexpr auto deadline = 60s;

ts::run_result top_once(const rm_fixture& f) {
  return ts::run_to_end(RMBUS_TOP_BIN, {"--once", "--bus-sub", f.bus_sub(), "--timeout-ms", "20000", "--width", "200"},
                        40s);
}

}  // namespace

TEST_CASE("rmbus-top shows a class's share groups with their users, and a user in no group under the class") {
  rm_fixture f{layout::single, {},
               rmbus::e2e::two_groups_config()};
  auto& c = f.cluster();
  c.start();
  c.submit(rmbus::e2e::job("ann-1", "ann", "normal", 1024));
  c.submit(rmbus::e2e::job("bob-1", "bob", "normal", 1024));
  c.submit(rmbus::e2e::job("cid-1", "cid", "normal", 1024));
  // Pool alpha: 32 quanta of 1 GB processes among physics (ann), bio (bob) and cid, in no group. How the
  // award rounds is the scheduler's business (tested elsewhere): here the split is read from rm.state once
  // it has held for three rounds with every quantum used and nothing leaving, and the monitor must show it.
  std::size_t ann = 0, bob = 0, cid = 0;
  int same = 0;
  REQUIRE(c.wait_state(
      [&](const msg::rm_state& s) {
        const auto a = ts::active_shares(s, "ann-1"), b = ts::active_shares(s, "bob-1"),
                   d = ts::active_shares(s, "cid-1");
        const bool settled = a + b + d == 32 && a > 0 && b > 0 && d > 0 &&
                             std::all_of(s.jobs.begin(), s.jobs.end(), [](const msg::job_schedule& j) {
                               return std::all_of(j.shares.begin(), j.shares.end(), [](const msg::share_schedule& sh) {
                                 return sh.status == msg::share_status::running;
                               });
                             });
        same = settled && a == ann && b == bob && d == cid ? same + 1 : 0;
        ann = a, bob = b, cid = d;
        return same == 2;
      },
      deadline));
  const auto r = top_once(f);
  INFO(r.output);
  REQUIRE(r.status == std::optional<int>{0});
  // Each process holds 1 quantum, so active = quanta. The class sums all three jobs (ann + bob + cid = 32);
  // cid directly under it, then the groups by name, each summing its one user.
  const auto n = [](std::size_t v) { return std::to_string(v); };
  const auto row = [&](const std::string& name, std::size_t jobs, std::size_t active) {
    return name + " +" + n(jobs) + " +" + n(active) + " +" + n(active) + " [^\n]*\n";
  };
  CHECK(std::regex_search(r.output, std::regex{"\n" + row("normal", 3, 32) + row("  cid", 1, cid) +
                                               row("  group bio", 1, bob) + row("    bob", 1, bob) +
                                               row("  group physics", 1, ann) + row("    ann", 1, ann)}));
  // the job rows are as without groups
  CHECK(std::regex_search(r.output, std::regex{"\nann-1 +ann +normal +scheduled +1024 +" + n(ann) + " +0 "}));
}

TEST_CASE("rmbus-top shows the processes the RM reclaims under a grace, and how long they have left") {
  rm_fixture f{layout::single, {},
               "[[class]]\nname = \"graceful\"\npolicy = \"FAIR_SHARE\"\nnodepool = \"alpha\"\npriority = 10\n"
               "weight = 100\nreclaim_grace_ms = 30000\n"};
  auto& c = f.cluster();
  c.start();
  c.submit(rmbus::e2e::job("alice-1", "alice", "graceful", 1024));
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::active_shares(s, "alice-1") == 32; }, deadline));
  c.submit(rmbus::e2e::job("bob-1", "bob", "graceful", 1024));
  // bob's fair share is 16 of the 32 quanta alice holds: hers chosen for it run on for 30 s, then go
  REQUIRE(c.wait_state([](const msg::rm_state& s) { return ts::reclaiming_shares(s, "alice-1") > 0; }, deadline));
  const auto r = top_once(f);
  INFO(r.output);
  REQUIRE(r.status == std::optional<int>{0});
  // alice's row: all 32 still active, none leaving yet, some of them under the deadline set at most 30 s
  // before (the monitor joined within seconds of it, so well over 10 s are left). How many the RM has chosen
  // may grow from round to round (bob's cap), so the header, read from the same rm.state, must agree.
  std::smatch note;
  REQUIRE(std::regex_search(r.output, note,
                            std::regex{"\nalice-1 +alice +graceful +scheduled +1024 +32 +0 [^\n]*  reclaim (\\d+) in "
                                       "(1\\d|2\\d|30)\\.\\ds\n"}));
  const auto n = std::stoul(note[1]);
  CHECK(n >= 1);
  CHECK(n <= 16);  // bob's fair share at most
  CHECK(std::regex_search(r.output, std::regex{" ago  jobs 2  reclaiming " + std::to_string(n) + "  nodes "}));
}

TEST_CASE(
    "rmbus-top finds the bus in the RM's configuration and lists refused work with a long reason wrapped") {
  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(rmbus::e2e::job("dave-1", "dave", "no-such-class", 1024, 1));
  c.submit(rmbus::e2e::job("huge-1", "erin", "normal", 16384, 1));  // order 16 on 8 GB nodes: can never fit
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) {
        const auto* d = ts::find_job(s, "dave-1");
        const auto* h = ts::find_job(s, "huge-1");
        return d != nullptr && d->status == msg::job_status::refused && h != nullptr && !h->reason.empty();
      },
      deadline));
  // The RM's own configuration names its bus: rmbus-top finds the subscriber side there (issue 17).
  const auto conf = f.dir() + "/with-bus.toml";
  std::ofstream{conf} << rmbus::e2e::test_config() << "\n[bus]\npub = \"" << f.bus_pub() << "\"\nsub = \""
                      << f.bus_sub() << "\"\n";
  const auto r = ts::run_to_end(RMBUS_TOP_BIN,
                                {"--once", "--config", conf, "--timeout-ms", "20000", "--width", "100"}, 40s);
  INFO(r.output);
  REQUIRE(r.status == std::optional<int>{0});
  CHECK(r.output.find("  REFUSED 1  ") != std::string::npos);
  CHECK(r.output.find("REFUSED: work the RM will not run as submitted, and why\n"
                      "  dave-1 (user dave): Cannot find class no-such-class for the work\n") !=
        std::string::npos);
  // The never-fitting job's reason, in GB, wrapped below its row at 100 columns: its end is on the screen.
  std::string text;
  for (std::size_t at = 0; at < r.output.size();) {
    const auto end = std::min(r.output.find('\n', at), r.output.size());
    text += r.output.substr(at, end - at) + " ";
    at = end + 1;
  }
  const std::regex spaces{" +"};
  const auto flat = std::regex_replace(text, spaces, " ");
  CHECK(flat.find(
            "no machine of order 16 (16 GB) in pool alpha: larger than every machine there (the largest is "
            "order 8, 8 GB); it runs only if a larger machine joins") != std::string::npos);
  for (std::size_t at = 0, end; at < r.output.size(); at = end + 1) {
    end = std::min(r.output.find('\n', at), r.output.size());
    CHECK(end - at <= 100);
  }
}
