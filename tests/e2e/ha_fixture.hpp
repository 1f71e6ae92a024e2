#pragma once
// Several rmbus candidates with [ha] enabled on one bus, for the HA end-to-end tests: a standalone
// rmbus-proxy is the bus (so killing the active RM does not take the bus with it; the bus surviving its host
// is another part of issue 21), every candidate is a real `rmbus` with --no-forwarder, its own admin endpoint,
// metrics port, log and configuration file (rank i for candidate i), and a fake cluster (agents, a fencing
// orchestrator, an observer) on the proxy.
//
// Layouts: `single` (each candidate runs every role) and `split` (each candidate runs the head roles and
// pool alpha's scheduler; one process B, no candidate, runs pool beta's scheduler and serves whichever head
// is active). Uses rm_fixture's test configuration (heartbeat 300 ms), and HA's default timing (beacon
// 200 ms, takeover 1000 ms) unless `ha_extra` says otherwise.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/e2e/rm_fixture.hpp"

namespace rmbus::e2e {

struct ha_options {
  std::size_t candidates = 2;
  bool split = false;
  std::string ha_extra;       // more [ha] keys, e.g. "takeover_ms = 600\n"
  std::string extra_config;   // more tables appended to each configuration
  // Two hosts (network namespaces): the proxy binds on `bus_host`; candidate 0 runs under `wrapper0` (e.g.
  // {"/usr/sbin/ip", "netns", "exec", "NS"}) with its admin endpoint on `host0`. Default: all on loopback.
  std::string bus_host = "127.0.0.1";
  std::vector<std::string> wrapper0;
  std::string host0 = "127.0.0.1";
  // Two RM hosts, each with its forwarder (docs/bus.md "Several forwarders"): no rmbus-proxy; each candidate
  // runs its embedded forwarder, bound on the first endpoint of its --bus-pub / --bus-sub lists, and connects
  // to every candidate's; the cluster connects to all of them. Killing a candidate kills its forwarder too.
  bool own_forwarders = false;
  // One host (namespace) per candidate, for the partition test: candidate i runs under hosts[i].wrapper beside
  // its own rmbus-proxy (bound on every address of its namespace, reached there on 127.0.0.1), and connects to
  // every other candidate k's proxy at hosts[i].peers[k]; the cluster, rmbus-admin and the metrics reader
  // reach candidate i and its proxy at hosts[i].address. Empty: the layouts above.
  struct candidate_host {
    std::vector<std::string> wrapper;
    std::string address;
    std::vector<std::string> peers;
  };
  std::vector<candidate_host> hosts;
  // Several rmbus-proxy forwarders on loopback (more than one): candidate i connects to the forwarders listed
  // in reach[i] (to every one when reach[i] is absent or empty), the cluster to every one. Two candidates that
  // share no forwarder never hear each other while both reach the cluster: a partition between RM hosts
  // (issue 49's layout: candidate 0 on both of two, candidate 1 on the first, candidate 2 on the second).
  std::size_t forwarders = 1;
  std::vector<std::vector<std::size_t>> reach;
  // Candidate i's [ha] rank (default: i), and how many candidates the fixture starts itself (the others are
  // started by the test with start(i)).
  std::vector<int> ranks;
  std::size_t started = static_cast<std::size_t>(-1);
};

class ha_fixture {
 public:
  explicit ha_fixture(ha_options opt);
  ~ha_fixture();

  void start(std::size_t i);  // (re)starts candidate i
  void signal(std::size_t i, int sig);
  std::optional<int> wait(std::size_t i, std::chrono::milliseconds timeout);
  bool running(std::size_t i) const;
  pid_t pid(std::size_t i) const;
  // rmbus-admin against candidate i's admin endpoint.
  test_support::run_result admin(std::size_t i, const std::vector<std::string>& args);
  const std::string& admin_endpoint(std::size_t i) const { return admins_.at(i); }
  std::string log_file(std::size_t i) const;
  int metrics_port(std::size_t i) const { return metrics_ports_.at(i); }
  test_support::fake_cluster& cluster() { return *cluster_; }
  const std::string& dir() const { return dir_; }
  // The bus: the proxy's endpoints, or with own_forwarders the list of every candidate's forwarder.
  const std::string& bus_pub() const { return pub_; }
  const std::string& bus_sub() const { return sub_; }
  std::size_t candidates() const { return opt_.candidates; }
  // With several forwarders: stops forwarder k (SIGTERM) and starts it again on the same endpoints; clients
  // reconnect by themselves. Cutting the one forwarder two candidates share partitions them; starting it
  // heals them.
  void stop_forwarder(std::size_t k);
  void start_forwarder(std::size_t k);

  // The candidate `rmbus-admin status` calls active (parsed from its printed reply), and its instance name;
  // nullopt when none does within `timeout`.
  std::optional<std::size_t> wait_active(std::chrono::milliseconds timeout, std::string* instance = nullptr);
  // Field `key` of candidate i's `status` reply (rmbus-admin --json), e.g. "role", "epoch", "instance"; empty
  // when absent.
  std::string status_value(std::size_t i, const std::string& key);

 private:
  std::uint64_t failed_before_ = 0;  // failed assertions of the process when the fixture was made
  ha_options opt_;
  std::string dir_, pub_, sub_;
  std::vector<std::string> admins_, configs_;
  std::vector<std::string> own_pub_, own_sub_;  // own_forwarders: candidate i's forwarder
  std::vector<int> host_pub_ports_, host_sub_ports_;  // hosts: candidate i's proxy
  std::vector<std::unique_ptr<test_support::child_process>> host_proxies_;
  std::vector<std::string> fwd_pub_, fwd_sub_;  // forwarders > 1: forwarder k's endpoints
  std::vector<std::unique_ptr<test_support::child_process>> forwarders_;
  std::vector<std::string> wrapper_of(std::size_t i) const;
  std::string host_of(std::size_t i) const;
  std::vector<int> metrics_ports_;
  std::vector<std::unique_ptr<test_support::child_process>> procs_;
  std::unique_ptr<test_support::child_process> scheduler_b_;
  std::unique_ptr<test_support::child_process> proxy_;
  std::unique_ptr<test_support::fake_cluster> cluster_;
};

// Field `key` of what `rmbus-admin --json ...` printed (one JSON object: the RM's reply map), a string as is,
// anything else as JSON; empty when absent or unreadable. The text output is for people and lists only some
// of the fields (status: instance, cycle, uptime, pools).
std::string json_value(const std::string& output, const std::string& key);

// The value printed for `key` in rmbus-admin's output ("  key: value" lines); empty when absent.
std::string printed_value(const std::string& output, const std::string& key);

}  // namespace rmbus::e2e
