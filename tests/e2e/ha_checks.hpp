#pragma once
// What the HA end-to-end tests read and check around a failover, shared by test_ha_e2e and
// test_ha_two_forwarders_e2e: work running as the fencing orchestrator reports it, every process recovered
// under its share id, and the fence (no schedule of an old epoch acted on once a newer one was).

#include <httplib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "tests/e2e/file_waits.hpp"
#include "tests/e2e/ha_fixture.hpp"

namespace rmbus::e2e {

// The value of an unlabelled metric in candidate i's /metrics, as Prometheus would scrape it; nullopt if
// absent.
inline std::optional<double> metric(const ha_fixture& f, std::size_t i, const std::string& name) {
  httplib::Client c{"127.0.0.1", f.metrics_port(i)};
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(5, 0);
  auto res = c.Get("/metrics");
  if (!res || res->status != 200) return std::nullopt;
  const auto at = res->body.find("\n" + name + " ");
  if (at == std::string::npos) return std::nullopt;
  return std::stod(res->body.substr(at + name.size() + 2));
}

// Three jobs over both pools, every process running as the orchestrator reports it; returns share id -> node.
inline std::map<std::string, std::string> running_work(ha_fixture& f, std::chrono::milliseconds timeout) {
  namespace ts = test_support;
  namespace msg = messages;
  auto& c = f.cluster();
  c.submit(job("alice-1", "alice", "normal", 1024, 12));
  c.submit(job("bob-1", "bob", "normal", 2048, 6));
  c.submit(job("carol-1", "carol", "beta-normal", 2048, 3));
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) {
        return ts::active_shares(s, "alice-1") == 12 && ts::active_shares(s, "bob-1") == 6 &&
               ts::active_shares(s, "carol-1") == 3;
      },
      timeout));
  // One more round, so that the orchestrator's map shows every process the RM gave.
  REQUIRE(c.wait_state([](const msg::rm_state&) { return true; }, timeout));
  std::map<std::string, std::string> running;
  for (const auto& w : c.workmap().work)
    for (const auto& p : w.processes) running[p.id] = p.node;
  REQUIRE(running.size() == 21);
  return running;
}

// Every process in `running` listed on its node, still running (never `new`), in `s`.
inline std::size_t recovered(const messages::rm_state& s, const std::map<std::string, std::string>& running) {
  std::size_t found = 0;
  for (const auto& j : s.jobs)
    for (const auto& sh : j.shares) {
      auto it = running.find(sh.id);
      if (it != running.end() && it->second == sh.node && sh.status == messages::share_status::running)
        ++found;
    }
  return found;
}

// The first rm.state the orchestrator acted on with an epoch above `epoch`, waited for; its position in
// acted().
inline std::optional<std::size_t> first_acted_above(test_support::fake_cluster& c, std::uint64_t epoch,
                                                    std::chrono::milliseconds timeout) {
  std::optional<std::size_t> at;
  eventually(
      [&] {
        const auto acted = c.acted();
        for (std::size_t i = 0; i < acted.size(); ++i)
          if (acted[i].epoch > epoch) {
            at = i;
            return true;
          }
        return false;
      },
      timeout);
  return at;
}

// The fence held: the epochs acted on never go down, and from `first_new` on none is `old_epoch`.
inline void check_fenced(test_support::fake_cluster& c, std::uint64_t old_epoch, std::size_t first_new) {
  const auto acted = c.acted();
  for (std::size_t i = 1; i < acted.size(); ++i) CHECK(acted[i].epoch >= acted[i - 1].epoch);
  for (std::size_t i = first_new; i < acted.size(); ++i) CHECK(acted[i].epoch != old_epoch);
}

}  // namespace rmbus::e2e
