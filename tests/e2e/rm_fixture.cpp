#include "tests/e2e/rm_fixture.hpp"

#include "tests/e2e/failed_assertions.hpp"

#include <csignal>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include <unistd.h>

namespace rmbus::e2e {

config_lines sparing_policy() { return {"preemption_policy = \"sparing\"\n", "orchestrator_publish_ms = 200\n"}; }

std::string test_config(const config_lines& extra) {
  return R"toml(
[scheduling]
quantum = "1G"
)toml" + extra.scheduling + R"toml(

[timing]
heartbeat_interval_ms = 300
node_stability = 4
init_stability = 2
round_timeout_ms = 3000
)toml" + extra.timing + R"toml(

[log]
level = "info"

[[nodepool]]
name = "alpha"
nodes = ["a1", "a2", "a3", "a4"]

[[nodepool]]
name = "beta"
nodes = ["b1", "b2"]

[[class]]
name = "normal"
policy = "FAIR_SHARE"
nodepool = "alpha"
priority = 10
weight = 100
default = true

[[class]]
name = "beta-normal"
policy = "FAIR_SHARE"
nodepool = "beta"
priority = 10
weight = 100

[[class]]
name = "fixed"
policy = "FIXED_SHARE"
nodepool = "alpha"
priority = 5
default = true

[[class]]
name = "reserve"
policy = "RESERVE"
nodepool = "alpha"
priority = 1
default = true
)toml";
}

std::string two_groups_config() {
  return "[[group]]\nname = \"physics\"\nparent = \"normal\"\nweight = 3\nusers = [\"ann\"]\n\n"
         "[[group]]\nname = \"bio\"\nparent = \"normal\"\nweight = 1\nusers = [\"bob\"]\n";
}

const std::map<std::string, std::uint64_t>& node_quanta() {
  static const std::map<std::string, std::uint64_t> quanta{{"a1", 8}, {"a2", 8}, {"a3", 8}, {"a4", 8}, {"b1", 8}, {"b2", 8}};
  return quanta;
}

test_support::job_spec job(const std::string& id, const std::string& user, const std::string& cls, std::uint64_t mb,
                           std::uint64_t max_processes, messages::work_kind kind) {
  test_support::job_spec j;
  j.id = id;
  j.user = user;
  j.class_name = cls;
  j.memory_mb = mb;
  j.max_processes = max_processes;
  j.kind = kind;
  return j;
}

rm_fixture::rm_fixture(layout how, placement_options where, std::string extra_config, const config_lines& lines)
    : how_(how), where_(std::move(where)) {
  failed_before_ = failed_assertions();
  char tmpl[] = "/tmp/rmbus-e2e-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  config_ = dir_ + "/rmbus.toml";
  std::ofstream{config_} << test_config(lines) << extra_config;
  pub_ = "tcp://" + where_.bus_host + ":" + std::to_string(test_support::free_port());
  sub_ = "tcp://" + where_.bus_host + ":" + std::to_string(test_support::free_port());
  admin_ = test_support::loopback(test_support::free_port());
  metrics_ports_ = {test_support::free_port(), test_support::free_port()};
  if (how_ == layout::split_proxy) start_proxy();
  start_rm();
  test_support::cluster_options co;
  co.bus_pub = pub_;
  co.bus_sub = sub_;
  co.period = std::chrono::milliseconds(200);
  co.name = "e2e-cluster";
  cluster_ = std::make_unique<test_support::fake_cluster>(co);
  for (const char* n : {"a1", "a2", "a3", "a4", "b1", "b2"}) cluster_->add_node(n, 8192);
}

void rm_fixture::remake_cluster(const std::function<void(test_support::cluster_options&)>& adjust) {
  test_support::cluster_options co;
  co.bus_pub = pub_;
  co.bus_sub = sub_;
  co.period = std::chrono::milliseconds(200);
  co.name = "e2e-cluster";
  adjust(co);
  cluster_ = std::make_unique<test_support::fake_cluster>(co);
  for (const char* n : {"a1", "a2", "a3", "a4", "b1", "b2"}) cluster_->add_node(n, 8192);
}

void rm_fixture::use_delta_maps(int full_map_every) {
  remake_cluster([&](test_support::cluster_options& co) {
    co.deltas = true;
    co.full_map_every = full_map_every;
  });
}

rm_fixture::~rm_fixture() {
  cluster_->stop();
  // A REQUIRE that failed is unwinding through here, or a CHECK failed: say how each RM process ended and
  // what it logged, for a failure on a CI machine to be read from ctest's output alone.
  const bool failed = std::uncaught_exceptions() > 0 || failed_assertions() > failed_before_;
  if (failed) {
    for (std::size_t i = 0; i < procs_.size(); ++i) {
      const auto ended = procs_[i]->wait(std::chrono::milliseconds(0));
      std::cerr << "rm_fixture: RM process " << i << (ended ? " had exited with " + std::to_string(*ended) : " was running")
                << " when the test failed\n";
    }
  }
  kill_rm(SIGTERM);
  wait_rm(std::chrono::seconds(10));
  procs_.clear();  // SIGKILLs whatever is left
  if (proxy_) {
    proxy_->signal(SIGTERM);
    proxy_->wait(std::chrono::seconds(10));
    proxy_.reset();
  }
  if (failed) test_support::print_log_ends(log_file(), 40, 60);
  // RMBUS_KEEP set: the folder (configuration, logs of every process) stays for a failed test to be read.
  if (std::getenv("RMBUS_KEEP") == nullptr) std::system(("rm -rf '" + dir_ + "'").c_str());
}

void rm_fixture::start_rm() {
  procs_.clear();
  started_.clear();
  std::vector<std::string> common{"--config", config_, "--bus-pub", pub_, "--bus-sub", sub_, "--admin", admin_};
  common.insert(common.end(), extra_args_.begin(), extra_args_.end());
  auto metrics_of = [&](std::size_t process) -> std::vector<std::string> {
    if (process == 0 && metrics_option_set_)
      return metrics_option_ ? std::vector<std::string>{"--metrics", *metrics_option_} : std::vector<std::string>{};
    return {"--metrics", "127.0.0.1:" + std::to_string(metrics_ports_[process])};
  };
  auto a = common;
  for (auto& arg : metrics_of(0)) a.push_back(arg);
  if (how_ == layout::single) {
    started_.push_back({RMBUS_BIN, log_file(), a});
    procs_.push_back(std::make_unique<test_support::child_process>(RMBUS_BIN, a, log_file()));
    return;
  }
  a.insert(a.end(), {"--roles", "intake,diff,eviction,publisher,admin,scheduler:alpha"});
  if (how_ == layout::split_proxy) a.push_back("--no-forwarder");
  started_.push_back({RMBUS_BIN, log_file(), a});
  procs_.push_back(std::make_unique<test_support::child_process>(RMBUS_BIN, a, log_file()));
  auto b = common;
  b.insert(b.end(), {"--roles", "scheduler:beta", "--no-forwarder"});
  for (auto& arg : metrics_of(1)) b.push_back(arg);
  std::string path = RMBUS_BIN;
  if (!where_.b_wrapper.empty()) {
    b.insert(b.begin(), RMBUS_BIN);
    b.insert(b.begin(), where_.b_wrapper.begin() + 1, where_.b_wrapper.end());
    path = where_.b_wrapper.front();
  }
  started_.push_back({path, dir_ + "/rmbus-b.log", b});
  procs_.push_back(std::make_unique<test_support::child_process>(path, b, dir_ + "/rmbus-b.log"));
}

void rm_fixture::restart_rm_process(std::size_t process) {
  auto& p = procs_.at(process);
  p->signal(SIGTERM);
  p->wait(std::chrono::seconds(10));
  const auto& how = started_.at(process);
  p = std::make_unique<test_support::child_process>(how.path, how.args, how.log);
}

void rm_fixture::start_proxy() {
  proxy_ = std::make_unique<test_support::child_process>(
      RMBUS_PROXY_BIN, std::vector<std::string>{"--bus-pub", pub_, "--bus-sub", sub_}, dir_ + "/proxy.log");
}

void rm_fixture::kill_proxy(int sig) {
  proxy_->signal(sig);
  proxy_->wait(std::chrono::seconds(10));
}

void rm_fixture::kill_rm(int sig) {
  for (auto& p : procs_) p->signal(sig);
}

std::vector<std::optional<int>> rm_fixture::wait_rm(std::chrono::milliseconds timeout) {
  std::vector<std::optional<int>> out;
  for (auto& p : procs_) out.push_back(p->wait(timeout));
  return out;
}

test_support::run_result rm_fixture::admin(const std::vector<std::string>& args) {
  std::vector<std::string> all{"--admin", admin_, "--timeout-ms", "8000"};
  all.insert(all.end(), args.begin(), args.end());
  return test_support::run_to_end(RMBUS_ADMIN_BIN, all, std::chrono::seconds(20));
}

}  // namespace rmbus::e2e
