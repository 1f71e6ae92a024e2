#pragma once
// What rmbus-web knows of a running RM, and the page's data derived from it.
//
// The folding of the bus into one picture is rmbus-top's (tools/top/monitor_model): the same snapshots
// replace each other, the same bounded event ring, the same staleness rule. This model adds what a web page
// needs beyond the terminal's tables:
// - the top-level nodepool of every job (from the nodes its shares are on; a job holding nothing takes the
//   pool of its class's other jobs), so the Overview can list pool -> class -> user -> job;
// - preemptions and evictions in the last minute per pool, summed from rm.cycle's per-round counts;
// - the shares on every node with their job, for the Machines table and the memory picture;
// - the HA beacon (rm.ha), when the RM sends one;
// - a running number per event, so the page can keep a longer history than one snapshot carries.
// snapshot_json() writes it all as one line of JSON (the page's only input); health_json() the small part
// that changes with time alone (ages, the stale marker), sent between snapshots.
//
// Times are milliseconds on the caller's clock (steady); the model reads no clock, so tests are exact.
// Thread-safety: none; one owner (rmbus-web guards it with a mutex).

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tools/top/monitor_model.hpp"
#include "tools/top/monitored_message.hpp"
#include "tools/web/ha_beacon.hpp"

namespace rmbus::web {

using millis = top::millis;

struct web_limits {
  top::model_limits monitor;
  std::size_t max_rounds_per_pool = 10000;  // rm.cycle records kept for the per-minute rates
  millis rate_window_ms = 60000;
};

// Everything rmbus-web reads off the bus: what rmbus-top reads, plus the HA beacon.
using web_message = std::variant<top::monitored_message, ha_beacon>;

// rm.state, rm.nodes, rm.cycle, rm.events and rm.ha: the subscription prefixes; with `schedule_changes`,
// rm.schedule.changes instead of rm.state (docs/protocol.md 4.3.1).
std::vector<std::string> web_topics(bool schedule_changes = false);
web_message decode_web(std::string_view topic, std::string_view body, const messages::decode_limits& limits = {});

// Preemptions and evictions a pool's rounds reported within the rate window; `span_ms` is how much of the
// window the monitor has seen (less than the window just after it started).
struct pool_rates {
  std::uint64_t preempted = 0;
  std::uint64_t evicted = 0;
  millis span_ms = 0;
};

// One row of the Overview at the user or class level: rmbus-top's sums over jobs (counts in processes; given
// is the awarded How Much count; below_fair_share() its rule; quanta are not summed here), and why it is
// below: the first reason (by job order) among its jobs that wait or are themselves short.
struct overview_row {
  std::string name;
  top::user_summary sums;
  std::string reason;
};

struct overview_user {
  overview_row row;
  std::vector<std::size_t> jobs;  // indexes into the job list (view_model::jobs())
};

struct overview_class {
  overview_row row;
  std::vector<overview_user> users;  // by name
};

struct overview_pool {
  std::string pool;  // "" gathers jobs whose pool is not known yet (nothing placed in their class)
  top::pool_summary nodes;
  pool_rates rates;
  std::vector<overview_class> classes;  // by name
};

// What snapshot_json() needs from outside the model.
struct snapshot_context {
  millis now_ms = 0;        // the model's clock
  std::int64_t wall_ms = 0;  // the server's wall clock, for the page to show times of day
  std::uint64_t seq = 0;    // the snapshot's number
  std::string endpoint;     // --bus-sub
  bool admin = false;       // explain is available (--admin given)
  std::int64_t last_build_ms = -1;  // what the previous snapshot took to build (-1: none yet)
  std::uint64_t last_bytes = 0;     // and its size
};

class view_model {
 public:
  explicit view_model(web_limits limits = {});

  void fold(web_message message, millis now_ms, const std::string& src,
            std::optional<std::uint64_t> sent_at_ms = std::nullopt);
  // A message the bus subscriber rejected (frames, envelope): listed, counted by the subscriber.
  void on_rejected(const std::string& what, millis now_ms);
  void set_bus(top::bus_health health);

  const top::monitor_model& monitor() const { return monitor_; }
  const std::optional<ha_beacon>& ha() const { return ha_; }
  // Bumped by every message folded: the page needs a new snapshot when it moved.
  std::uint64_t version() const { return version_; }
  std::uint64_t events_total() const { return events_total_; }

  pool_rates rates(const std::string& pool, millis now_ms) const;
  // The job list in rmbus-top's order (pending, refused, scheduled; by id) and each job's pool, same order.
  std::vector<top::job_row> jobs() const { return monitor_.jobs(); }
  std::vector<std::string> job_pools(const std::vector<top::job_row>& jobs) const;
  std::vector<overview_pool> overview(const std::vector<top::job_row>& jobs, const std::vector<std::string>& pools,
                                      millis now_ms) const;

  std::string snapshot_json(const snapshot_context& ctx) const;
  std::string health_json(const snapshot_context& ctx) const;

 private:
  struct round_counts {
    millis at_ms;
    std::uint64_t preempted, evicted;
  };

  web_limits limits_;
  top::monitor_model monitor_;
  std::optional<ha_beacon> ha_;
  std::string ha_src_;
  millis ha_at_ms_ = 0;
  std::map<std::string, std::deque<round_counts>> rounds_;
  std::optional<millis> first_cycle_at_ms_;
  std::uint64_t version_ = 0;
  std::uint64_t events_total_ = 0;
};

}  // namespace rmbus::web
