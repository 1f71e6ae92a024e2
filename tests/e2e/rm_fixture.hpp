#pragma once
// A running RM for end-to-end tests: a configuration file with short timings (heartbeat 300 ms), free loopback
// ports, the real `rmbus` executable started with fork/exec in one of two layouts, and a fake cluster
// (agents + orchestrator + observer) on its bus. Children are always killed at the end.
//
// Layouts: `single` is one process running every role with the embedded forwarder; `split` is two
// processes on one bus: A runs intake, diff, eviction, publisher, admin and the scheduler of pool alpha (with
// the embedded forwarder), B runs the scheduler of pool beta and connects to A's forwarder; `split_proxy` is
// the same two processes, both with --no-forwarder, meeting on a standalone rmbus-proxy (which outlives RM
// restarts). Every test scenario written against this fixture must pass in each.
//
// Every rmbus process serves its Prometheus metrics on a free loopback port of its own (`--metrics
// 127.0.0.1:<port>`, the same port again after a restart), so parallel tests never meet on the default 9464.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/child_process.hpp"
#include "tests/support/fake_cluster.hpp"

namespace rmbus::e2e {

enum class layout { single, split, split_proxy };

// Two top-level pools: alpha (a1..a4) and beta (b1, b2), every node 8 GB = order 8 at the 1 GB quantum.
// Classes: normal (FAIR_SHARE, alpha, default), beta-normal (FAIR_SHARE, beta), reserve (RESERVE, alpha,
// default), fixed (FIXED_SHARE, alpha). `extra` lines go into its [scheduling] and [timing] tables.
struct config_lines {
  std::string scheduling;  // e.g. "preemption_policy = \"sparing\"\n"
  std::string timing;      // e.g. "orchestrator_publish_ms = 200\n"
};
std::string test_config(const config_lines& extra = {});
// The sparing preemption policy, with the epoch at the fake orchestrator's 200 ms map period: sparing's waits are
// counted in epochs (DUCC's default epoch of 10 s would make its patience 300 s).
config_lines sparing_policy();

// Extra configuration: two share groups under class normal, physics (weight 3, user ann) and bio (weight 1,
// user bob).
std::string two_groups_config();

// Those nodes' quanta, for test_support::double_bookings().
const std::map<std::string, std::uint64_t>& node_quanta();

// A job for the fake orchestrator.
test_support::job_spec job(const std::string& id, const std::string& user, const std::string& cls, std::uint64_t mb,
                           std::uint64_t max_processes = 0, messages::work_kind kind = messages::work_kind::job);

// Where the processes run. By default everything is on loopback. For the two-host layout, `bus_host` is the
// address the forwarder binds (process A's side of a veth pair) and `b_wrapper` starts process B in another
// network namespace (e.g. {"/usr/sbin/ip", "netns", "exec", "NS"}).
struct placement_options {
  std::string bus_host = "127.0.0.1";
  std::vector<std::string> b_wrapper;
};

class rm_fixture {
 public:
  // `extra_config` is appended to test_config(lines) (new tables, e.g. "[health]\nenabled = true\n").
  explicit rm_fixture(layout how, placement_options where = {}, std::string extra_config = {},
                      const config_lines& lines = {});
  ~rm_fixture();

  void start_rm();             // (re)starts the RM process(es)
  void kill_rm(int sig);       // signals them all
  // Stops RM process `process` alone (SIGTERM, waited for) and starts it again with the same arguments; the
  // others run on. REQUIRES: a split layout, or process 0.
  void restart_rm_process(std::size_t process);
  std::vector<std::optional<int>> wait_rm(std::chrono::milliseconds timeout);
  test_support::run_result admin(const std::vector<std::string>& args);
  // The standalone forwarder of layout split_proxy: signalled and waited for, then started again on the
  // same two ports (the RM and the cluster reconnect by themselves). REQUIRES: layout split_proxy.
  void kill_proxy(int sig);
  void start_proxy();
  // pids for /proc readings: RM process `process` (0: single, or A; 1: B), and the standalone forwarder.
  pid_t rm_pid(std::size_t process = 0) const { return procs_.at(process)->pid(); }
  pid_t proxy_pid() const { return proxy_->pid(); }

  test_support::fake_cluster& cluster() { return *cluster_; }
  // The fake orchestrator publishes delta work maps (docs/protocol.md 4.2.1), a full map every
  // `full_map_every` periods. REQUIRES: the cluster not started yet (it is made anew, with the same nodes).
  void use_delta_maps(int full_map_every);
  // The same for any change of the cluster's options (e.g. schedule_changes). REQUIRES: not started.
  void remake_cluster(const std::function<void(test_support::cluster_options&)>& adjust);
  const std::string& admin_endpoint() const { return admin_; }
  const std::string& config_path() const { return config_; }
  const std::string& bus_pub() const { return pub_; }
  const std::string& bus_sub() const { return sub_; }
  const std::string& dir() const { return dir_; }
  // The metrics port of process `process` (0: the single process, or A of a split layout; 1: B).
  int metrics_port(std::size_t process = 0) const { return metrics_ports_.at(process); }
  // What the next start_rm() passes as --metrics to process A instead of 127.0.0.1:<metrics_port(0)>:
  // e.g. "off"; nullopt passes no --metrics at all (the configuration file decides).
  void set_metrics_option(std::optional<std::string> value) {
    metrics_option_ = std::move(value);
    metrics_option_set_ = true;
  }
  std::string log_file() const { return dir_ + "/rmbus.log"; }
  // Arguments the next start_rm() adds to every rmbus process (e.g. --inject-fault ...).
  void set_extra_args(std::vector<std::string> args) { extra_args_ = std::move(args); }

 private:
  std::uint64_t failed_before_ = 0;  // failed assertions of the process when the fixture was made
  layout how_;
  placement_options where_;
  std::string dir_, config_, pub_, sub_, admin_;
  std::vector<int> metrics_ports_;
  std::optional<std::string> metrics_option_;
  bool metrics_option_set_ = false;
  std::vector<std::string> extra_args_;
  std::vector<std::unique_ptr<test_support::child_process>> procs_;
  struct started_as {
    std::string path, log;
    std::vector<std::string> args;
  };
  std::vector<started_as> started_;  // how each of procs_ was started
  std::unique_ptr<test_support::child_process> proxy_;
  std::unique_ptr<test_support::fake_cluster> cluster_;
};

}  // namespace rmbus::e2e
