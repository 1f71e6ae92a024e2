#pragma once
// Two hosts on one machine for end-to-end tests: a network namespace joined to this one by a veth pair
// (10.251.x.1 here, 10.251.x.2 inside), removed with the pair at the end. Needs root and `ip netns`; `ok` says
// whether it was made (a test that cannot run says so and returns). `cut()` / `heal()` take this side of the
// pair down and up: the namespace is then cut off from everything here.

#include <string>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "tests/support/child_process.hpp"

namespace rmbus::e2e {

// Runs `ip ARGS...`; true when it exited 0.
inline bool ip(const std::vector<std::string>& args) {
  auto r = test_support::run_to_end("/usr/sbin/ip", args, std::chrono::seconds(20));
  if (r.status != std::optional<int>{0}) UNSCOPED_INFO("ip failed: " << r.output);
  return r.status == std::optional<int>{0};
}

struct two_hosts {
  std::string ns, host_a, host_b, va, vb;
  bool ok = false;
  two_hosts() {
    const int id = static_cast<int>(::getpid() % 200) + 20;
    ns = "rmbus-e2e-" + std::to_string(::getpid());
    va = "rmva" + std::to_string(::getpid() % 100000);
    vb = "rmvb" + std::to_string(::getpid() % 100000);
    host_a = "10.251." + std::to_string(id) + ".1";
    host_b = "10.251." + std::to_string(id) + ".2";
    if (::geteuid() != 0 || !ip({"netns", "add", ns})) return;
    ok = ip({"link", "add", va, "type", "veth", "peer", "name", vb}) && ip({"link", "set", vb, "netns", ns}) &&
         ip({"addr", "add", host_a + "/24", "dev", va}) && ip({"link", "set", va, "up"}) &&
         ip({"netns", "exec", ns, "ip", "addr", "add", host_b + "/24", "dev", vb}) &&
         ip({"netns", "exec", ns, "ip", "link", "set", vb, "up"}) && ip({"netns", "exec", ns, "ip", "link", "set", "lo", "up"});
  }
  ~two_hosts() {
    if (!ns.empty()) test_support::run_to_end("/usr/sbin/ip", {"netns", "del", ns}, std::chrono::seconds(20));
  }
  std::vector<std::string> wrapper() const { return {"/usr/sbin/ip", "netns", "exec", ns}; }
  bool cut() const { return ip({"link", "set", va, "down"}); }
  bool heal() const { return ip({"link", "set", va, "up"}); }
};

}  // namespace rmbus::e2e
