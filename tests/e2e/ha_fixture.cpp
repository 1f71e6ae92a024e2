#include "tests/e2e/ha_fixture.hpp"

#include "tests/e2e/failed_assertions.hpp"

#include <csignal>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace rmbus::e2e {

std::string printed_value(const std::string& output, const std::string& key) {
  std::istringstream in(output);
  std::string line;
  const std::string prefix = "  " + key + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    auto v = line.substr(prefix.size());
    while (!v.empty() && v.front() == ' ') v.erase(0, 1);
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    return v;
  }
  return {};
}

ha_fixture::ha_fixture(ha_options opt) : opt_(std::move(opt)) {
  failed_before_ = failed_assertions();
  char tmpl[] = "/tmp/rmbus-ha-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  if (opt_.own_forwarders) {
    for (std::size_t i = 0; i < opt_.candidates; ++i) {
      own_pub_.push_back(test_support::loopback(test_support::free_port()));
      own_sub_.push_back(test_support::loopback(test_support::free_port()));
      pub_ += (i == 0 ? "" : ",") + own_pub_.back();
      sub_ += (i == 0 ? "" : ",") + own_sub_.back();
    }
  } else if (!opt_.hosts.empty()) {
    opt_.candidates = opt_.hosts.size();
    for (std::size_t i = 0; i < opt_.candidates; ++i) {
      host_pub_ports_.push_back(test_support::free_port());
      host_sub_ports_.push_back(test_support::free_port());
      const auto at = "tcp://" + opt_.hosts[i].address + ":";
      pub_ += (i == 0 ? "" : ",") + at + std::to_string(host_pub_ports_[i]);
      sub_ += (i == 0 ? "" : ",") + at + std::to_string(host_sub_ports_[i]);
    }
  } else if (opt_.forwarders > 1) {
    for (std::size_t k = 0; k < opt_.forwarders; ++k) {
      fwd_pub_.push_back(test_support::loopback(test_support::free_port()));
      fwd_sub_.push_back(test_support::loopback(test_support::free_port()));
      pub_ += (k == 0 ? "" : ",") + fwd_pub_.back();
      sub_ += (k == 0 ? "" : ",") + fwd_sub_.back();
    }
  } else {
    pub_ = "tcp://" + opt_.bus_host + ":" + std::to_string(test_support::free_port());
    sub_ = "tcp://" + opt_.bus_host + ":" + std::to_string(test_support::free_port());
  }
  for (std::size_t i = 0; i < opt_.candidates; ++i) {
    const auto host = host_of(i);
    admins_.push_back("tcp://" + host + ":" + std::to_string(test_support::free_port()));
    metrics_ports_.push_back(test_support::free_port());
    configs_.push_back(dir_ + "/rmbus-" + std::to_string(i) + ".toml");
    const int rank = i < opt_.ranks.size() ? opt_.ranks[i] : static_cast<int>(i);
    std::ofstream{configs_.back()} << test_config() << "\n[ha]\nenabled = true\nrank = " << rank << "\n"
                                   << opt_.ha_extra << "\n" << opt_.extra_config;
  }
  for (std::size_t i = 0; i < opt_.hosts.size(); ++i) {
    auto args = wrapper_of(i);
    args.insert(args.end(), {RMBUS_PROXY_BIN, "--bus-pub", "tcp://*:" + std::to_string(host_pub_ports_[i]),
                             "--bus-sub", "tcp://*:" + std::to_string(host_sub_ports_[i])});
    const auto path = args.front();
    args.erase(args.begin());
    host_proxies_.push_back(std::make_unique<test_support::child_process>(
        path, args, dir_ + "/proxy-" + std::to_string(i) + ".log"));
  }
  forwarders_.resize(fwd_pub_.size());
  for (std::size_t k = 0; k < fwd_pub_.size(); ++k) start_forwarder(k);
  if (!opt_.own_forwarders && opt_.hosts.empty() && fwd_pub_.empty())
    proxy_ = std::make_unique<test_support::child_process>(
        RMBUS_PROXY_BIN, std::vector<std::string>{"--bus-pub", pub_, "--bus-sub", sub_}, dir_ + "/proxy.log");
  procs_.resize(opt_.candidates);
  for (std::size_t i = 0; i < std::min(opt_.candidates, opt_.started); ++i) start(i);
  if (opt_.split) {
    scheduler_b_ = std::make_unique<test_support::child_process>(
        RMBUS_BIN,
        std::vector<std::string>{"--config", configs_[0], "--bus-pub", pub_, "--bus-sub", sub_, "--no-forwarder",
                                 "--roles", "scheduler:beta", "--metrics", "off"},
        dir_ + "/rmbus-b.log");
  }
  test_support::cluster_options co;
  co.bus_pub = pub_;
  co.bus_sub = sub_;
  co.period = std::chrono::milliseconds(200);
  co.name = "e2e-cluster";
  co.quantum_mb = 1024;  // the test configuration's quantum: the orchestrator counts nodes above their order
  cluster_ = std::make_unique<test_support::fake_cluster>(co);
  for (const char* n : {"a1", "a2", "a3", "a4", "b1", "b2"}) cluster_->add_node(n, 8192);
}

ha_fixture::~ha_fixture() {
  // A REQUIRE that failed is unwinding through here, or a CHECK failed: each candidate's log is printed
  // once they are stopped.
  const bool failed = std::uncaught_exceptions() > 0 || failed_assertions() > failed_before_;
  cluster_->stop();
  for (std::size_t i = 0; i < procs_.size(); ++i)
    if (procs_[i]) {
      procs_[i]->signal(SIGCONT);  // a test may leave one stopped
      procs_[i]->signal(SIGTERM);
    }
  for (auto& p : procs_)
    if (p) p->wait(std::chrono::seconds(10));
  procs_.clear();  // SIGKILLs whatever is left
  if (scheduler_b_) {
    scheduler_b_->signal(SIGTERM);
    scheduler_b_->wait(std::chrono::seconds(10));
    scheduler_b_.reset();
  }
  if (proxy_) host_proxies_.push_back(std::move(proxy_));
  for (auto& p : forwarders_)
    if (p) host_proxies_.push_back(std::move(p));
  for (auto& p : host_proxies_) {
    p->signal(SIGTERM);
    p->wait(std::chrono::seconds(10));
  }
  host_proxies_.clear();
  if (failed)
    for (std::size_t i = 0; i < candidates(); ++i) test_support::print_log_ends(log_file(i), 40, 60);
  if (std::getenv("RMBUS_KEEP") == nullptr) std::system(("rm -rf '" + dir_ + "'").c_str());
}

std::vector<std::string> ha_fixture::wrapper_of(std::size_t i) const {
  if (!opt_.hosts.empty()) return opt_.hosts.at(i).wrapper;
  return i == 0 ? opt_.wrapper0 : std::vector<std::string>{};
}

std::string ha_fixture::host_of(std::size_t i) const {
  if (!opt_.hosts.empty()) return opt_.hosts.at(i).address;
  return i == 0 ? opt_.host0 : std::string{"127.0.0.1"};
}

std::string ha_fixture::log_file(std::size_t i) const { return dir_ + "/rmbus-" + std::to_string(i) + ".log"; }

void ha_fixture::start(std::size_t i) {
  if (procs_.size() < opt_.candidates) procs_.resize(opt_.candidates);
  const auto host = host_of(i);
  std::vector<std::string> args{"--config", configs_.at(i), "--bus-pub", pub_, "--bus-sub", sub_, "--no-forwarder",
                                "--admin", admins_.at(i), "--metrics", host + ":" + std::to_string(metrics_ports_.at(i))};
  if (opt_.own_forwarders) {
    // Its own forwarder first (bound there), then every other candidate's (connected to).
    auto own_first = [&](const std::vector<std::string>& eps) {
      std::string list = eps.at(i);
      for (std::size_t k = 0; k < eps.size(); ++k)
        if (k != i) list += "," + eps[k];
      return list;
    };
    args = {"--config", configs_.at(i), "--bus-pub", own_first(own_pub_), "--bus-sub", own_first(own_sub_),
            "--admin", admins_.at(i), "--metrics", host + ":" + std::to_string(metrics_ports_.at(i))};
  }
  if (!opt_.hosts.empty()) {
    // Its own proxy on its loopback first, then every other candidate's over the direct link.
    std::string pub = "tcp://127.0.0.1:" + std::to_string(host_pub_ports_[i]);
    std::string sub = "tcp://127.0.0.1:" + std::to_string(host_sub_ports_[i]);
    for (std::size_t k = 0; k < opt_.candidates; ++k)
      if (k != i) {
        pub += ",tcp://" + opt_.hosts[i].peers.at(k) + ":" + std::to_string(host_pub_ports_[k]);
        sub += ",tcp://" + opt_.hosts[i].peers.at(k) + ":" + std::to_string(host_sub_ports_[k]);
      }
    args[3] = pub;
    args[5] = sub;
  }
  if (!fwd_pub_.empty() && i < opt_.reach.size() && !opt_.reach[i].empty()) {
    std::string pub, sub;
    for (const auto k : opt_.reach[i]) {
      pub += (pub.empty() ? "" : ",") + fwd_pub_.at(k);
      sub += (sub.empty() ? "" : ",") + fwd_sub_.at(k);
    }
    args[3] = pub;
    args[5] = sub;
  }
  if (opt_.split) args.insert(args.end(), {"--roles", "intake,diff,eviction,publisher,admin,scheduler:alpha"});
  // Appends to its log, so a restarted candidate's earlier life stays readable.
  const auto log = log_file(i);
  procs_[i].reset();
  std::string path = RMBUS_BIN;
  if (const auto wrapper = wrapper_of(i); !wrapper.empty()) {
    args.insert(args.begin(), RMBUS_BIN);
    args.insert(args.begin(), wrapper.begin() + 1, wrapper.end());
    path = wrapper.front();
  }
  procs_[i] = std::make_unique<test_support::child_process>(path, args, log);
}

void ha_fixture::start_forwarder(std::size_t k) {
  forwarders_.at(k).reset();
  forwarders_[k] = std::make_unique<test_support::child_process>(
      RMBUS_PROXY_BIN, std::vector<std::string>{"--bus-pub", fwd_pub_.at(k), "--bus-sub", fwd_sub_.at(k)},
      dir_ + "/proxy-" + std::to_string(k) + ".log");
}

void ha_fixture::stop_forwarder(std::size_t k) {
  auto& p = forwarders_.at(k);
  if (!p) return;
  p->signal(SIGTERM);
  p->wait(std::chrono::seconds(10));
  p.reset();
}

void ha_fixture::signal(std::size_t i, int sig) { procs_.at(i)->signal(sig); }

std::optional<int> ha_fixture::wait(std::size_t i, std::chrono::milliseconds timeout) {
  return procs_.at(i)->wait(timeout);
}

bool ha_fixture::running(std::size_t i) const { return procs_.at(i) && ::kill(procs_.at(i)->pid(), 0) == 0; }

pid_t ha_fixture::pid(std::size_t i) const { return procs_.at(i)->pid(); }

test_support::run_result ha_fixture::admin(std::size_t i, const std::vector<std::string>& args) {
  std::vector<std::string> all{"--admin", admins_.at(i), "--timeout-ms", "3000"};
  all.insert(all.end(), args.begin(), args.end());
  return test_support::run_to_end(RMBUS_ADMIN_BIN, all, std::chrono::seconds(10));
}

std::string json_value(const std::string& output, const std::string& key) {
  const auto j = nlohmann::json::parse(output, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains(key)) return {};
  const auto& v = j.at(key);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string ha_fixture::status_value(std::size_t i, const std::string& key) {
  return json_value(admin(i, {"--json", "status"}).output, key);
}

std::optional<std::size_t> ha_fixture::wait_active(std::chrono::milliseconds timeout, std::string* instance) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int round = 0; round < 1000 && std::chrono::steady_clock::now() < deadline; ++round) {
    for (std::size_t i = 0; i < opt_.candidates; ++i) {
      if (!running(i)) continue;
      const auto out = admin(i, {"--json", "status"}).output;
      if (json_value(out, "role") == "active") {
        if (instance) *instance = json_value(out, "instance");
        return i;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return std::nullopt;
}

}  // namespace rmbus::e2e
