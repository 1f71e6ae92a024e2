// rmbus-load's arithmetic and parsing: nearest-rank percentiles, /proc's stat and status, the cluster it
// builds and the orchestrator's reaction to a schedule.
#include <catch2/catch.hpp>

#include "tools/load/load_cluster.hpp"
#include "tools/load/rm_process.hpp"
#include "tools/load/stats.hpp"

#include <set>

using namespace rmbus::load;
namespace msg = rmbus::messages;

TEST_CASE("percentiles are nearest-rank: every figure printed is a value that was measured") {
  // 10 values: the median is the 5th smallest (ceil(0.5 x 10) = 5), p99 the 10th (ceil(9.9) = 10).
  const std::vector<double> v{9, 1, 8, 2, 7, 3, 6, 4, 5, 10};
  CHECK(median(v) == 5);
  CHECK(percentile(v, 99) == 10);
  CHECK(percentile(v, 10) == 1);
  CHECK(percentile(v, 100) == 10);
  CHECK(median({}) == 0);
  CHECK(median({42}) == 42);
}

TEST_CASE("/proc/<pid>/stat: utime and stime are fields 14 and 15, counted after the name's last parenthesis") {
  // The command name may hold spaces and parentheses.
  const std::string stat = "4711 (rm bus (x)) S 1 4711 4711 0 -1 4194560 900 0 0 0 250 75 0 0 20 0 5 0 100";
  std::uint64_t ut = 0, st = 0;
  REQUIRE(parse_stat_ticks(stat, ut, st));
  CHECK(ut == 250);
  CHECK(st == 75);
  CHECK_FALSE(parse_stat_ticks("4711 (short) S 1 2", ut, st));
  CHECK_FALSE(parse_stat_ticks("no parenthesis", ut, st));
}

TEST_CASE("/proc/<pid>/status: a key's kB value, 0 when absent") {
  const std::string status = "Name:\trmbus\nVmPeak:\t  900000 kB\nVmHWM:\t  250000 kB\nVmRSS:\t  200512 kB\n";
  CHECK(parse_status_kb(status, "VmRSS") == 200512);
  CHECK(parse_status_kb(status, "VmHWM") == 250000);
  CHECK(parse_status_kb(status, "VmSwap") == 0);
  CHECK(parse_status_kb(status, "Vm") == 0);  // a prefix of a key is not the key
}

TEST_CASE("the cluster: every node heartbeats, the warmed-up map has processes on those nodes, and 4 pools split it") {
  const auto c = make_cluster(cluster_spec{40, 80, 10, 1, 15, 1, 6});
  REQUIRE(c.nodes.size() == 40);
  CHECK(c.processes > 0);
  std::set<std::string> names;
  for (const auto& n : c.nodes) names.insert(n.node);
  std::size_t counted = 0;
  for (const auto& w : c.work.work)
    for (const auto& p : w.processes) {
      CHECK(names.count(p.node) == 1);
      ++counted;
    }
  CHECK(counted == c.processes);
  CHECK(c.config.scheduling.nodepools.size() == 1);

  const auto four = make_cluster(cluster_spec{40, 80, 10, 4, 15, 1, 6});
  CHECK(four.nodes.size() == 40);  // 4 pools of 10
  REQUIRE(four.config.scheduling.nodepools.size() == 4);
  CHECK(four.config.scheduling.nodepools[2].name == "p2");
  CHECK(four.config.scheduling.nodepools[2].node_patterns == std::vector<std::string>{"p2-.*"});
  for (const auto& w : four.work.work) {
    const auto pool = w.id.substr(0, 3);  // "p0-"..."p3-"
    CHECK(w.class_name.substr(w.class_name.size() - 3) == "-" + pool.substr(0, 2));
    for (const auto& p : w.processes) CHECK(p.node.substr(0, 3) == pool);
  }
}

TEST_CASE("following a schedule starts new shares and stops preempted and evicted ones") {
  msg::workmap work;
  msg::work_item w;
  w.id = "j1";
  w.processes.push_back({"s1", "n1", msg::process_state::running, 0, 0, std::nullopt});
  w.processes.push_back({"s2", "n2", msg::process_state::running, 0, 0, std::nullopt});
  work.work.push_back(w);
  msg::rm_state state;
  msg::job_schedule j;
  j.id = "j1";
  j.shares = {{"s1", "n1", 1, msg::share_status::running, {}},
              {"s2", "n2", 1, msg::share_status::preempt, {}},
              {"s3", "n3", 1, msg::share_status::new_, {}}};
  state.jobs.push_back(j);
  CHECK(follow_schedule(work, state) == 2);  // s2 stopped, s3 started
  REQUIRE(work.work[0].processes.size() == 2);
  CHECK(work.work[0].processes[0].id == "s1");
  CHECK(work.work[0].processes[1].id == "s3");
  CHECK(work.work[0].processes[1].node == "n3");
  CHECK(follow_schedule(work, state) == 0);  // the same schedule again changes nothing
}
