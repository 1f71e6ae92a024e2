// End to end: the real rmbus and the real rmbus-sim as child processes on private loopback ports, talking
// only over the bus. The two-users scenario must come out as the scenario implies: both users get processes
// and end within one process of each other, nothing is double booked, nothing is evicted, both jobs complete.
// Under a reclaim grace (rmbus-sim-grace.toml), --drain-on-reclaim drains processes and the work still
// completes. Also the exit statuses for an unreachable RM (3) and a bad scenario or argument (2).
//
// rmbus runs on tools/sim/rmbus-sim.toml: the embedded default's nodepools and classes with short timings
// (test_sim_scenario checks that they are the same). On the embedded default itself the RM would schedule
// only after 2 x 30 s of start-up gating, which is too long for a test.

#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "bus/curve.hpp"
#include "tests/support/child_process.hpp"

namespace ts = rmbus::test_support;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream o;
  o << f.rdbuf();
  return o.str();
}

// The report's closing block: `key = value` lines after the line "Figures".
std::map<std::string, std::string> figures_of(const std::string& report) {
  std::map<std::string, std::string> out;
  const auto at = report.find("\nFigures\n");
  if (at == std::string::npos) return out;
  std::istringstream in(report.substr(at + 9));
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find(" = ");
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 3);
  }
  return out;
}

std::vector<std::map<std::string, std::string>> csv_rows(const std::string& csv) {
  std::vector<std::map<std::string, std::string>> rows;
  std::istringstream in(csv);
  std::string line;
  std::vector<std::string> header;
  auto split = [](const std::string& l) {
    std::vector<std::string> v;
    std::istringstream s(l);
    std::string cell;
    while (std::getline(s, cell, ',')) v.push_back(cell);
    return v;
  };
  if (std::getline(in, line)) header = split(line);
  while (std::getline(in, line)) {
    const auto cells = split(line);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < cells.size() && i < header.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

struct temp_dir {
  std::string path;
  temp_dir() {
    char tmpl[] = "/tmp/rmbus-sim-e2e-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  ~temp_dir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

// rmbus on free loopback ports; killed (SIGTERM, then SIGKILL by the destructor) at the end.
struct running_rm {
  std::string pub = ts::loopback(ts::free_port());
  std::string sub = ts::loopback(ts::free_port());
  std::string admin = ts::loopback(ts::free_port());
  std::unique_ptr<ts::child_process> proc;

  explicit running_rm(const std::string& log, const std::string& config = std::string(RMBUS_SIM_DIR) + "/rmbus-sim.toml") {
    std::vector<std::string> args{"--config",    config,
                                  "--bus-pub",   pub,
                                  "--bus-sub",   sub,
                                  "--admin",     admin,
                                  "--log-level", "warn"};
    // The metrics endpoint (default 127.0.0.1:9464) would collide between tests running at once: off.
    // (Only passed when this rmbus has the option, so the test also runs against an rmbus without it.)
    const auto help = ts::run_to_end(RMBUS_BIN, {"--help"}, std::chrono::seconds(10));
    if (help.output.find("--metrics") != std::string::npos) {
      args.push_back("--metrics");
      args.push_back("off");
    }
    proc = std::make_unique<ts::child_process>(RMBUS_BIN, args, log);
  }
  ~running_rm() {
    proc->signal(SIGTERM);
    proc->wait(std::chrono::seconds(10));
  }
};

}  // namespace

TEST_CASE("e2e: two users sharing a class end within one process of each other") {
  temp_dir dir;
  running_rm rm{dir.path + "/rmbus.log"};
  const std::string report_file = dir.path + "/report.txt", csv_file = dir.path + "/series.csv";
  // Scenario time runs 20 times faster: about 210 s of scenario in about 11 s. --seconds bounds the run.
  const auto run = ts::run_to_end(RMBUS_SIM_BIN,
                                  {"--bus-pub",
                                   rm.pub,
                                   "--bus-sub",
                                   rm.sub,
                                   "--scenario",
                                   std::string(RMBUS_SIM_DIR) + "/scenarios/two-users.toml",
                                   "--speed",
                                   "20",
                                   "--seconds",
                                   "45",
                                   "--ready-timeout-s",
                                   "20",
                                   "--summary-every-ms",
                                   "2000",
                                   "--report",
                                   report_file,
                                   "--csv",
                                   csv_file,
                                   "--plot",
                                   dir.path + "/plot.svg"},
                                  std::chrono::seconds(90));
  INFO(run.output);
  INFO(slurp(dir.path + "/rmbus.log"));
  REQUIRE(run.status == 0);
  const auto f = figures_of(slurp(report_file));
  REQUIRE_FALSE(f.empty());

  CHECK(f.at("scenario") == "two-users");
  CHECK(f.at("end_reason") == "all work done");
  CHECK(f.at("jobs_completed") == "2");
  CHECK(std::stoi(f.at("states_received")) > 10);
  // Both users got processes, and at their last contended sample they are within one process of each other.
  const int alice = std::stoi(f.at("user.alice.final_processes")),
            bob = std::stoi(f.at("user.bob.final_processes"));
  CHECK(alice >= 1);
  CHECK(bob >= 1);
  CHECK(std::abs(alice - bob) <= 1);
  // 4 x 32 GB at a 1 GB quantum = 128 quanta = 32 processes of 4 GB; an even split is 16 each.
  CHECK(alice + bob <= 32);
  CHECK(std::stoi(f.at("user.alice.max_processes")) <= 32);
  CHECK(f.at("quantum_mb") == "1024");
  // Equal users, equal work: their time-weighted holdings are close too (ramp-ups are alike).
  const double mean_a = std::stod(f.at("user.alice.mean_held_quanta")),
               mean_b = std::stod(f.at("user.bob.mean_held_quanta"));
  CHECK(std::abs(mean_a - mean_b) <= 4.0);  // one process = 4 quanta
  // No failures in the scenario: nothing evicted; never double booked.
  CHECK(f.at("evicted_shares") == "0");
  CHECK(f.at("evict_events") == "0");
  CHECK(f.at("double_booked_samples") == "0");
  // Preemptions: the two ramp up alike, so at most a few corrections; rm.state and rm.events agree.
  CHECK(std::stoi(f.at("preempted_shares")) <= 4);
  CHECK(f.at("preempted_shares") == f.at("preempt_events"));
  // Makespan: 2 x 6000 items at best 32 processes x 4 threads / 2 s = 64 items/s takes 187.5 s of scenario
  // time; with ramp-up it is longer, and it must fit in the run (45 s x speed 20 = 900 s).
  REQUIRE(f.at("makespan_s") != "none");
  const double makespan = std::stod(f.at("makespan_s"));
  CHECK(makespan >= 187.5);
  CHECK(makespan <= 900.0);

  // The time series agrees: at no sample do the two hold more than the cluster, nor is anything double
  // booked.
  const auto rows = csv_rows(slurp(csv_file));
  REQUIRE(rows.size() >= 10);
  for (const auto& row : rows) {
    CHECK(std::stoi(row.at("alice_processes")) + std::stoi(row.at("bob_processes")) <= 32);
    CHECK(row.at("double_booked") == "0");
  }
  CHECK(slurp(dir.path + "/plot.svg").find("</svg>") != std::string::npos);
}

TEST_CASE("e2e: rmbus-sim on two forwarders (rmbus's own and an rmbus-proxy) runs the scenario as on one") {
  // docs/bus.md, "Several forwarders": rmbus binds the first pair and connects to both; rmbus-sim's agents
  // and orchestrator publish through both and its observer drops the copies. Counted twice, every preempt
  // event would be two against one preempted share, and copies taken for restarts would hand stale schedules on.
  temp_dir dir;
  const std::string proxy_pub = ts::loopback(ts::free_port()), proxy_sub = ts::loopback(ts::free_port());
  ts::child_process proxy{RMBUS_PROXY_BIN, {"--bus-pub", proxy_pub, "--bus-sub", proxy_sub}, dir.path + "/proxy.log"};
  const std::string own_pub = ts::loopback(ts::free_port()), own_sub = ts::loopback(ts::free_port());
  const std::string pubs = own_pub + "," + proxy_pub, subs = own_sub + "," + proxy_sub;
  ts::child_process rm{RMBUS_BIN,
                       {"--config", std::string(RMBUS_SIM_DIR) + "/rmbus-sim.toml", "--bus-pub", pubs, "--bus-sub",
                        subs, "--admin", ts::loopback(ts::free_port()), "--metrics", "off", "--log-level", "warn"},
                       dir.path + "/rmbus.log"};
  const std::string report_file = dir.path + "/report.txt";
  const auto run = ts::run_to_end(RMBUS_SIM_BIN,
                                  {"--bus-pub", pubs, "--bus-sub", subs, "--scenario",
                                   std::string(RMBUS_SIM_DIR) + "/scenarios/two-users.toml", "--speed", "20",
                                   "--seconds", "45", "--ready-timeout-s", "20", "--report", report_file},
                                  std::chrono::seconds(90));
  INFO(run.output);
  INFO(slurp(dir.path + "/rmbus.log"));
  REQUIRE(run.status == 0);
  const auto f = figures_of(slurp(report_file));
  REQUIRE_FALSE(f.empty());
  CHECK(f.at("end_reason") == "all work done");
  CHECK(f.at("jobs_completed") == "2");
  CHECK(std::stoi(f.at("states_received")) > 10);
  const int alice = std::stoi(f.at("user.alice.final_processes")), bob = std::stoi(f.at("user.bob.final_processes"));
  CHECK(std::abs(alice - bob) <= 1);
  CHECK(alice + bob <= 32);
  CHECK(f.at("evict_events") == "0");
  CHECK(f.at("double_booked_samples") == "0");
  CHECK(f.at("preempted_shares") == f.at("preempt_events"));
  rm.signal(SIGTERM);
  CHECK(rm.wait(std::chrono::seconds(10)) == std::optional<int>{0});
}

TEST_CASE("e2e: no RM on the endpoints is exit status 3, naming them") {
  const std::string pub = ts::loopback(ts::free_port()), sub = ts::loopback(ts::free_port());
  const auto run = ts::run_to_end(
      RMBUS_SIM_BIN, {"--bus-pub", pub, "--bus-sub", sub, "--random", "1", "--ready-timeout-s", "1"},
      std::chrono::seconds(30));
  INFO(run.output);
  CHECK(run.status == 3);
  CHECK(run.output.find("no rm.state from the RM within 1 s") != std::string::npos);
  CHECK(run.output.find(pub) != std::string::npos);
  CHECK(run.output.find(sub) != std::string::npos);
}

TEST_CASE("e2e: a bad scenario or argument is exit status 2 with the problem named") {
  temp_dir dir;
  const std::string bad = dir.path + "/bad.toml";
  std::ofstream{bad}
      << "[cluster]\nnodes = \"4x32Q\"\n\n[[job]]\nuser = \"a\"\nmemory = \"4G\"\nitems = 10\nspeed = 2\n";
  auto run = ts::run_to_end(RMBUS_SIM_BIN, {"--scenario", bad}, std::chrono::seconds(30));
  INFO(run.output);
  CHECK(run.status == 2);
  CHECK(run.output.find(bad + ":2:9: cluster.nodes: node description \"4x32Q\"") != std::string::npos);
  CHECK(run.output.find(bad + ":8:9: job[0]: unknown key 'speed'") != std::string::npos);

  run = ts::run_to_end(RMBUS_SIM_BIN, {"--random", "1", "--speed", "0"}, std::chrono::seconds(30));
  CHECK(run.status == 2);
  run = ts::run_to_end(RMBUS_SIM_BIN, {"--nodes", "4x32G"},
                       std::chrono::seconds(30));  // --nodes needs --random
  CHECK(run.status == 2);
  run = ts::run_to_end(RMBUS_SIM_BIN, {}, std::chrono::seconds(30));
  CHECK(run.status == 2);
  CHECK(run.output.find("--scenario FILE or --random SEED") != std::string::npos);
  run = ts::run_to_end(RMBUS_SIM_BIN, {"--random", "1", "--plot", "x.png"}, std::chrono::seconds(30));
  CHECK(run.status == 2);
  run = ts::run_to_end(RMBUS_SIM_BIN, {"--random", "1", "--log-level", "INFO"}, std::chrono::seconds(30));
  CHECK(run.status == 2);
}

TEST_CASE("e2e: with CURVE on, rmbus-sim with an agent,orchestrator key runs the scenario and rmbus-top watches with a monitor key") {
  namespace bus = rmbus::bus;
  temp_dir dir;
  const auto rm_keys = bus::make_curve_keypair();
  const auto sim_keys = bus::make_curve_keypair();
  const auto top_keys = bus::make_curve_keypair();
  bus::write_key_file(dir.path + "/rmbus.key", rm_keys, true);
  bus::write_key_file(dir.path + "/rmbus.pub", rm_keys, false);
  bus::write_key_file(dir.path + "/sim.key", sim_keys, true);
  bus::write_key_file(dir.path + "/top.key", top_keys, true);
  std::ofstream{dir.path + "/keys"} << bus::keys_file_line({sim_keys.public_key, "sim", bus::roles::agent | bus::roles::orchestrator})
                                    << bus::keys_file_line({top_keys.public_key, "top", bus::roles::monitor});
  const std::string config = dir.path + "/rmbus.toml";
  std::ofstream{config} << slurp(std::string(RMBUS_SIM_DIR) + "/rmbus-sim.toml")
                        << "\n[security]\ncurve = true\nkey = \"rmbus.key\"\nkeys = \"keys\"\n";
  running_rm rm{dir.path + "/rmbus.log", config};
  // rm.state follows the work maps, so the monitor watches while the simulation runs.
  ts::child_process top{RMBUS_TOP_BIN,
                        {"--bus-sub", rm.sub, "--once", "--timeout-ms", "60000", "--key", dir.path + "/top.key",
                         "--server-key", dir.path + "/rmbus.pub"},
                        dir.path + "/top.out"};
  const std::string report_file = dir.path + "/report.txt";
  const auto run = ts::run_to_end(RMBUS_SIM_BIN,
                                  {"--bus-pub", rm.pub, "--bus-sub", rm.sub, "--key", dir.path + "/sim.key",
                                   "--server-key", dir.path + "/rmbus.pub", "--scenario",
                                   std::string(RMBUS_SIM_DIR) + "/scenarios/two-users.toml", "--speed", "20",
                                   "--seconds", "45", "--ready-timeout-s", "20", "--summary-every-ms", "0",
                                   "--report", report_file},
                                  std::chrono::seconds(90));
  INFO(run.output);
  INFO(slurp(dir.path + "/rmbus.log"));
  REQUIRE(run.status == 0);
  const auto f = figures_of(slurp(report_file));
  REQUIRE_FALSE(f.empty());
  CHECK(f.at("end_reason") == "all work done");
  CHECK(f.at("jobs_completed") == "2");
  // The monitor key saw the RM's picture.
  INFO(slurp(dir.path + "/top.out"));
  CHECK(top.wait(std::chrono::seconds(60)) == std::optional<int>{0});
  // Without keys, rmbus-top never gets through the handshake: no picture (exit 3).
  const auto plain = ts::run_to_end(RMBUS_TOP_BIN, {"--bus-sub", rm.sub, "--once", "--timeout-ms", "1500"},
                                    std::chrono::seconds(30));
  CHECK(plain.status == 3);
  // Only one of the two options is a usage error.
  const auto half = ts::run_to_end(RMBUS_SIM_BIN, {"--bus-pub", rm.pub, "--bus-sub", rm.sub, "--key",
                                                   dir.path + "/sim.key", "--random", "1"},
                                   std::chrono::seconds(30));
  CHECK(half.status == 2);
  CHECK(half.output.find("--server-key") != std::string::npos);
}

TEST_CASE(
    "e2e: under a reclaim grace, rmbus-sim --drain-on-reclaim drains processes early and the work still "
    "completes in bounded time") {
  temp_dir dir;
  running_rm rm{dir.path + "/rmbus.log", std::string(RMBUS_SIM_DIR) + "/rmbus-sim-grace.toml"};
  // alice fills 2 x 32 GB (64 quanta = 16 processes of 4 GB) alone; bob arrives at 30 s in the same class,
  // so the RM takes about 8 of alice's processes back for him, each with a reclaim deadline 2000 ms of wall
  // time away (40 s of scenario time at speed 20). An item takes 2000 ms of scenario time (0.1 s of wall
  // time), so a drained process ends long before its deadline.
  const std::string scenario = dir.path + "/reclaim.toml";
  std::ofstream{scenario}
      << "name = \"reclaim\"\n[cluster]\nnodes = \"2x32G\"\n[orchestrator]\ninit_ms = 2000\n"
      << "[[job]]\nat_s = 0\nid = \"a\"\nuser = \"alice\"\nclass = \"normal\"\nmemory = \"4G\"\n"
      << "items = 2400\nthreads = 2\nitem_ms = 2000\n"
      << "[[job]]\nat_s = 30\nid = \"b\"\nuser = \"bob\"\nclass = \"normal\"\nmemory = \"4G\"\n"
      << "items = 1200\nthreads = 2\nitem_ms = 2000\n";
  const std::string report_file = dir.path + "/report.txt";
  const auto run = ts::run_to_end(
      RMBUS_SIM_BIN,
      {"--bus-pub", rm.pub, "--bus-sub", rm.sub, "--scenario", scenario, "--speed", "20", "--seconds", "45",
       "--ready-timeout-s", "20", "--summary-every-ms", "0", "--drain-on-reclaim", "--report", report_file},
      std::chrono::seconds(90));
  INFO(run.output);
  INFO(slurp(dir.path + "/rmbus.log"));
  REQUIRE(run.status == 0);
  const auto f = figures_of(slurp(report_file));
  REQUIRE_FALSE(f.empty());
  CHECK(f.at("end_reason") == "all work done");
  CHECK(f.at("jobs_completed") == "2");
  CHECK(std::stoi(f.at("drained_early")) > 0);
  CHECK(f.at("double_booked_samples") == "0");
  CHECK(std::stoi(f.at("user.bob.max_processes")) >= 1);
  // Bounded: 3600 items at best 16 processes x 2 threads / 2 s = 16 items/s take 225 s of scenario time; the
  // drains lose no work, so the makespan stays within the run (45 s x speed 20 = 900 s).
  REQUIRE(f.at("makespan_s") != "none");
  const double makespan = std::stod(f.at("makespan_s"));
  CHECK(makespan >= 225.0);
  CHECK(makespan <= 900.0);
}

TEST_CASE(
    "e2e: two nodepools of different quanta: fair shares and utilisation per pool, as computed by hand") {
  temp_dir dir;
  running_rm rm{dir.path + "/rmbus.log", std::string(RMBUS_SIM_TEST_DATA) + "/rmbus-two-pools.toml"};
  const std::string report_file = dir.path + "/report.txt", plot_file = dir.path + "/plot.svg";
  // No job can finish (100000 items each): the run ends at --seconds, about 100 s of scenario time, long
  // after the ramp-up (about 30 s): the last samples are the steady split.
  const auto run = ts::run_to_end(
      RMBUS_SIM_BIN,
      {"--bus-pub", rm.pub, "--bus-sub", rm.sub, "--scenario",
       std::string(RMBUS_SIM_TEST_DATA) + "/two-pools.toml", "--speed", "10", "--seconds", "10",
       "--ready-timeout-s", "20", "--summary-every-ms", "0", "--report", report_file, "--plot", plot_file},
      std::chrono::seconds(60));
  INFO(run.output);
  INFO(slurp(dir.path + "/rmbus.log"));
  REQUIRE(run.status == 0);
  const auto text = slurp(report_file);
  const auto f = figures_of(text);
  REQUIRE_FALSE(f.empty());
  // The pools as rm.nodes gives them: their quanta up and quantum.
  CHECK(f.at("pool.general.mean_total_quanta") == "192.000");
  CHECK(f.at("pool.bigmem.mean_total_quanta") == "64.000");
  CHECK(f.at("pool.general.quantum_mb") == "1024");
  CHECK(f.at("pool.bigmem.quantum_mb") == "4096");
  CHECK(f.at("most_unplaced_jobs") == "0");
  // At the end (the last contended sample): the split computed by hand in the scenario's comment, each user
  // against its own pool; and the RM holds it.
  CHECK(f.at("user.alice.final_fair_quanta") == "64.000");
  CHECK(f.at("user.bob.final_fair_quanta") == "128.000");
  CHECK(f.at("user.carol.final_fair_quanta") == "64.000");
  CHECK(f.at("user.alice.final_processes") == "16");
  CHECK(f.at("user.bob.final_processes") == "32");
  CHECK(f.at("user.carol.final_processes") == "16");
  // No mean fair share exceeds the quanta of the pool it is figured in.
  CHECK(std::stod(f.at("pool.general.user.alice.mean_fair_quanta")) <= 192.0);
  CHECK(std::stod(f.at("pool.general.user.bob.mean_fair_quanta")) <= 192.0);
  CHECK(std::stod(f.at("pool.bigmem.user.carol.mean_fair_quanta")) <= 64.0);
  CHECK(f.count("pool.bigmem.user.alice.mean_fair_quanta") == 0);  // alice has no work in bigmem
  CHECK(f.count("utilization_mean.general") == 1);
  CHECK(text.find("\nPer nodepool (fair share against the pool's own quanta)\n") != std::string::npos);
  const auto svg = slurp(plot_file);
  CHECK(svg.find(">nodepool general</text>") != std::string::npos);
  CHECK(svg.find(">nodepool bigmem</text>") != std::string::npos);
}

// Issue 51, item 6: the report and the progress lines agree with themselves. On 2 x 32 GB (64 quanta of
// 1 GB): alice's job in normal can use every quantum; bob's only job (48 GB) fits no machine; dave's is in a
// class the scenario's table knows (gold) but the RM does not, so the RM refuses it; erin's small job ends
// soon; carol runs a service. Expected:
//  - dave, refused and "not counted in fair shares", has no fair share (it used to have one from the samples
//    before the refusal came back);
//  - bob's unplaceable job takes no part of normal's fair share, so alice's is all of it, less what erin's
//    small job and carol's service hold (it used to be half, and alice read as over-served);
//  - the progress lines count dave's job as refused, never as done, and their total is the jobs' count the
//    first line gives (services apart).
TEST_CASE("e2e: rmbus-sim's report and progress agree with themselves over refused and unplaceable work") {
  temp_dir dir;
  running_rm rm{dir.path + "/rmbus.log"};
  const std::string scenario = dir.path + "/contradictions.toml";
  std::ofstream{scenario}
      << "name = \"contradictions\"\n[cluster]\nnodes = \"2x32G\"\n[orchestrator]\ninit_ms = 1000\n"
      << "[class.gold]\npolicy = \"FAIR_SHARE\"\nweight = 100\npriority = 10\n"
      << "[[job]]\nat_s = 0\nid = \"a\"\nuser = \"alice\"\nclass = \"normal\"\nmemory = \"4G\"\n"
      << "items = 100000\nthreads = 2\nitem_ms = 1000\n"
      << "[[job]]\nat_s = 0\nid = \"b\"\nuser = \"bob\"\nclass = \"normal\"\nmemory = \"48G\"\n"
      << "items = 100000\nthreads = 2\nitem_ms = 1000\n"
      << "[[job]]\nat_s = 0\nid = \"d\"\nuser = \"dave\"\nclass = \"gold\"\nmemory = \"4G\"\n"
      << "items = 100000\nthreads = 2\nitem_ms = 1000\n"
      << "[[job]]\nat_s = 0\nid = \"e\"\nuser = \"erin\"\nclass = \"normal\"\nmemory = \"1G\"\n"
      << "items = 4\nthreads = 1\nitem_ms = 1000\nmax_processes = 1\n"
      << "[[job]]\nat_s = 0\nid = \"s\"\nuser = \"carol\"\nkind = \"service\"\nmemory = \"2G\"\n";
  const std::string report_file = dir.path + "/report.txt";
  const auto run = ts::run_to_end(
      RMBUS_SIM_BIN,
      {"--bus-pub", rm.pub, "--bus-sub", rm.sub, "--scenario", scenario, "--speed", "10", "--seconds", "8",
       "--ready-timeout-s", "20", "--summary-every-ms", "500", "--report", report_file},
      std::chrono::seconds(60));
  INFO(run.output);
  INFO(slurp(dir.path + "/rmbus.log"));
  REQUIRE(run.status == 0);
  const auto text = slurp(report_file);
  INFO(text);
  const auto f = figures_of(text);
  REQUIRE_FALSE(f.empty());
  CHECK(f.at("jobs_refused") == "1");
  REQUIRE(text.find("Refused (not counted in fair shares):\n  d (user dave): ") != std::string::npos);
  CHECK(f.at("user.dave.mean_fair_quanta") == "0.000");
  CHECK(f.at("user.bob.mean_fair_quanta") == "0.000");
  // alice's share of normal is the pool less what erin (1 quantum while her job runs) and carol's service (2
  // quanta, off the top) hold: 64 - 2 - 1 = 61 at least most of the time, never half of it.
  CHECK(std::stod(f.at("user.alice.mean_fair_quanta")) > 55.0);

  // The progress lines: "N jobs and 1 services / APs / reservations" first, then "done D/N (1 refused)" with
  // D the jobs completed, never counting the refused one.
  CHECK(run.output.find(": 2 nodes (2x32G), 4 jobs and 1 services / APs / reservations;") !=
        std::string::npos);
  std::istringstream lines(run.output);
  std::string line, last_done;
  for (std::string l; std::getline(lines, l);)
    if (l.find(" | done ") != std::string::npos) last_done = l;
  REQUIRE_FALSE(last_done.empty());
  CHECK(last_done.find(" | done " + f.at("jobs_completed") + "/4 (1 refused) | ") != std::string::npos);
}

// Issue 51, "the first minute": while the RM's start-up window is open, rmbus-sim says so and counts it down
// (the RM's rm.events not_scheduling, printed when it changes and every 5 s) instead of one line standing for
// the whole wait. rmbus-sim.toml with init_stability 40: a 12 s window (40 x 300 ms).
TEST_CASE("e2e: rmbus-sim counts down the RM's start-up window") {
  temp_dir dir;
  auto config = slurp(std::string(RMBUS_SIM_DIR) + "/rmbus-sim.toml");
  const auto at = config.find("init_stability = 2\n");
  REQUIRE(at != std::string::npos);
  config.replace(at, std::string("init_stability = 2\n").size(), "init_stability = 40\n");
  const std::string config_file = dir.path + "/slow-start.toml";
  std::ofstream{config_file} << config;
  running_rm rm{dir.path + "/rmbus.log", config_file};
  const std::string scenario = dir.path + "/one.toml";
  std::ofstream{scenario} << "name = \"one\"\n[cluster]\nnodes = \"1x32G\"\n"
                          << "[[job]]\nat_s = 0\nuser = \"alice\"\nclass = \"normal\"\nmemory = \"4G\"\n"
                          << "items = 10\nthreads = 1\nitem_ms = 100\n";
  const auto run = ts::run_to_end(
      RMBUS_SIM_BIN,
      {"--bus-pub", rm.pub, "--bus-sub", rm.sub, "--scenario", scenario, "--speed", "10", "--seconds", "3",
       "--ready-timeout-s", "40", "--summary-every-ms", "0"},
      std::chrono::seconds(90));
  INFO(run.output);
  REQUIRE(run.status == 0);
  // The lines the RM's reports gave, in order: each says the window and what is left of it, less each time.
  std::vector<double> left;
  std::istringstream lines(run.output);
  const std::string prefix =
      "rmbus-sim: the RM says: starting: in the start-up stability window, scheduling starts in ";
  for (std::string l; std::getline(lines, l);)
    if (l.rfind(prefix, 0) == 0) {
      CHECK(l.find(" (a 12 s window; at once on a work map naming live processes)") != std::string::npos);
      left.push_back(std::stod(l.substr(prefix.size())));
    }
  REQUIRE(left.size() >= 2);  // at once, then every 5 s of the 12
  for (std::size_t i = 1; i < left.size(); ++i) CHECK(left[i] < left[i - 1]);
  CHECK(left.front() <= 12.0);
  CHECK(run.output.find("rmbus-sim: the RM answered after ") != std::string::npos);
}
