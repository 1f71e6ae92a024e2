#pragma once
// Three hosts on one machine for the HA partition tests: this one (the cluster: agents and orchestrator) and
// two network namespaces (one RM candidate each), joined pairwise by veth pairs, so that the link between the
// two candidates can be cut while each still reaches this side:
//
//   here 10.252.x.1 --- 10.252.x.2 ns[0]      here 10.253.x.1 --- 10.253.x.2 ns[1]
//                       ns[0] 10.254.x.1 --- 10.254.x.2 ns[1]
//
// Nothing leaves the machine: this side only gains the two pairs' ends, and the namespaces have no default
// route, so the candidates reach each other only over the direct pair. Needs root and
// `ip netns`; `ok` says whether it was made (a test that cannot run says so and returns).

#include <array>
#include <string>
#include <vector>

#include <unistd.h>

#include "tests/e2e/two_hosts.hpp"

namespace rmbus::e2e {

struct three_hosts {
  std::array<std::string, 2> ns;
  std::array<std::string, 2> outside;  // where this side reaches candidate i's namespace
  std::array<std::string, 2> peer;     // candidate i's address on the direct pair (the other reaches it there)
  std::string link0;                   // ns[0]'s end of the direct pair
  bool ok = false;

  three_hosts() {
    const auto pid = std::to_string(::getpid());
    const auto id = std::to_string(::getpid() % 200 + 20);
    const auto tag = std::to_string(::getpid() % 100000);
    for (int i = 0; i < 2; ++i) ns[i] = "rmbus-e2e-" + pid + "-" + std::to_string(i);
    outside = {"10.252." + id + ".2", "10.253." + id + ".2"};
    peer = {"10.254." + id + ".1", "10.254." + id + ".2"};
    link0 = "rmpc" + tag;
    if (::geteuid() != 0 || !ip({"netns", "add", ns[0]})) return;
    if (!ip({"netns", "add", ns[1]})) return;
    ok = join_here(0, "10.252." + id, "rmpa" + tag) && join_here(1, "10.253." + id, "rmpb" + tag) &&
         ip({"link", "add", link0, "type", "veth", "peer", "name", "rmpd" + tag}) &&
         ip({"link", "set", link0, "netns", ns[0]}) && ip({"link", "set", "rmpd" + tag, "netns", ns[1]}) &&
         in(0, {"ip", "addr", "add", peer[0] + "/24", "dev", link0}) && in(0, {"ip", "link", "set", link0, "up"}) &&
         in(1, {"ip", "addr", "add", peer[1] + "/24", "dev", "rmpd" + tag}) &&
         in(1, {"ip", "link", "set", "rmpd" + tag, "up"});
  }
  ~three_hosts() {
    // Deleting a namespace deletes the veth ends inside it, and with them their peers here.
    for (const auto& n : ns)
      if (!n.empty()) test_support::run_to_end("/usr/sbin/ip", {"netns", "del", n}, std::chrono::seconds(20));
  }
  std::vector<std::string> wrapper(int i) const { return {"/usr/sbin/ip", "netns", "exec", ns[i]}; }
  // The direct link between the candidates (their beacons); each keeps its link to this side.
  bool cut_peers() const { return in(0, {"ip", "link", "set", link0, "down"}); }
  bool heal_peers() const { return in(0, {"ip", "link", "set", link0, "up"}); }

 private:
  bool in(int i, std::vector<std::string> args) const {
    args.insert(args.begin(), {"netns", "exec", ns[i]});
    return ip(args);
  }
  // A veth pair from here (NET.1) into ns[i] (NET.2), with the namespace's loopback up.
  bool join_here(int i, const std::string& net, const std::string& here) const {
    const auto there = here + "n";
    return ip({"link", "add", here, "type", "veth", "peer", "name", there}) &&
           ip({"link", "set", there, "netns", ns[i]}) && ip({"addr", "add", net + ".1/24", "dev", here}) &&
           ip({"link", "set", here, "up"}) && in(i, {"ip", "addr", "add", net + ".2/24", "dev", there}) &&
           in(i, {"ip", "link", "set", there, "up"}) && in(i, {"ip", "link", "set", "lo", "up"});
  }
};

}  // namespace rmbus::e2e
