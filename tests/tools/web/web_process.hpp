#pragma once
// The real rmbus-web for tests: started with fork/exec on a free loopback port (--listen 127.0.0.1:0), the port
// read from its first line on stdout, stopped with SIGTERM at the end. Used by tests/tools/web/test_server.cpp
// and tests/e2e/test_web_e2e.cpp.
//
// REQUIRES: RMBUS_WEB_BIN names the rmbus-web executable; the test links cpp-httplib.

#include <httplib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <memory>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "tests/e2e/file_waits.hpp"
#include "tests/support/child_process.hpp"

#ifndef RMBUS_WEB_BIN
#error "RMBUS_WEB_BIN must name the rmbus-web executable"
#endif

namespace rmbus::test_support {

class web_process {
 public:
  // `log` receives rmbus-web's stdout and stderr.
  web_process(std::string log, std::vector<std::string> args) : log_(std::move(log)) {
    args.insert(args.end(), {"--listen", "127.0.0.1:0"});
    proc_ = std::make_unique<child_process>(RMBUS_WEB_BIN, args, log_);
    const std::regex serving{"rmbus-web: serving http://127\\.0\\.0\\.1:(\\d+)/"};
    REQUIRE(e2e::eventually(
        [&] {
          std::smatch m;
          const auto text = e2e::read_all(log_);
          if (!std::regex_search(text, m, serving)) return false;
          port_ = std::stoi(m[1]);
          return true;
        },
        std::chrono::seconds(20)));
  }
  ~web_process() {
    proc_->signal(SIGTERM);
    proc_->wait(std::chrono::seconds(10));
  }
  web_process(const web_process&) = delete;
  web_process& operator=(const web_process&) = delete;

  const std::string& log() const { return log_; }
  void signal(int sig) { proc_->signal(sig); }
  bool running() { return proc_->running(); }
  int port() const { return port_; }
  httplib::Client client() const {
    httplib::Client c{"127.0.0.1", port_};
    c.set_connection_timeout(2, 0);
    c.set_read_timeout(15, 0);
    return c;
  }
  // GET `path`: the status and body, or status 0 when nothing answered.
  std::pair<int, std::string> get(const std::string& path) const {
    auto c = client();
    const auto r = c.Get(path.c_str());
    return r ? std::pair{r->status, r->body} : std::pair{0, std::string{}};
  }

 private:
  std::string log_;
  std::unique_ptr<child_process> proc_;
  int port_ = 0;
};

}  // namespace rmbus::test_support
