#pragma once
// What one rmbus process sees, as Prometheus metrics: the arithmetic behind the metrics actor
// (actors/metrics.cpp) and the scrape-time copy of the bus subscriber's statistics, without CAF.
//
// Decides:
//  - jobs and processes per class and status, and quanta awarded (given x order) and demanded
//    (demand x order) per class, from each complete rm.state this process publishes (read from the tally
//    publication keeps beside it, messages/schedule_tally.hpp, else counted from its jobs); a job's order is
//    its memory_mb divided by the quantum of its class's top-level nodepool (from the configuration), or the
//    quanta of its first share when its class is unknown here;
//  - round durations per pool and phase from rm.cycle;
//  - preemptions and evictions by reason, and events by kind, from rm.events;
//  - heartbeats received, and late, as the heartbeat intake counted them in its node_changes batches (it
//    decodes every heartbeat anyway; metrics never decode one again). Late: arriving more than 1.5 heartbeat
//    intervals after the node's previous one (agents send once per interval, so a strict "more than one
//    interval" would call half of a healthy cluster's heartbeats late through jitter alone);
//  - heartbeats missed, from the nodes' `missed` (heartbeats missed in a row) in those batches: every
//    increase of a node's number is counted once;
//  - nodes forgotten (down longer than [limits] forget_down_ms), from those batches' `forgotten` lists;
//  - heartbeats shed by the bus subscriber beyond [limits] max_heartbeats_queued, from its statistics;
//  - nodes by state from rm.nodes;
//  - resident memory, round lag, free space where it logs and mailbox depths from its `health` events, and
//    finished jobs and their quanta-seconds from its `job_done` events (a number that does not parse is
//    skipped, never guessed).
// The metric names, types, labels and help texts are all in rm_metric_families (docs/metrics.md lists them).
//
// Untrusted input: node names and topics come off the bus, so the per-node table is bounded
// (max_tracked_nodes; nodes beyond it are not judged missed) and the per-topic series
// too (max_topics; the rest are summed under topic="(other)"). Label values are bounded by the registry.
//
// Thread-safety: rm_metrics belongs to one thread (the metrics actor), bus_metrics to another (the scrape,
// one at a time); both record through the registry, which is thread-safe.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bus/subscriber.hpp"
#include "config/rm_config.hpp"
#include "messages/internal/node_changes.hpp"
#include "messages/rm_cycle.hpp"
#include "messages/rm_event.hpp"
#include "messages/rm_nodes.hpp"
#include "messages/rm_state.hpp"
#include "metrics/metrics_registry.hpp"

namespace rmbus::actors {

// Every family this process exports, registered once in one registry.
struct rm_metric_families {
  explicit rm_metric_families(metrics::metrics_registry& registry);

  metrics::gauge up;
  metrics::gauge build_info;
  metrics::histogram round_duration_us;
  metrics::counter rounds;
  metrics::gauge state_last_seq;
  metrics::gauge jobs;
  metrics::gauge processes;
  metrics::gauge quanta_awarded;
  metrics::gauge quanta_demanded;
  metrics::counter preemptions;
  metrics::counter evictions;
  metrics::counter events;
  metrics::counter heartbeats_received;
  metrics::counter heartbeats_late;
  metrics::counter heartbeats_missed;
  metrics::counter nodes_forgotten;
  metrics::counter heartbeats_shed;
  metrics::gauge nodes;
  metrics::counter bus_messages;
  metrics::counter bus_gaps;
  metrics::counter bus_missing;
  metrics::counter bus_restarts;
  metrics::counter bus_untracked;
  metrics::counter bus_duplicates;
  metrics::counter bus_late;
  metrics::counter bus_bad_messages;
  // From this process's own `health` events ([health] enabled) and `job_done` events ([accounting] enabled).
  metrics::gauge resident_memory_bytes;
  metrics::gauge round_lag_ms;
  metrics::gauge log_disk_free_bytes;
  metrics::gauge mailbox_depth;
  metrics::counter jobs_finished;
  metrics::counter job_quanta_seconds;
  metrics::counter bus_refused;
  metrics::counter bus_shed;
  // HA: from this process's own ha_takeover, ha_demoted, ha_handover and ha_rank_conflict events.
  metrics::gauge ha_role;
  metrics::gauge ha_epoch;
  metrics::counter ha_takeovers;
  metrics::counter ha_rank_conflicts;
  metrics::counter guard_refusals;
  metrics::counter over_order_repairs;
};

struct rm_metrics_settings {
  std::map<std::string, std::uint64_t> quantum_mb_by_class;  // class -> quantum of its top-level nodepool
  std::size_t max_tracked_nodes = 65536;
};

rm_metrics_settings rm_metrics_settings_of(const config::rm_config& cfg);

class rm_metrics {
 public:
  rm_metrics(std::shared_ptr<const rm_metric_families> families, rm_metrics_settings settings);
  void reconfigure(rm_metrics_settings settings);

  // A complete rm.state this process published, with its envelope's seq.
  void on_state(const messages::rm_state& state, std::uint64_t seq);
  void on_cycle(const messages::rm_cycle& cycle);
  void on_nodes(const messages::rm_nodes& nodes);
  void on_event(const messages::rm_event& event);
  // A batch of the intake's node changes (rm.internal.nodestate) published by this process.
  void on_node_changes(const messages::node_changes& batch);

 private:
  void on_health(const messages::rm_event& event);
  void on_job_done(const messages::rm_event& event);
  void on_ha(const messages::rm_event& event);

  std::shared_ptr<const rm_metric_families> f_;
  rm_metrics_settings settings_;
  std::map<std::string, std::uint64_t> missed_;  // node -> heartbeats missed in a row, when not 0
};

class bus_metrics {
 public:
  explicit bus_metrics(std::shared_ptr<const rm_metric_families> families, std::size_t max_topics = 200);
  // Copies the subscriber's totals into the counters (they only grow while the process runs).
  void update(const bus::subscriber_stats& stats);
  // CURVE (docs/bus.md "Security"): messages the embedded forwarder dropped for their sender's role, and
  // connections its ZAP handler refused.
  void update_refused(std::uint64_t by_role, std::uint64_t by_key);
  // Repeated heartbeats the embedded forwarder shed (docs/bus.md "Shedding repeats").
  void update_shed(std::uint64_t shed);

 private:
  std::shared_ptr<const rm_metric_families> f_;
  std::size_t max_topics_;
  std::set<std::string> exported_;  // topics with a series of their own, first come first served
};

}  // namespace rmbus::actors
